import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// A new shop's first download (issue 41, "join from a snapshot"): every zone it reads is fetched from scratch into
/// `sync_snapshot`, page by page, and loads in one transaction only once each zone's records match the checksum the
/// server gave with the zone's last page. The store never shows half a company, and a download cut off anywhere
/// (a crash, `kill -9`, a lost network) leaves it as it was: the next sync starts the staging again. Rows go in
/// without the checks for local edits, restores and rows already here, which find nothing in a store that has
/// neither changes of its own nor sync history; that condition is checked again inside the load's transaction.
extension SyncEngineSide {
    /// Whether this store's next full download is a first one that loads from a snapshot: it joined a company with
    /// data, has fetched no zone yet, has had nothing acknowledged since it joined, and holds no change of its own.
    /// A store that no longer qualifies stops asking, and staging left by a download cut off (or loaded by another
    /// process meanwhile) is dropped. Reads only, unless there is something to drop.
    public func beginSnapshot() async throws(NorthwindError) -> Bool {
        let (marked, qualifies, staged) = try await read { db in
            (
                try ShopSync.state(db, "snapshot") != nil,
                try Self.qualifiesForSnapshot(db),
                try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_snapshot LIMIT 1") ?? false
            )
        }
        if marked, qualifies { return true }
        if marked || staged { try await write { db in try Self.forgetSnapshot(db) } }
        return false
    }

    /// Stages one page of a zone fetched from scratch; its first page (`first`, fetched without a token) drops
    /// what an earlier attempt staged for the zone, and its last (`moreComing` false) notes the zone's token and
    /// the server's checksum. A record sent again later in the feed (changed while the zone was read) replaces its
    /// earlier version.
    public func stageSnapshot(
        zone: String,
        records: [SyncRecord],
        first: Bool,
        token: String,
        moreComing: Bool,
        checksum: String?
    ) async throws(NorthwindError) {
        try await write { db in
            if first {
                try db.execute(sql: "DELETE FROM sync_snapshot WHERE zoneName = ?", arguments: [zone])
                try ShopSync.setState(db, "snapshotZone:" + zone, nil)
            }
            for record in records {
                if record.deleted {
                    try db.cachedStatement(sql: "DELETE FROM sync_snapshot WHERE zoneName = ? AND recordName = ?")
                        .execute(arguments: [zone, record.recordName])
                } else {
                    try db.cachedStatement(
                        sql:
                            "INSERT OR REPLACE INTO sync_snapshot (zoneName, recordName, recordType, changeTag, body) VALUES (?, ?, ?, ?, ?)"
                    )
                    .execute(arguments: [zone, record.recordName, record.recordType, record.recordChangeTag ?? "", record.json])
                }
            }
            if !moreComing { try ShopSync.setState(db, "snapshotZone:" + zone, "\(checksum ?? "-") \(token)") }
            CrashPoint.reach("snapshot-stage")
        }
    }

    /// Loads the staged zones in one transaction, parents' tables first, and sets each zone's token; nil (and
    /// nothing loaded, the staging and the snapshot mark dropped) when a zone is missing or differs from its
    /// checksum, or the store no longer qualifies: the download then goes the ordinary way, from scratch.
    /// `assets`: the bytes of the pictures staged records name (`assetsToFetch` counts staged records).
    public func loadSnapshot(zones: [String], assets: [String: Data] = [:]) async throws(NorthwindError) -> SyncApplied? {
        try await syncWrite { db in
            guard try Self.qualifiesForSnapshot(db), let site = try syncSite(db, assets: assets) else {
                try Self.forgetSnapshot(db)
                return nil
            }
            // Only the zones checked here load: another download's staging is not this one's to load.
            let zoneList = "(" + Array(repeating: "?", count: zones.count).joined(separator: ", ") + ")"
            var tokens: [String: String] = [:]
            for zone in zones {
                guard let staged = try ShopSync.state(db, "snapshotZone:" + zone), let space = staged.firstIndex(of: " "),
                    try Self.stagedChecksum(db, zone: zone) == staged[..<space].lowercased()
                else {
                    try Self.forgetSnapshot(db)
                    return nil
                }
                tokens[zone] = String(staged[staged.index(after: space)...])
            }
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            // The whole company is one transaction: pages kept in memory until commit, not spilled to the WAL midway.
            try db.execute(sql: "PRAGMA cache_size = -65536")
            defer { try? db.execute(sql: "PRAGMA cache_size = -2000") }
            let before = try Self.lastSeq(db)
            var applied = SyncApplied()
            var reupload: [(String, String)] = []
            var leftover: [SyncRecord] = []
            try Schema.rebuildingSummaries(db) {
                try Schema.loggingInsertsAtOnce(db) {
                    for table in SyncTable.all {
                        var records: [SyncRecord] = []
                        let bodies = try String.fetchCursor(
                            db,
                            sql: "SELECT body FROM sync_snapshot WHERE recordType = ? AND zoneName IN \(zoneList)",
                            arguments: StatementArguments([table.name] + zones)
                        )
                        while let body = try bodies.next() { records.append(try SyncRecord.decode(Data(body.utf8))) }
                        leftover += try Self.applyInOrder(db, records, site: site, applied: &applied, reupload: &reupload, loading: true)
                    }
                    // A row whose parent is in a later table (an employee's manager, say).
                    leftover = try Self.applyInOrder(db, leftover, site: site, applied: &applied, reupload: &reupload, loading: true)
                }
            }
            let known = SyncTable.all.map { "'\($0.name)'" }.joined(separator: ",")
            for body in try String.fetchAll(
                db,
                sql: "SELECT body FROM sync_snapshot WHERE recordType NOT IN (\(known)) AND zoneName IN \(zoneList)",
                arguments: StatementArguments(zones)
            ) {
                try Self.hold(db, try SyncRecord.decode(Data(body.utf8)))
            }
            for record in leftover { try Self.keepWaiting(db, record) }
            try Self.finishApply(db, after: before, reupload: reupload)
            for (zone, token) in tokens { try ShopSync.setState(db, "token:" + zone, token) }
            try Self.forgetSnapshot(db)
            // Everything written, nothing committed: a crash here must leave the store as it was.
            CrashPoint.reach("snapshot-load")
            applied.waiting = leftover.count
            return applied
        }
    }

    /// A store with no sync history and no change of its own since it joined: the outbox where joining left it
    /// (nothing acknowledged since, not even a row created and deleted again), no token, no base.
    static func qualifiesForSnapshot(_ db: Database) throws -> Bool {
        let uploaded = Int64(try ShopSync.state(db, "uploadedThrough") ?? "0") ?? 0
        guard try ShopSync.state(db, "snapshot") == String(uploaded) else { return false }
        let hasToken = try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_state WHERE key LIKE 'token:%' LIMIT 1") ?? false
        let hasBase = try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_records LIMIT 1") ?? false
        let hasLocal =
            try Bool.fetchOne(db, sql: "SELECT 1 FROM change_log WHERE seq > ? AND origin = 'local' AND NOT localOnly LIMIT 1", arguments: [uploaded])
            ?? false
        return !hasToken && !hasBase && !hasLocal
    }

    static func forgetSnapshot(_ db: Database) throws {
        try ShopSync.setState(db, "snapshot", nil)
        try db.execute(sql: "DELETE FROM sync_snapshot")
        try db.execute(sql: "DELETE FROM sync_state WHERE key LIKE 'snapshotZone:%'")
    }
}
