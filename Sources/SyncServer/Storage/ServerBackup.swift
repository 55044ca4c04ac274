import Crypto
import Foundation
import GRDB
import SyncProtocol

/// Backups of the embedded engine's data: a folder holding a copy of the SQLite file, taken with SQLite's online
/// backup (the server may keep running), and the asset files. A restore starts a new epoch, so that every
/// installation learns that the server's data went back in time: each sends again what it had sent since, and
/// fetches everything again. PostgreSQL is backed up with its own tools (`pg_dump`, point-in-time recovery); after
/// restoring it, `markRestored` starts the new epoch.
public enum ServerBackup {
    static let databaseName = "sync.sqlite"

    /// Copies the database at `database` into the new folder `folder`, then verifies the copy.
    public static func create(database: String, folder: String) throws(SyncError) -> Summary {
        try refusePostgres(database, doing: "back up")
        let destination = URL(fileURLWithPath: folder)
        guard FileManager.default.fileExists(atPath: database) else {
            throw SyncError(.notFound, "there is no sync database at \(database); give the one the server runs with (--database)")
        }
        if FileManager.default.fileExists(atPath: folder) {
            throw SyncError(.exists, "\(folder) exists already; give a new folder for the backup")
        }
        do {
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            let source = try DatabaseQueue(path: database, configuration: readOnly)
            let copy = try DatabaseQueue(path: destination.appendingPathComponent(databaseName).path)
            try source.backup(to: copy)
            try copy.close()
            try source.close()
            // Assets are written before any record names them, and never changed: those present now cover the copy.
            try copyAssets(from: assetFolder(database), to: assetFolder(destination.appendingPathComponent(databaseName).path))
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw SyncError(.internalError, "could not back up \(database) to \(folder): \(error)")
        }
        return try verify(folder: folder)
    }

