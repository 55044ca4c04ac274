import Foundation
import GRDB
import Synchronization

/// The figures on the home page: what needs doing today.
public struct ShopSummary: Sendable, Codable, Equatable {
    public var newOrders: Int
    public var lowStockProducts: Int
}

extension Backoffice {
    public func shopSummary() throws(NorthwindError) -> ShopSummary {
        try read { db in try Self.shopSummary(db) }
    }

    static func shopSummary(_ db: Database) throws -> ShopSummary {
        ShopSummary(
            newOrders: try Int.fetchOne(db, sql: "SELECT count(*) FROM orders WHERE status = 'new'") ?? 0,
            lowStockProducts: try Int.fetchOne(db, sql: "SELECT count(*) FROM products WHERE \(Product.lowStockSQL)") ?? 0
        )
    }

    /// Customers whose code or company name contains `text`, codes that start with it first: the phone-order lookup.
    public func searchCustomers(_ text: String, limit: Int = 20) throws(NorthwindError) -> [Customer] {
        try checkPaging(limit: limit, offset: 0)
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return try read { db in
            if trimmed.isEmpty {
                return try Customer.order(Customer.Columns.companyName).limit(limit).fetchAll(db)
            }
            let pattern = "%" + Self.escapeLike(trimmed) + "%"
            return try Customer.fetchAll(
                db,
                sql: """
                    SELECT * FROM customers
                    WHERE code LIKE ? ESCAPE '\\' OR companyName LIKE ? ESCAPE '\\' OR contactName LIKE ? ESCAPE '\\'
                    ORDER BY code LIKE ? ESCAPE '\\' DESC, companyName
                    LIMIT ?
                    """,
                arguments: [pattern, pattern, pattern, Self.escapeLike(trimmed) + "%", limit]
            )
        }
    }

    /// The orders of one customer, newest first: the customer page's history.
    public func orders(customerID: Int64, limit: Int = 50) throws(NorthwindError) -> [OrderSummary] {
        try read { db in
            try Order.filter(Order.Columns.customerID == customerID)
                .order(Order.Columns.orderDate.desc, Order.Columns.id.desc).limit(limit).fetchAll(db)
                .map { try Self.summary($0, db) }
        }
    }

    /// The products of one category, by name.
    public func products(categoryID: Int64) throws(NorthwindError) -> [Product] {
        try read { db in
            try Product.filter(Product.Columns.categoryID == categoryID).order(Product.Columns.name).fetchAll(db)
        }
    }

    /// Escapes LIKE's wildcards so that a user's `%` or `_` match themselves.
    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

/// What changed in one committed transaction (or several close together): the tables and the record ids.
public struct ChangeBatch: Sendable, Codable, Equatable {
    /// The last change-log sequence number covered.
    public var seq: Int64
    public var tables: [String]
    /// Changed record ids (the sync ids), at most `ChangeFeed.maxRecordIDs` of them.
    public var recordIDs: [String]
}

/// Tells subscribers when the store changes, whoever changed it.
///
/// GRDB's observation sees commits made through this process's pool at once. Another process (the CLI, a second
/// server) writes to the same file unseen by GRDB, so a light poll of the change log catches those too.
public final class ChangeFeed: Sendable {
    public static let maxRecordIDs = 200
    private let store: Store
    private let state = Mutex(State())
    private let observer: Mutex<AnyDatabaseCancellable?> = Mutex(nil)
    private let changes = Atomic<Int>(0)

    /// Goes up whenever the store may have changed. A commit through this process's pool raises it before the write
    /// returns; another process's commit raises it at the next poll. Caches of derived data compare it.
    public var generation: Int { changes.load(ordering: .acquiring) }

    private struct State {
        var lastSeq: Int64 = 0
        var subscribers: [UUID: AsyncStream<ChangeBatch>.Continuation] = [:]
        var poller: Task<Void, Never>?
    }

