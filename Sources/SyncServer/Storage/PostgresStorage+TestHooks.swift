#if NORTHWIND_TEST_HOOKS
import Foundation
import Logging
import PostgresNIO
import SyncProtocol

/// The commit-order test's switches, compiled into debug builds only: the test starts two server processes with
/// these variables, to hold a batch before its commit and, as its negative control, to number changes from a plain
/// sequence with no zone locked (knowingly wrong). A release binary has none of this, and refuses the variables.
struct StorageTestHooks: Sendable {
    /// A batch whose batchID starts with `hold:` waits this long after taking its change number, before committing.
    var holdBeforeCommit: Duration?
    /// Take change numbers from a plain sequence without locking zones: the test's negative control, never correct.
    var plainSequence = false

    static func fromEnvironment() -> StorageTestHooks {
        let environment = ProcessInfo.processInfo.environment
        return StorageTestHooks(
            holdBeforeCommit: environment["NORTHWIND_SYNC_TEST_HOLD_MS"].flatMap(Int.init).map { .milliseconds($0) },
            plainSequence: environment["NORTHWIND_SYNC_TEST_PLAIN_SEQUENCE"] == "1"
        )
    }
}

extension PostgresStorage {
    /// The negative control: each zone's next number taken from a sequence, with no lock held.
    func takePlainNumbers(_ connection: PostgresConnection, _ locked: [String: ZoneState]) async throws -> [String: ZoneState] {
        var zones = locked
        for name in zones.keys {
            let next = try await connection.query("SELECT nextval('plain_change_numbers')", logger: logger)
            zones[name]?.seq = (try await next.all(Int64.self).first ?? 1) - 1
        }
        return zones
    }

    /// Holds a `hold:` batch before its commit, with its zones locked, for as long as the test asked.
    func holdIfAsked(_ batchID: String) async throws {
        if let hold = hooks.holdBeforeCommit, batchID.hasPrefix("hold:") { try await Task.sleep(for: hold) }
    }

    /// The negative control leaves the zone's counter alone, so the newest change in the zone stands in for it.
    func newestChange(_ connection: PostgresConnection, container: String, scope: DatabaseScope, zone: String) async throws -> Int64 {
        try await connection.query(
            """
            SELECT coalesce(max(seq), 0) FROM records WHERE container = \(container) AND scope = \(scope.key)
            AND zonename = \(zone)
            """,
            logger: logger
        ).all(Int64.self).first ?? 0
    }
}
#endif
