import Foundation
import GRDB
import NorthwindStore
import Synchronization

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
            throw NorthwindError.translating(error)
        }
        state.withLock { $0.lastSeq = last }
        // guide: begin change-feed-observe
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
        // guide: end change-feed-observe
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
