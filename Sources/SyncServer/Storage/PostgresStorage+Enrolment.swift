import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import SyncProtocol
import Synchronization

extension PostgresStorage {
    // MARK: Enrolment

    func addEnrollment(tokenHash: String, container: String, role: Role, expires: Int64, siteCode: String?, replaces: Bool) async throws {
        try await client.query(
            """
            INSERT INTO enrollments (tokenhash, container, role, created, expires, sitecode, replaces)
            VALUES (\(tokenHash), \(container), \(role.rawValue), \(Clock.now()), \(expires), \(siteCode), \(replaces))
            """,
            logger: logger
        )
    }

    private typealias GrantRow = (String, String, String, String?, Bool, Int64, Int64, String?)
    private static let grantColumns = "tokenhash, container, role, sitecode, replaces, created, expires, usedby"

    private static func grant(_ row: GrantRow) -> EnrollmentGrant {
        EnrollmentGrant(
            id: String(row.0.prefix(12)),
            container: row.1,
            role: Role(rawValue: row.2) ?? .shop,
            siteCode: row.3,
            replaces: row.4,
            created: row.5,
            expires: row.6,
            usedBy: row.7
        )
    }

    func enrollment(tokenHash: String, now: Int64) async throws -> EnrollmentGrant? {
        try await client.query(
            """
            SELECT \(unescaped: Self.grantColumns) FROM enrollments WHERE tokenhash = \(tokenHash) AND usedby IS NULL AND expires > \(now)
            """,
            logger: logger
        ).all(GrantRow.self).first.map(Self.grant)
    }

    func redeemEnrollment(tokenHash: String, siteCode: String, credentialHash: String, now: Int64) async throws -> Installation {
        try await transaction { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.grantColumns) FROM enrollments WHERE tokenhash = \(tokenHash) FOR UPDATE",
                logger: self.logger
            )
            guard let grant = try await rows.all(GrantRow.self).first.map(Self.grant), grant.usedBy == nil, grant.expires > now
            else { throw SyncError(.authenticationFailed, "the enrolment token is unknown, used or expired; ask for a new one") }
            let site = grant.siteCode ?? siteCode
            let installation = Installation(container: grant.container, siteCode: site, role: grant.role, enrolled: now)
            let replacing =
                grant.replaces
                ? """
                DO UPDATE SET credentialhash = excluded.credentialhash, role = excluded.role, enrolled = excluded.enrolled, revoked = NULL,
                    credentialissued = excluded.credentialissued, nextcredentialhash = NULL
                """
                : "DO NOTHING"
            let inserted = try await connection.query(
                """
                INSERT INTO installations (container, sitecode, role, credentialhash, enrolled, credentialissued)
                VALUES (\(grant.container), \(site), \(grant.role.rawValue), \(credentialHash), \(now), \(now))
                ON CONFLICT (container, sitecode) \(unescaped: replacing) RETURNING 1
                """,
                logger: self.logger
            ).all(Int32.self)
            guard !inserted.isEmpty else {
                throw SyncError(
                    .exists,
                    "site code \(site) is already enrolled in \(grant.container); choose another, or ask the administrator for a token "
                        + "that replaces its credential (northwind-sync-server enroll --site \(site) --replace)"
                )
            }
            try await connection.query("UPDATE enrollments SET usedby = \(site) WHERE tokenhash = \(tokenHash)", logger: self.logger)
            return installation
        }
    }

    func enrollments(container: String) async throws -> [EnrollmentGrant] {
        try await client.query(
            "SELECT \(unescaped: Self.grantColumns) FROM enrollments WHERE container = \(container) ORDER BY created DESC",
            logger: logger
        ).all(GrantRow.self).map(Self.grant)
    }

    func revokeEnrollment(container: String, id: String) async throws -> Bool {
        let deleted = try await client.query(
            """
            DELETE FROM enrollments WHERE container = \(container) AND usedby IS NULL AND left(tokenhash, \(id.count)) = \(id) RETURNING 1
            """,
            logger: logger
        ).all(Int32.self)
        return !deleted.isEmpty
    }

    func installation(credentialHash: String, now: Int64) async throws -> Installation? {
        let current = try await installations(
            client.query(
                "SELECT \(unescaped: Self.installationColumns) FROM installations WHERE credentialhash = \(credentialHash)",
                logger: logger
            )
        ).first
        if let current { return current }
        // An unknown credential costs a read, never a write.
        let rotated = try await client.query(
            "SELECT 1 FROM installations WHERE nextcredentialhash = \(credentialHash)",
            logger: logger
        ).all(Int32.self)
        guard !rotated.isEmpty else { return nil }
        // The first use of a rotated credential: it becomes the current one.
        return try await installations(
            client.query(
                """
                UPDATE installations SET credentialhash = nextcredentialhash, nextcredentialhash = NULL, credentialissued = \(now)
                WHERE nextcredentialhash = \(credentialHash) RETURNING \(unescaped: Self.installationColumns)
                """,
                logger: logger
            )
        ).first
    }

    func rotateCredential(container: String, siteCode: String, nextHash: String) async throws {
        try await client.query(
            """
            UPDATE installations SET nextcredentialhash = \(nextHash)
            WHERE container = \(container) AND sitecode = \(siteCode) AND revoked IS NULL
            """,
            logger: logger
        )
    }

    private static let installationColumns = "container, sitecode, role, enrolled, revoked, credentialissued"

    func installations(container: String) async throws -> [Installation] {
        try await installations(
            client.query(
                "SELECT \(unescaped: Self.installationColumns) FROM installations WHERE container = \(container) ORDER BY sitecode",
                logger: logger
            )
        )
    }

    private func installations(_ rows: PostgresRowSequence) async throws -> [Installation] {
        try await rows.all((String, String, String, Int64, Int64?, Int64?).self).map {
            Installation(container: $0.0, siteCode: $0.1, role: Role(rawValue: $0.2) ?? .shop, enrolled: $0.3, revoked: $0.4, credentialIssued: $0.5)
        }
    }

    func revoke(container: String, siteCode: String, now: Int64) async throws -> Bool {
        let rows = try await client.query(
            """
            UPDATE installations SET revoked = \(now) WHERE container = \(container) AND sitecode = \(siteCode) AND revoked IS NULL
            RETURNING sitecode
            """,
            logger: logger
        )
        return try await rows.all(String.self).first != nil
    }
}
