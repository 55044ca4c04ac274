import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// After the server's restore, another site's zone comes back as the backup had it until that site (its owner) has
/// sent again what the restore lost. A store that held a newer version of one of its records keeps it until then,
/// instead of showing an order that shipped as new again, or losing an order for a while: the server's older copy
/// waits in `sync_state` (`superseded:ZONE RECORD`), and is applied once the owner has caught up, unless a newer
/// version (the owner's put-back) replaced it first.
extension SyncEngineSide {
    /// Notes which zones' owners have not yet caught up after the server's restore (`ownerCaughtUp` false in the
    /// zone listing). A server that does not say is taken as caught up, as before.
    public func noteOwnersCatchingUp(_ zones: Set<String>) async throws(NorthwindError) {
        let known = try await read { db in
            Set(try String.fetchAll(db, sql: "SELECT substr(key, 14) FROM sync_state WHERE key LIKE 'ownerPending:%'"))
        }
        guard known != zones else { return }
        try await write { db in
            try db.execute(sql: "DELETE FROM sync_state WHERE key LIKE 'ownerPending:%'")
            for zone in zones { try ShopSync.setState(db, "ownerPending:" + zone, "1") }
        }
    }

    /// The epoch in which this store last told the server it had sent again what a restore lost (its outbox
    /// emptied since it saw the epoch).
    public func caughtUpEpoch() async throws(NorthwindError) -> String? {
        try await read { db in try ShopSync.state(db, "caughtUpEpoch") }
    }

    public func noteCaughtUp(epoch: String) async throws(NorthwindError) {
        try await write { db in try ShopSync.setState(db, "caughtUpEpoch", epoch) }
    }

    static func supersededKey(_ zone: String, _ recordName: String) -> String { "superseded:\(zone) \(recordName)" }

    /// The time of the version held here, when it is newer than what the restored server holds and another site's
    /// owner has yet to send it again: nil otherwise.
    private static func heldNewerThanRestore(_ db: Database, table: String, recordID: String, zone: String, site: SyncSite) throws -> Int64? {
        guard isAnotherSitesZone(zone, site: site), try ShopSync.state(db, "ownerPending:" + zone) != nil,
            let through = try ShopSync.state(db, "restoredThrough").flatMap({ Int64($0) }),
            let held = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT modified FROM sync_records WHERE tableName = ? AND recordID = ?"),
                arguments: [table, recordID]
            ),
            held >= through
        else { return nil }
        return held
    }

    /// Whether the server's copy of a record is an older one the restore brought back, over a newer version held
    /// here whose owner has yet to send it again: then the version here stays, and the copy waits.
    static func keepsNewerWhileOwnerCatchesUp(_ db: Database, table: SyncTable, record: SyncRecord, site: SyncSite) throws -> Bool {
        let key = supersededKey(record.zoneID.zoneName, record.recordName)
        try ShopSync.setState(db, key, nil)
        guard
            let held = try heldNewerThanRestore(db, table: table.name, recordID: record.recordName, zone: record.zoneID.zoneName, site: site),
            (record.modified?.timestamp ?? 0) < held
        else { return false }
        try ShopSync.setState(db, key, record.json)
        return true
    }

    /// At the end of fetching a zone again: whether a record the restored server lacks stays here for now, because
    /// the version held is newer than the restored data and its owner has yet to send it again.
    static func keepsMissingWhileOwnerCatchesUp(_ db: Database, table: String, recordID: String, zone: String, site: SyncSite) throws -> Bool {
        guard try heldNewerThanRestore(db, table: table, recordID: recordID, zone: zone, site: site) != nil else { return false }
        let gone = SyncRecord(recordName: recordID, recordType: table, zoneID: ZoneID(zone), deleted: true)
        try ShopSync.setState(db, supersededKey(zone, recordID), gone.json)
        return true
    }

    /// The server's copies that waited for the zone's owner, once it has caught up, unless the page brings a newer
    /// version (`arriving`): the owner lost the newer version too, so the one held here goes to the inbox, whole, and
    /// the server's copy is returned to be applied; a record the server lacks is removed here (children first).
    static func takeSuperseded(
        _ db: Database,
        zone: String,
        arriving: [SyncRecord],
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> [SyncRecord] {
        guard try ShopSync.state(db, "ownerPending:" + zone) == nil else { return [] }
        let prefix = supersededKey(zone, "")
        let bodies = try String.fetchAll(db, sql: "SELECT value FROM sync_state WHERE substr(key, 1, length(?1)) = ?1", arguments: [prefix])
        guard !bodies.isEmpty else { return [] }
        try db.execute(sql: "DELETE FROM sync_state WHERE substr(key, 1, length(?1)) = ?1", arguments: [prefix])
        let newer = Set(arriving.map(\.recordName))
        let waited = try bodies.map { try SyncRecord.decode(Data($0.utf8)) }.filter { !newer.contains($0.recordName) }
        var copies: [SyncRecord] = []
        for record in waited.sorted(by: { SyncTable.rank($0.recordType) > SyncTable.rank($1.recordType) }) {
            guard let table = SyncTable.byName[record.recordType] else { continue }
            if let held = try RecordMapping.record(db, table: table, recordID: record.recordName, site: site, zoneName: zone) {
                try discardWhole(
                    db,
                    table: table.name,
                    record: held,
                    reason: "a version the sync server lost in its restore, and its writer too: the writer has caught up without it",
                    applied: &applied
                )
            }
            if record.deleted {
                try removeRow(db, table: table, recordID: record.recordName, site: site, applied: &applied, reupload: &reupload)
            } else {
                copies.append(record)
            }
        }
        return copies
    }

    /// The records of a zone whose server copy waits: the checksum counts the server's copy, not the version here.
    static func supersededChecksum(_ db: Database, zone: String) throws -> UInt64 {
        var sum: UInt64 = 0
        let prefix = supersededKey(zone, "")
        for body in try String.fetchAll(db, sql: "SELECT value FROM sync_state WHERE substr(key, 1, length(?1)) = ?1", arguments: [prefix]) {
            let server = try SyncRecord.decode(Data(body.utf8))
            if let tag = try String.fetchOne(
                db,
                sql: "SELECT changeTag FROM sync_records WHERE tableName = ? AND recordID = ?",
                arguments: [server.recordType, server.recordName]
            ) {
                sum ^= checksum(recordName: server.recordName, changeTag: tag)
            }
            if !server.deleted { sum ^= checksum(recordName: server.recordName, changeTag: server.recordChangeTag ?? "") }
        }
        return sum
    }
}
