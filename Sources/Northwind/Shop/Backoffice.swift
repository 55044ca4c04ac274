import Foundation
import GRDB
import NorthwindStore

/// The domain layer: every operation the shop floor, the web app, reports and sync perform on a store.
///
/// Each public write is validated and runs in exactly one transaction, so a failure leaves the store as it was.
///
///     let backoffice = try Backoffice.open(StoreConfiguration(path: "northwind.sqlite"))
///     let order = try await backoffice.executeOrder(number: "10248")
///
/// Lookups by key and search are synchronous: they take microseconds. Every other read is `async` and runs on a
/// reader thread; writes are `async` too, as they may wait for the write lock and the disk.
public struct Backoffice: Sendable {
    public let store: Store

    public init(store: Store) { self.store = store }

    // MARK: Transactions

    /// Runs `body` in one write transaction and translates database errors into `NorthwindError`. The change-log
    /// entries it made are stamped with one transaction number, so that sync uploads them as one atomic batch.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(NorthwindError) -> T {
        do {
            return try await store.pool.write { db in
                let before = try Int64.fetchOne(db.cachedStatement(sql: "SELECT ifnull(max(seq), 0) FROM change_log")) ?? 0
                let result = try body(db)
                try db.cachedStatement(sql: "UPDATE change_log SET txn = ? WHERE seq > ?").execute(arguments: [before + 1, before])
                return result
            }
        } catch {
            throw NorthwindError.translating(error)
        }
    }

    /// Reads in one isolated transaction on one of GRDB's reader threads, never on Swift's cooperative pool: it has
    /// one thread per core, so a read that takes milliseconds there stalls every other request. Cancelling the task
    /// interrupts the statement.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(NorthwindError) -> T {
        do {
            return try await store.pool.read(body)
        } catch {
            throw NorthwindError.translating(error)
        }
    }

    /// A read of exactly one SQL statement, on the hot-path connections (see `QuickReaders`), on the caller's thread.
    /// Only for reads bounded to a few rows by a key or a small LIMIT: there the thread hop of `read` would cost more
    /// than the read.
    func quickRead<T>(_ body: (Database) throws -> T) throws(NorthwindError) -> T {
        do {
            return try store.quick.read(body)
        } catch {
            throw NorthwindError.translating(error)
        }
    }
}

/// Fetches one record with a prepared statement kept for reuse: hot paths avoid recompiling SQL.
func fetchOne<R: FetchableRecord>(_ type: R.Type, _ db: Database, sql: String, _ arguments: StatementArguments) throws -> R? {
    try R.fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
}

func fetchAll<R: FetchableRecord>(_ type: R.Type, _ db: Database, sql: String, _ arguments: StatementArguments) throws -> [R] {
    try R.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
}

/// One page of a list, with the total number of matching rows so a UI can show pages.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var total: Int
    public var offset: Int
    public var limit: Int
    public init(items: [Item], total: Int, offset: Int, limit: Int) {
        self.items = items
        self.total = total
        self.offset = offset
        self.limit = limit
    }

    /// The same page with each item transformed, e.g. into its wire shape.
    public func map<T>(_ transform: (Item) throws -> T) rethrows -> Page<T> {
        Page<T>(items: try items.map(transform), total: total, offset: offset, limit: limit)
    }
}
extension Page: Encodable where Item: Encodable {}

extension Array where Element == NorthwindError.FieldError {
    /// Throws when any field failed, so validation reads as a list of checks.
    public func throwIfAny() throws(NorthwindError) {
        if !isEmpty { throw .invalid(self) }
    }
}

func checkPaging(limit: Int, offset: Int) throws(NorthwindError) {
    try [Limits.check(limit, Limits.pageSize, "limit"), Limits.check(offset, Limits.offset, "offset")]
        .compactMap { $0 }.throwIfAny()
}

/// Trims text fields and turns blank optional ones into nil, so "  " never reaches the store.
func clean(_ text: String?) -> String? {
    guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
    return trimmed
}
