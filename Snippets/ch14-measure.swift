// Chapter 14: measure, don't guess. Our product lookup against the SQLite C API doing the same work, same run.
import Foundation
import GRDBSQLite
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("northwind.sqlite").path
let backoffice = try Backoffice.open(StoreConfiguration(path: path))

// guide: begin measure
let runs = 20_000
func time(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(runs) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}
// Ours: the domain layer, as the web app calls it.
var ourName = ""
let ours = try time {
    for i in 0..<runs { ourName = try backoffice.catalogue.product(id: Int64(1 + i % 77)).product.name }
}
// Bare: one prepared statement on a connection of its own, the same join, every column read.
var db: OpaquePointer?
sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil)
var statement: OpaquePointer?
sqlite3_prepare_v2(db, Catalogue.productRowSelect + " WHERE products.id = ?", -1, &statement, nil)
var bareName = ""
let bare = time {
    for i in 0..<runs {
        sqlite3_reset(statement)
        sqlite3_bind_int64(statement, 1, Int64(1 + i % 77))
        guard sqlite3_step(statement) == SQLITE_ROW else { fatalError(String(cString: sqlite3_errmsg(db))) }
        for column in 0..<sqlite3_column_count(statement) { _ = sqlite3_column_text(statement, column) }
        bareName = String(cString: sqlite3_column_text(statement, 2))
    }
}
sqlite3_finalize(statement)
sqlite3_close(db)
print(String(format: "Product lookup: ours %.0f/s, bare %.0f/s, ours/bare %.0f%%", ours, bare, 100 * ours / bare))
// guide: end measure
precondition(ourName == bareName && !ourName.isEmpty, "both read the same product")
