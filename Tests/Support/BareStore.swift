import Foundation
import GRDB
import GRDBSQLite
import NorthwindLoading
import Testing

@testable import Northwind
@testable import NorthwindStore

/// A store file opened through the bare SQLite C API, with none of the app's SQL functions: as the `sqlite3` tool,
/// a backup verifier or an administrator's script sees it.
final class BareStore {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            throw CLIError(description: "cannot open \(path)")
        }
    }

    /// Every text value of every row `sql` returns, or the error SQLite gave.
    func run(_ sql: String) -> Result<[String], CLIError> {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            return .failure(CLIError(description: String(cString: sqlite3_errmsg(handle))))
        }
        defer { sqlite3_finalize(statement) }
        var values: [String] = []
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: values.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            case SQLITE_DONE: return .success(values)
            default: return .failure(CLIError(description: String(cString: sqlite3_errmsg(handle))))
            }
        }
    }

    deinit { sqlite3_close(handle) }
}
