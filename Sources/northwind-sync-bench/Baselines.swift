import ArgumentParser
import Foundation
import GRDBSQLite
import Logging
import PostgresNIO
import SyncProtocol
import SyncServer

/// Where the bench runs: SQLite files in a folder, or fresh databases on a PostgreSQL server.
struct Target: Sendable {
    let engine: String
    let root: String

    static func make(_ database: String?) async throws -> Target {
        if let database, database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            return Target(engine: "PostgreSQL", root: database)
        }
        let folder = database ?? FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return Target(engine: "SQLite", root: folder)
    }

    /// A new database: a SQLite path, or a PostgreSQL URL.
    func freshDatabase() async throws -> String {
        let name = "bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        guard engine == "PostgreSQL" else { return root + "/\(name).sqlite" }
        try await withPostgres(root) { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Self.logger)
        }
        var parts = URLComponents(string: root)!
        parts.path = "/" + name
        return parts.string!
    }

    static let logger = Logger(label: "northwind-sync-bench")

    /// The bare rates, through the SQLite C API or as plain PostgresNIO INSERTs (one statement a row), in
    /// transactions of 400, with the records' JSON encoded beforehand: `rows` writes the record rows only; `same`
    /// also writes what the server writes per batch besides them, the zone's counter and the stored answer that
    /// makes a batch idempotent.
    func bareRates(records: Int) async throws -> (rows: Double, same: Double) {
        let encoder = JSONEncoder()
        let rows = try (0..<records).map { index in
            let record = Workload.record(index)
            return (record, String(decoding: try encoder.encode(record), as: UTF8.self))
        }
        return (
            try await bareRate(database: try await freshDatabase(), rows: rows, sameWrites: false),
            try await bareRate(database: try await freshDatabase(), rows: rows, sameWrites: true)
        )
    }

    private func bareRate(database: String, rows: [(SyncRecord, String)], sameWrites: Bool) async throws -> Double {
        let batch = SyncLimits.operationsPerRequest
        let answers =
            sameWrites ? stride(from: 0, to: rows.count, by: batch).map { Workload.answer(Array(rows[$0..<min($0 + batch, rows.count)])) } : []
        if engine == "SQLite" {
            let started = ContinuousClock.now
            try BareSQLite.insert(path: database, rows: rows, batch: batch, answers: answers)
            return Double(rows.count) / (ContinuousClock.now - started).seconds
        }
        return try await withPostgres(database) { connection in
            for statement in BareSQLite.tables.split(separator: ";") {
                try await connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: Self.logger)
            }
            let started = ContinuousClock.now
            for (number, start) in stride(from: 0, to: rows.count, by: batch).enumerated() {
                try await connection.query("BEGIN", logger: Self.logger)
                for (offset, (record, body)) in rows[start..<min(start + batch, rows.count)].enumerated() {
                    try await connection.query(
                        """
                        INSERT INTO records (container, scope, zonename, recordname, recordtype, seq, appendonly, deleted, modified, body)
                        VALUES ('bench', 'shared', 'catalog', \(record.recordName), \(record.recordType), \(Int64(start + offset)), false,
                            false, 0, \(body))
                        """,
                        logger: Self.logger
                    )
                }
                if sameWrites {
                    try await connection.query(
                        "INSERT INTO zones VALUES ('bench', 'shared', 'catalog', \(Int64(number))) ON CONFLICT (container, scope, zonename) DO UPDATE SET seq = excluded.seq",
                        logger: Self.logger
                    )
                    try await connection.query(
                        "INSERT INTO batches VALUES ('bench', 'bench', \("b\(number)"), \(answers[number]), 0)",
                        logger: Self.logger
                    )
                }
                try await connection.query("COMMIT", logger: Self.logger)
            }
            return Double(rows.count) / (ContinuousClock.now - started).seconds
        }
    }

    private func withPostgres<T: Sendable>(_ url: String, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: try PostgresURL.configuration(url), backgroundLogger: Self.logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            // Let the pool start before the first lease (it warns otherwise).
            await Task.yield()
            return try await client.withConnection { connection in try await body(connection) }
        }
    }
}

/// The SQLite baseline through the C API, with the server's own settings (WAL, synchronous FULL).
enum BareSQLite {
    static let tables = """
        CREATE TABLE zones (container TEXT NOT NULL, scope TEXT NOT NULL, zonename TEXT NOT NULL, seq BIGINT NOT NULL,
            PRIMARY KEY (container, scope, zonename));
        CREATE TABLE batches (container TEXT NOT NULL, clientid TEXT NOT NULL, batchid TEXT NOT NULL, response TEXT NOT NULL,
            created BIGINT NOT NULL, PRIMARY KEY (container, clientid, batchid));
        CREATE TABLE records (container TEXT NOT NULL, scope TEXT NOT NULL, zonename TEXT NOT NULL, recordname TEXT NOT NULL,
            recordtype TEXT NOT NULL, seq BIGINT NOT NULL, appendonly BOOLEAN NOT NULL, deleted BOOLEAN NOT NULL,
            modified BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (container, scope, zonename, recordname));
        CREATE INDEX records_by_change ON records (container, scope, zonename, seq)
        """

    static func insert(path: String, rows: [(SyncRecord, String)], batch: Int, answers: [String]) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw ValidationError("cannot open \(path)") }
        defer { sqlite3_close(handle) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
                throw ValidationError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
        }
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = FULL")
        try exec(tables)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(
            handle,
            """
            INSERT INTO records (container, scope, zonename, recordname, recordtype, seq, appendonly, deleted, modified, body)
            VALUES ('bench', 'shared', 'catalog', ?, ?, ?, 0, 0, 0, ?)
            """,
            -1,
            &statement,
            nil
        )
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (number, start) in stride(from: 0, to: rows.count, by: batch).enumerated() {
            try exec("BEGIN")
            for (offset, (record, body)) in rows[start..<min(start + batch, rows.count)].enumerated() {
                sqlite3_bind_text(statement, 1, record.recordName, -1, transient)
                sqlite3_bind_text(statement, 2, record.recordType, -1, transient)
                sqlite3_bind_int64(statement, 3, Int64(start + offset))
                sqlite3_bind_text(statement, 4, body, -1, transient)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw ValidationError(String(cString: sqlite3_errmsg(handle))) }
                sqlite3_reset(statement)
            }
            if !answers.isEmpty {
                try exec("INSERT INTO zones VALUES ('bench', 'shared', 'catalog', \(number)) ON CONFLICT DO UPDATE SET seq = excluded.seq")
                var insert: OpaquePointer?
                sqlite3_prepare_v2(handle, "INSERT INTO batches VALUES ('bench', 'bench', ?, ?, 0)", -1, &insert, nil)
                sqlite3_bind_text(insert, 1, "b\(number)", -1, transient)
                sqlite3_bind_text(insert, 2, answers[number], -1, transient)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw ValidationError(String(cString: sqlite3_errmsg(handle))) }
                sqlite3_finalize(insert)
            }
            try exec("COMMIT")
        }
    }
}
