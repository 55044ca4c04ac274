import Foundation
import GRDB
import SyncProtocol

/// The tables, the same on both engines apart from types.
enum SyncSchema {
    /// The `meta` key under which a site's last epoch of catching up after a restore is kept.
    static func caughtUpKey(container: String, siteCode: String) -> String { "caughtUp:\(container)/\(siteCode)" }

    static let subscriptions = """
        CREATE TABLE subscriptions (container TEXT NOT NULL, scope TEXT NOT NULL, siteCode TEXT NOT NULL,
            subscriptionID TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (container, scope, siteCode, subscriptionID))
        """

    /// A batch's content digest, so that its ID sent again with other content is refused, not answered as a replay.
    /// Batches stored before it have none and are answered as before.
    static let batchDigests = "ALTER TABLE batches ADD COLUMN digest TEXT"

    /// Enrolment tokens for a site the administrator chose, and tokens that replace an enrolled site's credential.
    /// A site's next credential, valid beside the current one until its first use, and when the current one was
    /// issued (it expires a number of days after).
    static let credentialRotation = [
        "ALTER TABLE installations ADD COLUMN nextCredentialHash TEXT",
        "ALTER TABLE installations ADD COLUMN credentialIssued BIGINT",
        "UPDATE installations SET credentialIssued = enrolled",
        "CREATE UNIQUE INDEX installations_by_next_credential ON installations (nextCredentialHash)",
    ]

    static let boundEnrollments = [
        "ALTER TABLE enrollments ADD COLUMN siteCode TEXT",
        "ALTER TABLE enrollments ADD COLUMN replaces BOOLEAN NOT NULL DEFAULT FALSE",
    ]

    /// Each container's schema, as head office declared it (`SchemaRules`).
    static let containerSchemas = "CREATE TABLE container_schemas (container TEXT PRIMARY KEY, body TEXT NOT NULL)"

    /// Each site's client and its count of batches taken in the shared database (`SiteLineage`).
    static let siteLineage = """
        CREATE TABLE site_lineage (container TEXT NOT NULL, siteCode TEXT NOT NULL, clientID TEXT NOT NULL,
            sequence BIGINT NOT NULL, PRIMARY KEY (container, siteCode))
        """

    static let statements = [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """
        CREATE TABLE enrollments (tokenHash TEXT PRIMARY KEY, container TEXT NOT NULL, role TEXT NOT NULL,
            created INTEGER NOT NULL, expires INTEGER NOT NULL, usedBy TEXT)
        """,
        """
        CREATE TABLE installations (container TEXT NOT NULL, siteCode TEXT NOT NULL, role TEXT NOT NULL,
            credentialHash TEXT NOT NULL UNIQUE, enrolled INTEGER NOT NULL, revoked INTEGER, PRIMARY KEY (container, siteCode))
        """,
        """
        CREATE TABLE zones (container TEXT NOT NULL, scope TEXT NOT NULL, zoneName TEXT NOT NULL, owner TEXT,
            writers TEXT NOT NULL, seq INTEGER NOT NULL, purgedThrough INTEGER NOT NULL, checksum INTEGER NOT NULL,
            deleted BOOLEAN NOT NULL, PRIMARY KEY (container, scope, zoneName))
        """,
        """
        CREATE TABLE records (container TEXT NOT NULL, scope TEXT NOT NULL, zoneName TEXT NOT NULL, recordName TEXT NOT NULL,
            recordType TEXT NOT NULL, seq INTEGER NOT NULL, appendOnly BOOLEAN NOT NULL, deleted BOOLEAN NOT NULL,
            modified INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (container, scope, zoneName, recordName))
        """,
        "CREATE INDEX records_by_change ON records (container, scope, zoneName, seq)",
        """
        CREATE TABLE batches (container TEXT NOT NULL, clientID TEXT NOT NULL, batchID TEXT NOT NULL, response TEXT NOT NULL,
            created INTEGER NOT NULL, PRIMARY KEY (container, clientID, batchID))
        """,
        "CREATE TABLE assets (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, contentType TEXT, created INTEGER NOT NULL)",
    ]
}
