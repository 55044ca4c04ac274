import Foundation
import GRDBSQLite
import Northwind
import NorthwindLoading
import NorthwindStore

/// A bare SQLite C API connection: the benchmark's baseline, with no GRDB, no records and no async hops.
final class BareSQLite {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// `settings` are PRAGMA statements run after the store's own, to measure another choice.
    init(path: String, settings: [String] = []) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchError("cannot open \(path)")
        }
        sqlite3_busy_timeout(handle, 10_000)
        // The same settings as the store's reader connections, so that the comparison measures code, not
        // configuration. (The store's writer keeps temp_store = MEMORY for bulk loads; the bare orders are too small
        // for it to matter.)
        try exec("PRAGMA foreign_keys = ON")
        try exec("PRAGMA synchronous = FULL")  // as the store sets its writer: every commit reaches the disk
        try exec("PRAGMA mmap_size = \(Store.mmapSize)")
        for setting in settings { try exec(setting) }
        registerLineAmountFunction()
        registerReportFunctions()
    }

    /// The reports' two functions through the C API, with the store's arithmetic and folding, so both sides of the
    /// reports bench compute the same thing.
    private func registerReportFunctions() {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(
            handle,
            "f32",
            1,
            flags,
            nil,
            { context, _, arguments in
                guard let value = arguments?[0], sqlite3_value_type(value) != SQLITE_NULL else { return sqlite3_result_null(context) }
                sqlite3_result_double(context, Double(Float(sqlite3_value_double(value))))
            },
            nil,
            nil,
            nil
        )
        // The store's own C function: both sides pay the same for a sort key.
        ReportFunctions.addSQLServerKey(to: handle)
    }

    /// The store's line-amount function through the C API: its triggers refuse order lines without it. Same
    /// arithmetic as the store's, so both sides compute the same thing.
    private func registerLineAmountFunction() {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(
            handle,
            "sqlserver_line_cents",
            3,
            flags,
            nil,
            { context, _, arguments in
                guard let arguments, let price = arguments[0], let quantity = arguments[1], let discount = arguments[2] else { return }
                guard
                    let cents = ReportFunctions.extendedPriceCents(
                        unitPriceCents: sqlite3_value_int64(price),
                        quantity: sqlite3_value_int64(quantity),
                        discount: sqlite3_value_double(discount)
                    )
                else { return sqlite3_result_null(context) }
                sqlite3_result_int64(context, cents)
            },
            nil,
            nil,
            nil
        )
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// SQLite's online backup of the whole database into a new file at `path`, in one step.
    func backup(to path: String) throws {
        var destination: OpaquePointer?
        guard sqlite3_open_v2(path, &destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchError("cannot open \(path)")
        }
        defer { sqlite3_close_v2(destination) }
        guard let backup = sqlite3_backup_init(destination, "main", handle, "main") else {
            throw BenchError(String(cString: sqlite3_errmsg(destination)))
        }
        let stepped = sqlite3_backup_step(backup, -1)
        sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw BenchError("backup step: \(String(cString: sqlite3_errstr(stepped)))") }
    }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError(String(cString: sqlite3_errmsg(handle))) }
    }

    /// A cached prepared statement, reset and with its bindings cleared.
    func statement(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError(String(cString: sqlite3_errmsg(handle)))
        }
        statements[sql] = statement
        return statement
    }

    func bind(_ statement: OpaquePointer, _ values: [Any?]) {
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case let value as Int: sqlite3_bind_int64(statement, position, Int64(value))
            case let value as Int64: sqlite3_bind_int64(statement, position, value)
            case let value as Double: sqlite3_bind_double(statement, position, value)
            case let value as String: sqlite3_bind_text(statement, position, value, -1, Self.transient)
            default: sqlite3_bind_null(statement, position)
            }
        }
    }

    /// Runs a statement and reads every column of every row, as a caller that uses the results would.
    @discardableResult
    func run(_ sql: String, _ values: Any?...) throws -> [[Any?]] {
        let statement = try statement(sql)
        bind(statement, values)
        return try rows(statement)
    }

    /// The same, with `:name` parameters; those the statement lacks are ignored, and those not given are NULL.
    /// `limit` stops stepping after that many rows, as a page that shows only its first rows does.
    @discardableResult
    func run(_ sql: String, named values: [String: Any], limit: Int = .max) throws -> [[Any?]] {
        let statement = try statement(sql)
        for (name, value) in values {
            let position = sqlite3_bind_parameter_index(statement, ":" + name)
            guard position > 0 else { continue }
            switch value {
            case let value as Int: sqlite3_bind_int64(statement, position, Int64(value))
            case let value as String: sqlite3_bind_text(statement, position, value, -1, Self.transient)
            default: sqlite3_bind_null(statement, position)
            }
        }
        return try rows(statement, limit: limit)
    }

    private func rows(_ statement: OpaquePointer, limit: Int = .max) throws -> [[Any?]] {
        var rows: [[Any?]] = []
        while rows.count < limit {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw BenchError(String(cString: sqlite3_errmsg(handle))) }
            let count = sqlite3_column_count(statement)
            var row: [Any?] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: row.append(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: row.append(String(cString: sqlite3_column_text(statement, column)))
                case SQLITE_BLOB: row.append(sqlite3_column_bytes(statement, column))
                default: row.append(nil)
                }
            }
            rows.append(row)
        }
        return rows
    }

    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
