import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension SyncEngineSide {
    /// The end of fetching a zone again from scratch (its token expired): removes the rows of that zone the server no
    /// longer has (not among the names noted while fetching), unless they have changes not yet sent, which stay and
    /// go up. In the transaction of the last page, so that a sync cut off before it starts over rather than skips it.
    static func reconcile(
        _ db: Database,
        zone: String,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws {
        // Children before parents, so that a parent is not refused for the children about to go.
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT tableName, recordID FROM sync_records r WHERE zoneName = ?1
                AND NOT EXISTS (SELECT 1 FROM sync_refetch f WHERE f.zoneName = ?1 AND f.recordName = r.recordID)
                """,
            arguments: [zone]
        )
        .map { ($0["tableName"] as String, $0["recordID"] as String) }
        .sorted { SyncTable.rank($0.0) > SyncTable.rank($1.0) }
        for (name, recordID) in rows {
            guard let table = SyncTable.byName[name], try !hasPendingChange(db, table: name, recordID: recordID),
                try !keepsMissingWhileOwnerCatchesUp(db, table: name, recordID: recordID, zone: zone, site: site)
            else { continue }
            // A version the server's restore may have lost, whose owner has caught up without it: offered to the
            // owner, in case it lost it too (a deletion since is its to say).
            if isAnotherSitesZone(zone, site: site), try heldSinceRestore(db, table: name, recordID: recordID) != nil {
                // A store itself restored (or resumed) offers nothing until its full sync is over: removed now,
                // the row would lose its base and never be offered (seed 4040, PostgreSQL, lost a shipment so).
                // It waits as the server's copy, a deletion, and `takeSuperseded` offers it after that sync.
                if try ShopSync.state(db, "restoredUntilFullSync") != nil {
                    try keepMissingUntilOffered(db, table: name, recordID: recordID, zone: zone)
                    continue
                }
                _ = try offerHeld(db, table: table, recordName: recordID, zone: zone, site: site, reupload: &reupload)
            }
            try removeRow(db, table: table, recordID: recordID, site: site, applied: &applied, reupload: &reupload)
        }
        // A waiting record the server no longer lists is gone there (a fetch from scratch carries no deletions).
        try db.execute(
            sql: """
                DELETE FROM sync_waiting WHERE zoneName = ?1
                AND recordName NOT IN (SELECT recordName FROM sync_refetch WHERE zoneName = ?1)
                """,
            arguments: [zone]
        )
        try db.execute(sql: "DELETE FROM sync_refetch WHERE zoneName = ?", arguments: [zone])
        try ShopSync.setState(db, "refetching:" + zone, nil)
    }
}

extension SyncEngineSide {
    static func saveBase(_ db: Database, table: String, record: SyncRecord) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_records (tableName, recordID, zoneName, changeTag, fields, modified, checksum)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (tableName, recordID) DO UPDATE SET zoneName = excluded.zoneName, changeTag = excluded.changeTag,
                  fields = excluded.fields, modified = excluded.modified, checksum = excluded.checksum
                """
        ).execute(arguments: [
            table, record.recordName, record.zoneID.zoneName, record.recordChangeTag ?? "", try ShopSync.encodeFields(record.fields),
            record.modified?.timestamp, Int64(bitPattern: checksum(recordName: record.recordName, changeTag: record.recordChangeTag ?? "")),
        ])
    }

    /// The version of a record to send again after a server restore (`noteServerEpoch`), with its field clocks;
    /// nil when there is none.
    static func resendFields(_ db: Database, table: String, recordID: String) throws -> [String: FieldValue]? {
        try resendVersion(db, table: table, recordID: recordID)?.fields
    }

    /// The version to send again, with the server's time of it when known.
    static func resendVersion(_ db: Database, table: String, recordID: String) throws -> (fields: [String: FieldValue], modified: Int64?)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT fields, modified FROM sync_resend WHERE tableName = ? AND recordID = ?"),
            arguments: [table, recordID]
        ).map { (try ShopSync.decodeFields($0["fields"]), $0["modified"]) }
    }

    static func isAnotherSitesZone(_ zone: String, site: SyncSite) -> Bool {
        zone != SyncTable.siteZone(site.siteCode) && !SyncTable.sharedZones.contains(zone)
    }

    static func forgetResend(_ db: Database, table: String, recordID: String) throws {
        try db.cachedStatement(sql: "DELETE FROM sync_resend WHERE tableName = ? AND recordID = ?").execute(arguments: [table, recordID])
    }

    /// Remembers that the server took this store's deletion of a record, with the server's epoch: if the server is
    /// restored from a backup that still has the record, the deletion goes up again (see
    /// `deletedHereBeforeTheServersRestore`).
    static func noteAcknowledgedDeletion(_ db: Database, table: String, recordID: String) throws {
        try ShopSync.setState(db, "deletedAck:\(table) \(recordID)", try ShopSync.state(db, "serverEpoch") ?? "")
    }

    /// Whether a record arriving live is one this store deleted, and the server acknowledged, in an earlier epoch
    /// than the server's now: a restore from a backup brought it back. In the epoch it was acknowledged in, a record
    /// deleted here comes back only when another site restores it on purpose (as the parent of its own record).
    static func deletedHereBeforeTheServersRestore(_ db: Database, table: String, record: SyncRecord) throws -> Bool {
        guard let epoch = try ShopSync.state(db, "deletedAck:\(table) \(record.recordName)"), epoch != (try ShopSync.state(db, "serverEpoch") ?? "")
        else {
            return false
        }
        let here = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(table) WHERE recordID = ?"), arguments: [record.recordName]) ?? false
        return !here
    }

    /// Also forgets a version waiting to go up again after a server restore: the row is gone or starts afresh.
    static func forgetBase(_ db: Database, table: String, recordID: String) throws {
        try db.cachedStatement(sql: "DELETE FROM sync_records WHERE tableName = ? AND recordID = ?").execute(arguments: [table, recordID])
        try forgetResend(db, table: table, recordID: recordID)
    }

    /// A whole record that could not be applied or sent: into the inbox with all its fields, so nothing is dropped
    /// silently.
    static func discardWhole(_ db: Database, table: String, record: SyncRecord, reason: String, applied: inout SyncApplied) throws {
        try recordConflict(db, table: table, recordID: record.recordName, DiscardedValue(field: "*", lost: .string(record.json)), reason: reason)
        applied.discarded += 1
    }

    /// A change the server refused: into the inbox once, remembered so that it is not sent again (nor restored as a
    /// parent) until someone edits it here, and named as the last refusal for `sync status`.
    static func refuse(_ db: Database, table: String, record: SyncRecord, reason: String, applied: inout SyncApplied) throws {
        try discardWhole(db, table: table, record: record, reason: "the server refused this change: \(reason)", applied: &applied)
        // A version held to send again after a server restore is in the inbox now, and is not sent again.
        try forgetResend(db, table: table, recordID: record.recordName)
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_refused (tableName, recordID, reason) VALUES (?, ?, ?)",
            arguments: [table, record.recordName, reason]
        )
        try ShopSync.setState(db, "lastRefusal", "\(Timestamp.now.description): \(table) \(record.recordName): \(reason.prefix(300))")
        applied.refused += 1
    }

    static func isRefused(_ db: Database, table: String, recordID: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sync_refused WHERE tableName = ? AND recordID = ?)"),
            arguments: [table, recordID]
        ) ?? false
    }

    static func forgetRefusal(_ db: Database, table: String, recordID: String) throws {
        try db.cachedStatement(sql: "DELETE FROM sync_refused WHERE tableName = ? AND recordID = ?").execute(arguments: [table, recordID])
    }

    /// The inbox keeps every open entry; past `inboxCapacity` entries, the oldest resolved ones go.
    static let inboxCapacity = 10_000

    static func pruneInbox(_ db: Database) throws {
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_conflicts") ?? 0
        guard count > inboxCapacity else { return }
        try db.execute(
            sql: """
                DELETE FROM sync_conflicts WHERE id IN (
                  SELECT id FROM sync_conflicts WHERE resolvedAt IS NOT NULL ORDER BY id LIMIT ?)
                """,
            arguments: [count - inboxCapacity]
        )
    }

    static func recordConflict(_ db: Database, table: String, recordID: String, _ value: DiscardedValue, reason: String) throws {
        // Values keep their type, so that one can be restored exactly.
        func text(_ field: FieldValue?) throws -> String? {
            guard let field else { return nil }
            return String(decoding: try JSONEncoder().encode(field), as: UTF8.self)
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_conflicts (tableName, recordID, field, keptValue, keptClock, keptSite, lostValue, lostClock, lostSite, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        .execute(arguments: [
            table, recordID, value.field, try text(value.kept), value.keptClock?.text, value.keptClock?.site, try text(value.lost),
            value.lostClock?.text, value.lostClock?.site, reason,
        ])
    }

    static func lastSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0
    }

    /// What a download or an acknowledgement wrote is not this store's change: live pages see it, the outbox not.
    /// Rows whose merge kept local values get a fresh entry, to go up again.
    static func finishApply(_ db: Database, after before: Int64, reupload: [(String, String)]) throws {
        try pruneInbox(db)
        try db.execute(sql: "UPDATE change_log SET origin = 'sync' WHERE seq > ?", arguments: [before])
        for (table, recordID) in reupload {
            try db.cachedStatement(
                sql: "INSERT INTO change_log (tableName, recordID, operation, origin) VALUES (?, ?, 'update', 'local')"
            )
            .execute(arguments: [table, recordID])
        }
    }
}
