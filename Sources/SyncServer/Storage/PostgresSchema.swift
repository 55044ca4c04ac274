import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import SyncProtocol
import Synchronization

/// The PostgreSQL schema, one list of statements per version. Names are lower case, as PostgreSQL folds them.
enum PostgresSchema {
    static let migrations: [[String]] = [
        [
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "INSERT INTO meta (key, value) VALUES ('epoch', gen_random_uuid()::text)",
            """
            CREATE TABLE enrollments (tokenhash TEXT PRIMARY KEY, container TEXT NOT NULL, role TEXT NOT NULL,
                created BIGINT NOT NULL, expires BIGINT NOT NULL, usedby TEXT)
            """,
            """
            CREATE TABLE installations (container TEXT NOT NULL, sitecode TEXT NOT NULL, role TEXT NOT NULL,
                credentialhash TEXT NOT NULL UNIQUE, enrolled BIGINT NOT NULL, revoked BIGINT, PRIMARY KEY (container, sitecode))
            """,
            """
            CREATE TABLE zones (container TEXT NOT NULL, scope TEXT NOT NULL, zonename TEXT NOT NULL, owner TEXT,
                writers TEXT NOT NULL, seq BIGINT NOT NULL, purgedthrough BIGINT NOT NULL, checksum BIGINT NOT NULL,
                deleted BOOLEAN NOT NULL, PRIMARY KEY (container, scope, zonename))
            """,
            """
            CREATE TABLE records (container TEXT NOT NULL, scope TEXT NOT NULL, zonename TEXT NOT NULL, recordname TEXT NOT NULL,
                recordtype TEXT NOT NULL, seq BIGINT NOT NULL, appendonly BOOLEAN NOT NULL, deleted BOOLEAN NOT NULL,
                modified BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (container, scope, zonename, recordname))
            """,
            "CREATE INDEX records_by_change ON records (container, scope, zonename, seq)",
            """
            CREATE TABLE batches (container TEXT NOT NULL, clientid TEXT NOT NULL, batchid TEXT NOT NULL, response TEXT NOT NULL,
                created BIGINT NOT NULL, PRIMARY KEY (container, clientid, batchid))
            """,
            """
            CREATE TABLE assets (container TEXT NOT NULL, sha256 TEXT NOT NULL, size BIGINT NOT NULL, created BIGINT NOT NULL,
                PRIMARY KEY (container, sha256))
            """,
            "CREATE TABLE asset_bytes (sha256 TEXT PRIMARY KEY, data BYTEA NOT NULL)",
        ],
        [SyncSchema.subscriptions],
        // Pages are read in (seq, recordname) order: with the name in the index they need no sort.
        [
            "DROP INDEX records_by_change",
            "CREATE INDEX records_by_change ON records (container, scope, zonename, seq, recordname)",
        ],
        [SyncSchema.batchDigests],
        [SyncSchema.siteLineage],
        [SyncSchema.containerSchemas],
        SyncSchema.boundEnrollments,
        SyncSchema.credentialRotation,
        // The commit-order test's sequence was made here for every database; debug builds now make it when asked.
        ["DROP SEQUENCE IF EXISTS plain_change_numbers"],
    ]
}

/// `postgres://user:password@host:port/database?sslmode=disable|prefer|require`, as PostgresNIO's configuration.
public enum PostgresURL {
    public static func configuration(_ url: String) throws -> PostgresClient.Configuration {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
            let host = parts.host, !host.isEmpty
        else {
            throw SyncError(.badRequest, "\(url) is not a PostgreSQL URL; write postgres://user:password@host:5432/database")
        }
        let mode = parts.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS =
            switch mode {
            case "disable": .disable
            case "require", "verify-full": .require(.makeClientConfiguration())
            default: .prefer(.makeClientConfiguration())
            }
        let database = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        var configuration = PostgresClient.Configuration(
            host: host,
            port: parts.port ?? 5432,
            username: parts.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres",
            password: parts.password,
            database: database.isEmpty ? nil : database,
            tls: tls
        )
        configuration.options.maximumConnections = 40
        return configuration
    }
}
