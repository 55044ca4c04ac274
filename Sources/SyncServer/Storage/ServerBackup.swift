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

    /// Replaces the data at `database` with the backup's, through SQLite's backup (so a reader never sees half of
    /// it), brings its schema up to date, and starts a new epoch. Stop the server first: one still running would
    /// answer from the restored data, but its open event streams would not be told.
    public static func restore(folder: String, over database: String) throws(SyncError) -> Summary {
        try refusePostgres(database, doing: "restore")
        let summary = try verify(folder: folder)
        let source = URL(fileURLWithPath: folder).appendingPathComponent(databaseName).path
        do {
            try copyAssets(from: assetFolder(source), to: assetFolder(database))
            let backup = try DatabaseQueue(path: source, configuration: readOnly)
            let live = try DatabasePool(path: database)
            try backup.backup(to: live)
            try backup.close()
            try SQLiteStorage.migrator.migrate(live)
            try live.write { db in try SQLiteStorage.startNewEpoch(db) }
            try live.close()
        } catch {
            throw SyncError(.internalError, "could not restore \(folder) over \(database): \(error)")
        }
        return summary
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
