import Foundation
import GRDB
import SyncProtocol

extension SQLiteStorage {
    // MARK: Enrolment

    func addEnrollment(tokenHash: String, container: String, role: Role, expires: Int64, siteCode: String?, replaces: Bool) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO enrollments (tokenHash, container, role, created, expires, siteCode, replaces) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [tokenHash, container, role.rawValue, Clock.now(), expires, siteCode, replaces]
            )
        }
    }

    func enrollment(tokenHash: String, now: Int64) async throws -> EnrollmentGrant? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT * FROM enrollments WHERE tokenHash = ? AND usedBy IS NULL AND expires > ?",
                arguments: [tokenHash, now]
            ).map(Self.grant)
        }
    }

    func redeemEnrollment(tokenHash: String, siteCode: String, credentialHash: String, now: Int64) async throws -> Installation {
        try await pool.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM enrollments WHERE tokenHash = ?", arguments: [tokenHash]),
                row["usedBy"] as String? == nil, (row["expires"] as Int64) > now
            else { throw SyncError(.authenticationFailed, "the enrolment token is unknown, used or expired; ask for a new one") }
            let grant = Self.grant(row)
            let site = grant.siteCode ?? siteCode
            let container = grant.container
            let exists =
                try Bool.fetchOne(db, sql: "SELECT 1 FROM installations WHERE container = ? AND siteCode = ?", arguments: [container, site])
                ?? false
            if exists && !grant.replaces {
                throw SyncError(
                    .exists,
                    "site code \(site) is already enrolled in \(container); choose another, or ask the administrator for a token "
                        + "that replaces its credential (northwind-sync-server enroll --site \(site) --replace)"
                )
            }
            let installation = Installation(container: container, siteCode: site, role: grant.role, enrolled: now)
            if exists {
                try db.execute(
                    sql: """
                        UPDATE installations SET credentialHash = ?, role = ?, enrolled = ?, revoked = NULL, credentialIssued = ?,
                            nextCredentialHash = NULL WHERE container = ? AND siteCode = ?
                        """,
                    arguments: [credentialHash, grant.role.rawValue, now, now, container, site]
                )
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO installations (container, siteCode, role, credentialHash, enrolled, credentialIssued)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [container, site, grant.role.rawValue, credentialHash, now, now]
                )
            }
            try db.execute(sql: "UPDATE enrollments SET usedBy = ? WHERE tokenHash = ?", arguments: [site, tokenHash])
            return installation
        }
    }

    func enrollments(container: String) async throws -> [EnrollmentGrant] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM enrollments WHERE container = ? ORDER BY created DESC", arguments: [container]).map(Self.grant)
        }
    }

    func revokeEnrollment(container: String, id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM enrollments WHERE container = ? AND usedBy IS NULL AND substr(tokenHash, 1, ?) = ?",
                arguments: [container, id.count, id]
            )
            return db.changesCount > 0
        }
    }

    private static func grant(_ row: Row) -> EnrollmentGrant {
        EnrollmentGrant(
            id: String((row["tokenHash"] as String).prefix(12)),
            container: row["container"],
            role: Role(rawValue: row["role"]) ?? .shop,
            siteCode: row["siteCode"],
            replaces: row["replaces"] ?? false,
            created: row["created"],
            expires: row["expires"],
            usedBy: row["usedBy"]
        )
    }

    func installation(credentialHash: String, now: Int64) async throws -> Installation? {
        let (current, rotated) = try await pool.read { db in
            (
                try Row.fetchOne(db, sql: "SELECT * FROM installations WHERE credentialHash = ?", arguments: [credentialHash]).map(Self.installation),
                try Bool.fetchOne(db, sql: "SELECT 1 FROM installations WHERE nextCredentialHash = ?", arguments: [credentialHash]) ?? false
            )
        }
        // An unknown credential costs a read, never a write.
        guard current == nil, rotated else { return current }
        // The first use of a rotated credential: it becomes the current one.
        return try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE installations SET credentialHash = nextCredentialHash, nextCredentialHash = NULL, credentialIssued = ?
                    WHERE nextCredentialHash = ?
                    """,
                arguments: [now, credentialHash]
            )
            return try Row.fetchOne(db, sql: "SELECT * FROM installations WHERE credentialHash = ?", arguments: [credentialHash])
                .map(Self.installation)
        }
    }

    func rotateCredential(container: String, siteCode: String, nextHash: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE installations SET nextCredentialHash = ? WHERE container = ? AND siteCode = ? AND revoked IS NULL",
                arguments: [nextHash, container, siteCode]
            )
        }
    }

    func installations(container: String) async throws -> [Installation] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM installations WHERE container = ? ORDER BY siteCode", arguments: [container])
                .map(Self.installation)
        }
    }

    func revoke(container: String, siteCode: String, now: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE installations SET revoked = ? WHERE container = ? AND siteCode = ? AND revoked IS NULL",
                arguments: [now, container, siteCode]
            )
            return db.changesCount > 0
        }
    }

    private static func installation(_ row: Row) -> Installation {
        Installation(
            container: row["container"],
            siteCode: row["siteCode"],
            role: Role(rawValue: row["role"]) ?? .shop,
            enrolled: row["enrolled"],
            revoked: row["revoked"],
            credentialIssued: row["credentialIssued"]
        )
    }
}
