import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import SyncProtocol
import Synchronization

extension PostgresStorage {
    // MARK: Assets

    func presentAssets(container: String, hashes: [String]) async throws -> Set<String> {
        Set(
            try await client.query(
                "SELECT sha256 FROM assets WHERE container = \(container) AND sha256 = ANY(\(hashes))",
                logger: logger
            ).all(String.self).map { $0 }
        )
    }

    func saveAsset(container: String, sha256: String, data: Data) async throws {
        // The bytes live in the database, so every instance serves them; they are shared between containers.
        try await transaction { connection in
            try await connection.query(
                "INSERT INTO asset_bytes (sha256, data) VALUES (\(sha256), \(data)) ON CONFLICT DO NOTHING",
                logger: self.logger
            )
            try await connection.query(
                """
                INSERT INTO assets (container, sha256, size, created) VALUES (\(container), \(sha256), \(data.count), \(Clock.now()))
                ON CONFLICT DO NOTHING
                """,
                logger: self.logger
            )
        }
    }

    func asset(container: String, sha256: String) async throws -> Data? {
        try await client.query(
            """
            SELECT b.data FROM assets a JOIN asset_bytes b ON b.sha256 = a.sha256
            WHERE a.container = \(container) AND a.sha256 = \(sha256)
            """,
            logger: logger
        ).all(Data.self).first
    }

    func assetBytes(container: String) async throws -> Int64 {
        try await client.query("SELECT coalesce(sum(size), 0)::int8 FROM assets WHERE container = \(container)", logger: logger)
            .all(Int64.self).first ?? 0
    }

    // MARK: Subscriptions

    func subscriptions(container: String, scope: DatabaseScope, siteCode: String) async throws -> [StoredSubscription] {
        try await transaction(readOnly: true) { connection in
            try await self.subscriptions(connection, container: container, scope: scope, siteCode: siteCode)
        }
    }

    private func subscriptions(
        _ connection: PostgresConnection,
        container: String,
        scope: DatabaseScope,
        siteCode: String
    ) async throws -> [StoredSubscription] {
        try await connection.query(
            """
            SELECT subscriptionid, body FROM subscriptions WHERE container = \(container) AND scope = \(scope.key) AND sitecode = \(siteCode)
            ORDER BY subscriptionid
            """,
            logger: logger
        ).all((String, String).self).map { StoredSubscription(id: $0.0, body: $0.1) }
    }

    func modifySubscriptions<Answer: Sendable>(
        container: String,
        scope: DatabaseScope,
        siteCode: String,
        decide: @Sendable ([StoredSubscription]) throws -> ([StoredSubscription], Answer)
    ) async throws -> Answer {
        try await transaction { connection in
            // One installation's edits, one at a time, so two saves never lose each other.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended(\("subscriptions|" + container + "|" + scope.key + "|" + siteCode), 0))",
                logger: self.logger
            )
            let current = try await self.subscriptions(connection, container: container, scope: scope, siteCode: siteCode)
            let (subscriptions, answer) = try decide(current)
            try await connection.query(
                "DELETE FROM subscriptions WHERE container = \(container) AND scope = \(scope.key) AND sitecode = \(siteCode)",
                logger: self.logger
            )
            for subscription in subscriptions {
                try await connection.query(
                    """
                    INSERT INTO subscriptions (container, scope, sitecode, subscriptionid, body)
                    VALUES (\(container), \(scope.key), \(siteCode), \(subscription.id), \(subscription.body))
                    """,
                    logger: self.logger
                )
            }
            return answer
        }
    }

    // MARK: Notifications

    func listen(_ changed: @escaping @Sendable (String) async -> Void, ready: @escaping @Sendable () -> Void) -> Task<Void, Never>? {
        let client = client
        let logger = logger
        return Task {
            // One connection holds LISTEN; when it drops, listen again. Polling covers the gap.
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: "northwind_sync") { notifications in
                            // LISTEN is in force once this runs.
                            ready()
                            for try await notification in notifications { await changed(notification.payload) }
                        }
                    }
                } catch {
                    logger.warning("listening for changes from other instances failed, retrying: \(String(reflecting: error))")
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    func purgeTombstones(before: Int64) async throws -> Int {
        try await transaction { connection in
            // Writers hold their zones' rows while they write: the purge takes the same locks (in name order, as
            // writers do), so no deletion commits in a zone between raising its floor and removing its tombstones.
            _ = try await connection.query(
                """
                SELECT 1 FROM zones z WHERE EXISTS (SELECT 1 FROM records r
                    WHERE r.container = z.container AND r.scope = z.scope AND r.zonename = z.zonename
                      AND r.deleted AND r.modified < \(before))
                ORDER BY z.container, z.scope, z.zonename COLLATE "C" FOR UPDATE
                """,
                logger: self.logger
            ).all(Int32.self)
            // One statement, so one snapshot: each floor is raised past exactly the tombstones removed. Counted in the
            // database: a purge may remove millions of rows.
            let purged: Int64 =
                try await connection.query(
                    """
                    WITH purged AS (
                        DELETE FROM records WHERE deleted AND modified < \(before) RETURNING container, scope, zonename, seq
                    ), floors AS (
                        SELECT container, scope, zonename, max(seq) AS seq FROM purged GROUP BY container, scope, zonename
                    ), raised AS (
                        UPDATE zones z SET purgedthrough = GREATEST(z.purgedthrough, f.seq) FROM floors f
                        WHERE z.container = f.container AND z.scope = f.scope AND z.zonename = f.zonename RETURNING 1
                    )
                    SELECT count(*) FROM purged
                    """,
                    logger: self.logger
                ).all(Int64.self).first ?? 0
            return Int(purged)
        }
    }
}
