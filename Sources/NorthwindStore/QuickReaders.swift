import Foundation
import GRDB
import Synchronization

/// Read-only connections for single-statement reads on hot paths (point lookups, search, list pages).
///
/// `DatabasePool.read` wraps every read in a transaction and a schema check, which costs more than a point lookup
/// itself. One SQL statement is already a consistent snapshot in WAL mode, so `read` skips both; `snapshot` opens a
/// transaction for reads of more than one statement that must agree.
public final class QuickReaders: Sendable {
    private let queues: [DatabaseQueue]
    private let next = Atomic<Int>(0)

    init(path: String, count: Int, configuration: Configuration) throws {
        var configuration = configuration
        configuration.readonly = true
        configuration.label = "northwind.quick"
        queues = try (0..<count).map { _ in try DatabaseQueue(path: path, configuration: configuration) }
    }

    /// Runs `body` on the next connection, round robin.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        let index = next.add(1, ordering: .relaxed).oldValue % queues.count
        return try queues[index].inDatabase(body)
    }

    func close() throws {
        for queue in queues { try queue.close() }
    }

    /// Runs `body` in one read-only transaction on the next connection, so that its statements see one snapshot.
    public func snapshot<T>(_ body: (Database) throws -> T) throws -> T {
        let index = next.add(1, ordering: .relaxed).oldValue % queues.count
        return try queues[index].read(body)
    }
}
