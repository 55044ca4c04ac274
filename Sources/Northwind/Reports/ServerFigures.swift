import Foundation
import GRDB
import NorthwindStore

/// What a running server says about itself on `/readyz` and `/metrics`: read in one short transaction, cheap
/// enough for a scrape every few seconds.
public struct ServerFigures: Sendable, Equatable {
    /// Every migration this version knows has run.
    public var migrated: Bool
    /// Bytes on disk: the store file and its write-ahead log.
    public var storeBytes: Int64
    /// Joined to a sync server.
    public var joined: Bool
    /// Local changes the server has not acknowledged yet.
    public var outboxDepth: Int
    /// Seconds since the last sync that succeeded; nil before the first.
    public var secondsSinceSync: Double?
    /// The sync server was out of reach at the last attempt.
    public var syncOffline: Bool
    /// Seconds since the newest backup that was checked good; nil when there is none.
    public var secondsSinceBackup: Double?
}

extension Reports {
    /// The figures `/readyz` and `/metrics` show, with the backups in `folder`.
    public func serverFigures(backups folder: BackupFolder, now: Timestamp = .now) async throws(NorthwindError) -> ServerFigures {
        let (migrated, status) = try await read { db in
            (try Schema.migrator.hasCompletedMigrations(db), try Self.quickSyncState(db))
        }
        let path = store.configuration.path
        let bytes = [path, path + "-wal"].reduce(Int64(0)) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0)
        }
        let newestGood = folder.list().first { $0.isVerified }.flatMap { Timestamp($0.createdAt) }
        let seconds = { (time: Timestamp?) in time.map { Double(now.milliseconds - $0.milliseconds) / 1000 } }
        return ServerFigures(
            migrated: migrated,
            storeBytes: bytes,
            joined: status.joined,
            outboxDepth: status.pending,
            secondsSinceSync: seconds(status.lastSuccess.flatMap(Timestamp.init)),
            syncOffline: status.offline,
            secondsSinceBackup: seconds(newestGood)
        )
    }

    private static func quickSyncState(_ db: Database) throws -> (joined: Bool, pending: Int, lastSuccess: String?, offline: Bool) {
        (
            try ShopSync.membership(db) != nil, try ShopSync.pendingCount(db), try ShopSync.state(db, "lastSuccess"),
            try ShopSync.state(db, "offlineSince") != nil
        )
    }
}