    /// What a backup holds, once it passes every check: SQLite's integrity check, the server's tables, and every
    /// asset the database names present with the bytes its name promises.
    public static func verify(folder: String) throws(SyncError) -> Summary {
        let path = URL(fileURLWithPath: folder).appendingPathComponent(databaseName).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw SyncError(.notFound, "\(folder) is not a sync server backup: it has no \(databaseName)")
        }
        do {
            let queue = try DatabaseQueue(path: path, configuration: readOnly)
            defer { try? queue.close() }
            return try queue.read { db throws in
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard check == ["ok"] else {
                    throw SyncError(.badRequest, "the backup in \(folder) is damaged: \(check.prefix(3).joined(separator: "; "))")
                }
                guard let epoch = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'epoch'") else {
                    throw SyncError(.badRequest, "\(folder) does not hold a sync server's database")
                }
                let assets = assetFolder(path)
                var missing: [String] = []
                for hash in try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM assets") {
                    let file = assets.appendingPathComponent(hash)
                    guard let data = FileManager.default.contents(atPath: file.path),
                        SHA256.hash(data: data).map({ String(format: "%02x", $0) }).joined() == hash
                    else {
                        missing.append(hash)
                        continue
                    }
                }
                guard missing.isEmpty else {
                    throw SyncError(
                        .badRequest,
                        "the backup in \(folder) lacks \(missing.count) asset(s) or holds them damaged, such as \(missing[0])"
                    )
                }
                try checkRecords(db, folder: folder)
                return Summary(
                    epoch: epoch,
                    records: try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE NOT deleted") ?? 0,
                    zones: try Int.fetchOne(db, sql: "SELECT count(*) FROM zones WHERE NOT deleted") ?? 0,
                    assets: try Int.fetchOne(db, sql: "SELECT count(DISTINCT sha256) FROM assets") ?? 0
                )
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.badRequest, "cannot read the backup in \(folder): \(error)")
        }
    }

    /// Every record readable as the protocol's record under its own name and zone, and every zone's checksum the
    /// one its live records give: a backup whose records were damaged or removed (which SQLite's own check cannot
    /// see) would otherwise be restored, and stop every installation's sync or lose records silently.
    static func checkRecords(_ db: Database, folder: String) throws {
        var sums: [String: UInt64] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT container, scope, zoneName, recordName, deleted, body FROM records")
        while let row = try rows.next() {
            let (zone, name): (String, String) = (row["zoneName"], row["recordName"])
            guard let record = try? SyncRecord.decode(Data((row["body"] as String).utf8)), record.recordName == name,
                record.zoneID.zoneName == zone
            else {
                throw SyncError(.badRequest, "the backup in \(folder) holds a damaged record: \(name) in zone \(zone)")
            }
            guard !(row["deleted"] as Bool) else { continue }
            let key = "\(row["container"] as String)\u{0}\(row["scope"] as String)\u{0}\(zone)"
            sums[key, default: 0] ^= ZoneChecksum.of(recordName: name, changeTag: record.recordChangeTag ?? "")
        }
        for row in try Row.fetchAll(db, sql: "SELECT container, scope, zoneName, checksum FROM zones WHERE NOT deleted") {
            let key = "\(row["container"] as String)\u{0}\(row["scope"] as String)\u{0}\(row["zoneName"] as String)"
            guard sums[key, default: 0] == UInt64(bitPattern: row["checksum"]) else {
                throw SyncError(
                    .badRequest,
                    "the backup in \(folder) does not hold what its zone \(row["zoneName"] as String) says it holds (its checksum differs): "
                        + "records were removed or changed"
                )
            }
        }
    }

    /// Replaces the data at `database` with the backup's, through SQLite's backup (so a reader never sees half of
    /// it), brings its schema up to date, and starts a new epoch. Stop the server first: one still running would
    /// answer from the restored data, but its open event streams would not be told.
    public static func restore(folder: String, over database: String) throws(SyncError) -> Summary {
        try refusePostgres(database, doing: "restore")
        var summary = try verify(folder: folder)
        let source = URL(fileURLWithPath: folder).appendingPathComponent(databaseName).path
        // Who may sync is not data to roll back: a credential rotated or revoked, or a token spent, since the backup
        // must not come back with it. What the database being replaced says of them is kept, when it can be read.
        let access = try? accessRows(database)
        do {
            try copyAssets(from: assetFolder(source), to: assetFolder(database))
            let backup = try DatabaseQueue(path: source, configuration: readOnly)
            let live = try DatabasePool(path: database)
            // As the server runs it: a restore and its new epoch reach the disk before it reports them.
            try live.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try backup.backup(to: live)
            try backup.close()
            try SQLiteStorage.migrator.migrate(live)
            try live.write { db in
                if let access {
                    for (table, rows) in access {
                        try db.execute(sql: "DELETE FROM \(table)")
                        for row in rows {
                            let columns = row.columnNames.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
                            let marks = databaseQuestionMarks(count: row.count)
                            try db.execute(
                                sql: "INSERT INTO \(table) (\(columns)) VALUES (\(marks))",
                                arguments: StatementArguments(Array(row.databaseValues))
                            )
                        }
                    }
                }
                try SQLiteStorage.startNewEpoch(db)
            }
            try live.close()
        } catch {
            throw SyncError(.internalError, "could not restore \(folder) over \(database): \(error)")
        }
        summary.keptAccess = access != nil
        return summary
    }

    /// The installations and enrolment tokens of the database about to be replaced, brought up to date first; nil
    /// when there is none.
    private static func accessRows(_ database: String) throws -> [(String, [Row])]? {
        guard FileManager.default.fileExists(atPath: database) else { return nil }
        let current = try DatabasePool(path: database)
        try current.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        defer { try? current.close() }
        try SQLiteStorage.migrator.migrate(current)
        return try current.read { db in
            try ["installations", "enrollments"].map { table in (table, try Row.fetchAll(db, sql: "SELECT * FROM \(table)")) }
        }
    }

    /// After PostgreSQL's data was restored with its own tools: starts a new epoch.
    public static func markRestored(database: String) async throws(SyncError) {
        let service = try await SyncService.open(database: database)
        do {
            try await service.startNewEpoch()
        } catch {
            await service.close()
            throw error
        }
        await service.close()
    }

    public struct Summary: Sendable {
        public var epoch: String
        public var records: Int
        public var zones: Int
        public var assets: Int
        /// A restore kept the installations and tokens of the database it replaced (false: it had none, or it
        /// could not be read, and they are as of the backup).
        public var keptAccess = false
    }

    private static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }

    private static func refusePostgres(_ database: String, doing what: String) throws(SyncError) {
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            throw SyncError(
                .badRequest,
                "PostgreSQL's data is backed up and restored with its own tools (pg_dump, or point-in-time recovery); "
                    + "to \(what) it, see docs/sync.md, then run `northwind-sync-server backup mark-restored` after a restore"
            )
        }
    }

    static func assetFolder(_ database: String) -> URL {
        let url = URL(fileURLWithPath: database)
        return url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + "-assets")
    }

    private static func copyAssets(from source: URL, to destination: URL) throws {
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: source.path)) ?? [] {
            let target = destination.appendingPathComponent(name)
            if !FileManager.default.fileExists(atPath: target.path) {
                try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: target)
            }
        }
    }
}
