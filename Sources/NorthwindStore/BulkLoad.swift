import Foundation
import GRDB
import GRDBSQLite

/// How demo data and the classic import fill a store.
public struct BulkLoadOptions: Sendable {
    /// Whether a store that already holds data is cleared first; without it, such a store is refused with `refusal`.
    public var replace: Bool
    /// What to tell the user when the store holds data and `replace` is false.
    public var refusal: String
    /// Drop secondary indexes and per-row triggers for the load and rebuild them once at the end: worth it for
    /// millions of rows, where maintaining them row by row costs more than the rows.
    public var liftIndexes: Bool
    /// Pages the load may keep in memory until commit, in KiB; nil keeps SQLite's default.
    public var cacheKiB: Int?

    public init(replace: Bool, refusal: String, liftIndexes: Bool = false, cacheKiB: Int? = nil) {
        self.replace = replace
        self.refusal = refusal
        self.liftIndexes = liftIndexes
        self.cacheKiB = cacheKiB
    }
}

extension Store {
    /// The one way to fill a store in bulk: one write transaction that clears the store (or refuses one holding
    /// data), checks references once at commit since rows go in by batches, and runs `body`. A failure leaves
    /// the store as it was.
    public func bulkLoad<T>(_ options: BulkLoadOptions, _ body: (Database) throws -> T) throws -> T {
        try pool.write { db in
            if !options.replace, try !Store.isEmpty(db) {
                throw NorthwindError.invalidState(options.refusal)
            }
            try deleteAllData(db)
            if let cacheKiB = options.cacheKiB {
                // Negative cache sizes are in KiB.
                try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            }
            defer { if options.cacheKiB != nil { try? db.execute(sql: "PRAGMA cache_size = -2000") } }
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            return options.liftIndexes ? try Schema.bulkLoad(db) { try body(db) } : try body(db)
        }
    }
}

/// Inserts rows many at a time with one multi-row INSERT.
///
/// SQLite sets up trigger programs once per statement execution; one row per statement made that setup cost more
/// than the row itself.
public struct BulkInsert {
    let db: Database
    let prefix: String
    public let columns: Int
    let batch: Int
    private var buffer: [DatabaseValue] = []
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Rows for `table`, with values in the order of `columns`.
    public init(_ db: Database, into table: String, columns: [String], batch: Int = 256) {
        self.db = db
        self.prefix = "INSERT OR FAIL INTO \(table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")))"
        self.columns = columns.count
        self.batch = batch
        buffer.reserveCapacity(columns.count * batch)
    }

    /// Buffers one row; the buffer goes in when it holds `batch` rows, or at `flush`.
    public mutating func append(_ values: [(any DatabaseValueConvertible)?]) throws {
        for value in values { buffer.append(value?.databaseValue ?? .null) }
        if buffer.count == columns * batch { try flush() }
    }

    public mutating func flush() throws {
        try insert(buffer, rows: buffer.count / columns)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Inserts rows already converted (possibly by another thread) with one statement.
    public func insert(_ values: [DatabaseValue], rows: Int) throws {
        guard rows > 0 else { return }
        let tuple = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
        // OR FAIL: a constraint error still fails the whole load, but SQLite then needs no statement journal,
        // which would copy every page the batch touches.
        let sql =
            prefix + " VALUES "
            + Array(repeating: tuple, count: rows).joined(separator: ",")
        // Binds straight into SQLite's statement: GRDB's argument checks and conversions cost more than the
        // insert at millions of rows. The statement is still GRDB's, prepared and cached on this connection.
        let handle = try db.cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(handle)
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value.storage {
            case .null: sqlite3_bind_null(handle, position)
            case .int64(let n): sqlite3_bind_int64(handle, position, n)
            case .double(let d): sqlite3_bind_double(handle, position, d)
            case .string(let text): sqlite3_bind_text(handle, position, text, -1, Self.transient)
            case .blob(let data):
                _ = data.withUnsafeBytes { sqlite3_bind_blob(handle, position, $0.baseAddress, Int32($0.count), Self.transient) }
            }
        }
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}