    public init(store: Store, pollInterval: Duration = .milliseconds(250)) throws(NorthwindError) {
        self.store = store
        let last: Int64
        do {
            last = try store.pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM change_log") ?? 0 }
        } catch {
            throw Backoffice.translate(error)
        }
        state.withLock { $0.lastSeq = last }
        let observation = DatabaseRegionObservation(tracking: Table("change_log"))
        let cancellable = observation.start(
            in: store.pool,
            onError: { _ in },
            onChange: { [weak self] _ in
                // Called after commit on the writer's queue; read the new entries off that queue.
                self?.changes.add(1, ordering: .releasing)
                Task { self?.publishNewChanges() }
            }
        )
        observer.withLock { $0 = cancellable }
        let poller = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                self?.publishNewChanges()
            }
        }
        state.withLock { $0.poller = poller }
    }

    deinit { close() }

    /// A stream of change batches from now on. It ends when the subscriber stops iterating or the feed closes.
    public func subscribe() -> AsyncStream<ChangeBatch> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeBatch.self, bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        state.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every subscription, for a graceful shutdown.
    public func close() {
        observer.withLock { $0 = nil }
        // Finishing a stream runs its onTermination, which takes the lock: finish outside it.
        let subscribers = state.withLock { state in
            state.poller?.cancel()
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    private func publishNewChanges() {
        let after = state.withLock { $0.lastSeq }
        let limit = Self.maxRecordIDs
        guard
            let batch = try? store.pool.read({ db -> ChangeBatch? in
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT seq, tableName, recordID FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?
                        """,
                    arguments: [after, limit]
                )
                guard var last: Int64 = rows.last?["seq"] else { return nil }
                var tables: [String] = []
                for row in rows where !tables.contains(row["tableName"]) { tables.append(row["tableName"]) }
                if rows.count == limit {
                    // A bulk change: name every table, but not every record.
                    last = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM change_log") ?? last
                    tables = try String.fetchAll(
                        db,
                        sql: "SELECT DISTINCT tableName FROM change_log WHERE seq > ?",
                        arguments: [after]
                    )
                }
                return ChangeBatch(seq: last, tables: tables, recordIDs: rows.map { $0["recordID"] })
            }) ?? nil
        else { return }
        let subscribers: [AsyncStream<ChangeBatch>.Continuation]? = state.withLock { state in
            // Two triggers may race to publish the same entries; only the first one past lastSeq does.
            guard batch.seq > state.lastSeq else { return nil }
            state.lastSeq = batch.seq
            changes.add(1, ordering: .releasing)
            return Array(state.subscribers.values)
        }
        for continuation in subscribers ?? [] { continuation.yield(batch) }
    }
}

extension Backoffice {
    /// Every category as its list shows it, in name order: no cap, and no picture bytes, only whether one exists.
    public func categoryListing() throws(NorthwindError) -> [Listing] {
        try listing(
            """
            SELECT id, name, description, picture IS NOT NULL OR pictureFile IS NOT NULL
            FROM categories ORDER BY name, id
            """
        )
    }

    /// Every employee as the list shows them, by last name: the title, and whether a photo exists.
    public func employeeListing() throws(NorthwindError) -> [Listing] {
        try listing(
            """
            SELECT id, firstName || ' ' || lastName, title, photo IS NOT NULL OR photoFile IS NOT NULL
            FROM employees ORDER BY lastName, firstName, id
            """
        )
    }

    public func categoryHasPicture(id: Int64) throws(NorthwindError) -> Bool {
        try listing("SELECT id, '', NULL, picture IS NOT NULL OR pictureFile IS NOT NULL FROM categories WHERE id = ?", [id])
            .first?.hasImage ?? false
    }

    public func employeeHasPhoto(id: Int64) throws(NorthwindError) -> Bool {
        try listing("SELECT id, '', NULL, photo IS NOT NULL OR photoFile IS NOT NULL FROM employees WHERE id = ?", [id])
            .first?.hasImage ?? false
    }

    private func listing(_ sql: String, _ arguments: StatementArguments = []) throws(NorthwindError) -> [Listing] {
        try quickRead { db in
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
                .map { Listing(id: $0[0], name: $0[1], detail: $0[2], hasImage: $0[3]) }
        }
    }

    /// The number of the order with local id `id`.
    public func orderNumber(id: Int64) throws(NorthwindError) -> String {
        try quickRead { db in
            guard
                let number = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT number FROM orders WHERE id = ?"),
                    arguments: [id]
                )
            else {
                throw NorthwindError.notFound(entity: "order", key: "#\(id)")
            }
            return number
        }
    }
}

/// A category or employee in a list: its name, a line about it (description, title), and whether it has an image.
public struct Listing: Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var detail: String?
    public var hasImage: Bool
}

/// A record as a form offers it: its id and the name a person picks it by.
public struct Choice: Sendable, Hashable {
    public var id: Int64
    public var name: String
}

extension Backoffice {
    /// Every record of a kind as a choice, in its list order: all of them, however many, so a form never lacks the
    /// record it is editing. Two columns only: categories and employees carry pictures.
    public func choices<R: ManagedRecord>(_ type: R.Type) throws(NorthwindError) -> [Choice] {
        try read { db in
            try R.select([Column("id"), R.choiceName], as: Row.self).order(R.defaultOrdering + [Column("id")])
                .fetchAll(db).map { Choice(id: $0[0], name: $0[1]) }
        }
    }
}
