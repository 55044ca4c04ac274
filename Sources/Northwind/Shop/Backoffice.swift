import Foundation
import GRDB
import NorthwindStore

/// One opened store and the domain's features over it: `catalogue`, `records`, `people`, `accounts`, `orders`,
/// `quotes`, `stock`, `documents`, `reports`, `settings`, `backups`, `setup` and `sync` (`Features.swift`). It holds
/// the transaction paths they share, and no domain method of its own.
///
/// Each public write is validated and runs in exactly one transaction, so a failure leaves the store as it was.
///
///     let backoffice = try Backoffice.open(StoreConfiguration(path: "northwind.sqlite"))
///     let order = try await backoffice.orders.execute(number: "10248")
///
/// Lookups by key and search are synchronous: they take microseconds. Every other read is `async` and runs on a
/// reader thread unless it was measured cheap (see `measuredRead`); writes are `async` too, as they may wait for the
/// write lock and the disk. `Backoffice.open` (in NorthwindLoading) opens or makes a store, and seeds demo data into
/// a new one unless told not to.
public struct Backoffice: Sendable {
    public let store: Store
    let readCosts = ReadCosts()
    /// Brings in what other installations saved, before an interactive edit checks the version it was read at: set
    /// by `northwind serve` on a joined store, so that an editor whose form predates another site's save is told
    /// what changed, as for a colleague's save here, instead of having the two edits merged by their clocks. It is
    /// given the zone of the record about to be saved (`catalog`, `people`, `customers`), the only one it pulls.
    public var refreshBeforeEdit: (@Sendable (_ zone: String) async -> Void)?

    /// The settings the domain's rules read (`stock.lowStockMargin`), kept current by the `Settings` read from this
    /// store; a store opened without settings uses the factory defaults.
    public let rules = ShopRules()

    public init(store: Store) {
        self.store = store
        RecordGate.install(on: store)
    }

    // MARK: Transactions

    // guide: begin write-transaction
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
    // guide: end write-transaction

    /// A write of what sync brings: as `write`, and the gate also takes the forms only sync gives (`RecordGate`).
    func syncWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(NorthwindError) -> T {
        try await write { db in try RecordGate.allowingSyncForms(db) { try body(db) } }
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

    /// A read whose cost grows with the data (a page of a list and its count). It runs on the caller's thread, in one
    /// snapshot, when the last read of the same `shape` took less than `ReadCosts.budget` and no other measured read
    /// is running; otherwise on a reader thread. On a small store the thread hop of `read` (about 0.1 ms) costs more
    /// than the read itself; on a large one a read of milliseconds must not hold one of the cooperative pool's
    /// threads; and under concurrent load, reads on the caller's thread made the products page's p99 nine times its
    /// p50 (the hop keeps it under two: docs/performance.md). Each read measures itself, so a shape moves between
    /// the two paths as the data grows or shrinks.
    func measuredRead<T: Sendable>(
        _ shape: String,
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(NorthwindError) -> T {
        let costs = readCosts
        let timed: @Sendable (Database) throws -> T = { db in
            let start = ContinuousClock.now
            defer { costs.record(shape, ContinuousClock.now - start) }
            return try body(db)
        }
        let alone = costs.begin() == 0
        defer { costs.end() }
        guard alone, costs.isCheap(shape) else { return try await read(timed) }
        do {
            return try store.quick.snapshot(timed)
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
    /// True when a search looked only at its first matches (`Catalogue.listSearchCap`): `total` counts those kept.
    public var capped = false
    public init(items: [Item], total: Int, offset: Int, limit: Int) {
        self.items = items
        self.total = total
        self.offset = offset
        self.limit = limit
    }

    /// The same page with each item transformed, e.g. into its wire shape.
    public func map<T>(_ transform: (Item) throws -> T) rethrows -> Page<T> {
        var page = Page<T>(items: try items.map(transform), total: total, offset: offset, limit: limit)
        page.capped = capped
        return page
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
