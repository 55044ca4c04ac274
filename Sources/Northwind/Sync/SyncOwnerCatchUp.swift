import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// After the server's restore, another site's zone comes back as the backup had it until that site (its owner) has
/// sent again what the restore lost. A store that held a newer version of one of its records keeps it until then,
/// instead of showing an order that shipped as new again, or losing an order for a while: the server's older copy
/// waits in `sync_state` (`superseded:ZONE RECORD`) until a newer version (the owner's put-back) replaces it, or the
/// owner, caught up without it, answers this store's offer of it (`RecordOffers.swift`).
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

    /// The time of the version held here of another site's record, when it is newer than what the restored server
    /// holds and that site has yet to send it again: nil otherwise.
    private static func heldNewerThanRestore(_ db: Database, table: String, recordID: String, zone: String, site: SyncSite) throws -> Int64? {
        guard isAnotherSitesZone(zone, site: site), try ShopSync.state(db, "ownerPending:" + zone) != nil else { return nil }
        return try heldSinceRestore(db, table: table, recordID: recordID)
    }

    /// The server's time of the version held here, when it is at or after the newest change the restored server's
    /// data holds (so the restore may have lost it): nil otherwise.
    static func heldSinceRestore(_ db: Database, table: String, recordID: String) throws -> Int64? {
        guard let through = try ShopSync.state(db, "restoredThrough").flatMap({ Int64($0) }),
            let held = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT modified FROM sync_records WHERE tableName = ? AND recordID = ?"),
                arguments: [table, recordID]
            ),
            held >= through
        else { return nil }
        return held
    }

    /// Whether the server's copy of a record is older than the version held here: an older copy the restore
    /// brought back while the owner has yet to send the record again; or, once it has, a copy whose value of a
    /// field was written before the value held here (the owner lost that value too, and the server's restore did).
    /// Then the version here stays, and the copy waits for the owner's put-back, or its answer to this store's offer.
    static func keepsNewerWhileOwnerCatchesUp(_ db: Database, table: SyncTable, record: SyncRecord, site: SyncSite) throws -> Bool {
        let key = supersededKey(record.zoneID.zoneName, record.recordName)
        try ShopSync.setState(db, key, nil)
        if let held = try heldNewerThanRestore(db, table: table.name, recordID: record.recordName, zone: record.zoneID.zoneName, site: site),
            (record.modified?.timestamp ?? 0) < held
        {
            try ShopSync.setState(db, key, record.json)
            return true
        }
        // Not only a copy from the restored data: the owner may have sent again a version older than the one held
        // (its own backup was newer than the server's, but older than the change). An edit the owner wrote while
        // its clock ran behind is offered back to it, refused, and applied, with an inbox entry here.
        guard isAnotherSitesZone(record.zoneID.zoneName, site: site), try ShopSync.state(db, "restoredThrough") != nil,
            try writtenBeforeHeld(db, table: table.name, record: record)
        else { return false }
        try ShopSync.setState(db, key, record.json)
        return true
    }

    /// Whether a copy of another site's record holds a value of a field written before the value held here. Only
    /// that site writes its zone, and its clock moves forward, so this is a version the server lost.
    private static func writtenBeforeHeld(_ db: Database, table: String, record: SyncRecord) throws -> Bool {
        guard !record.deleted,
            let json = try String.fetchOne(
                db.cachedStatement(sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?"),
                arguments: [table, record.recordName]
            )
        else { return false }
        let held = try ShopSync.decodeFields(json)
        let (heldClocks, copyClocks) = (FieldClock.clocks(of: held), FieldClock.clocks(of: record.fields))
        return heldClocks.contains { field, clock in
            guard let copy = copyClocks[field] else { return false }
            return copy < clock && held[field] != record.fields[field]
        }
    }

    /// At the end of fetching a zone again: whether a record the restored server lacks stays here for now, because
    /// the version held is newer than the restored data and its owner has yet to send it again.
    static func keepsMissingWhileOwnerCatchesUp(_ db: Database, table: String, recordID: String, zone: String, site: SyncSite) throws -> Bool {
        guard try heldNewerThanRestore(db, table: table, recordID: recordID, zone: zone, site: site) != nil else { return false }
        try keepMissingUntilOffered(db, table: table, recordID: recordID, zone: zone)
        return true
    }

    /// The row stays, with its base, and the server's copy (a deletion) waits for `takeSuperseded`.
    static func keepMissingUntilOffered(_ db: Database, table: String, recordID: String, zone: String) throws {
        let gone = SyncRecord(recordName: recordID, recordType: table, zoneID: ZoneID(zone), deleted: true)
        try ShopSync.setState(db, supersededKey(zone, recordID), gone.json)
    }

    /// The server's copies that waited for the zone's owner, once it has caught up: the owner lost the newer version
    /// held here too, so it is offered to the owner (`offerHeld`), and kept while the offer waits. Once the owner
    /// has taken it back, its version comes and the copy is dropped; once it has refused, the version held here goes
    /// to the inbox, whole, and the server's copy is returned to be applied (a record the server lacks is removed
    /// here, children first).
    static func takeSuperseded(
        _ db: Database,
        zone: String,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> [SyncRecord] {
        // A store restored offers nothing until its full sync is over (`offerHeld`): the copies wait until then,
        // rather than being applied over versions never offered.
        guard try ShopSync.state(db, "ownerPending:" + zone) == nil, try ShopSync.state(db, "restoredUntilFullSync") == nil else { return [] }
        let prefix = supersededKey(zone, "")
        let waited = try ShopSync.states(db, prefix: prefix)
            .map { try SyncRecord.decode(Data($0.utf8)) }
        var copies: [SyncRecord] = []
        for record in waited.sorted(by: { SyncTable.rank($0.recordType) > SyncTable.rank($1.recordType) }) {
            guard let table = SyncTable.byName[record.recordType] else { continue }
            let key = supersededKey(zone, record.recordName)
            if let held = try RecordMapping.record(db, table: table, recordID: record.recordName, site: site, zoneName: zone) {
                let reason: String
                // A record the server lacks may have been deleted by its owner since: it goes (it is offered, in
                // case the owner lost it), unless it is a ledger row, which is never deleted and waits as a version does.
                let state = try offerHeld(db, table: table, recordName: record.recordName, zone: zone, site: site, reupload: &reupload)
                switch record.deleted && !table.appendOnly ? .none : state {
                case .waiting: continue
                case .accepted:
                    try ShopSync.setState(db, key, nil)
                    continue
                case .refused(let why):
                    reason = "a version the sync server lost in its restore, and its writer too, which did not take it back: \(why)"
                case .none:
                    reason = "a version the sync server lost in its restore, and its writer too: the writer has caught up without it"
                }
                try discardWhole(db, table: table.name, record: held, reason: reason, applied: &applied)
            }
            try ShopSync.setState(db, key, nil)
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
        for body in try ShopSync.states(db, prefix: prefix) {
            let server = try SyncRecord.decode(Data(body.utf8))
            if let tag = try String.fetchOne(
                db.cachedStatement(sql: "SELECT changeTag FROM sync_records WHERE tableName = ? AND recordID = ?"),
                arguments: [server.recordType, server.recordName]
            ) {
                sum ^= checksum(recordName: server.recordName, changeTag: tag)
            }
            if !server.deleted { sum ^= checksum(recordName: server.recordName, changeTag: server.recordChangeTag ?? "") }
        }
        return sum
    }

    /// Whether the server's answer to a version sent again will come with a page of the fetch of its zone from
    /// scratch: the fetch is under way and has not brought this record yet. The server's version may be one record
    /// of a change (an order shipped, with its shipment and movements) whose others come only with the zone's
    /// pages: merged at once, the row would show half of it. The page merges it instead (`heldForResend`). Only in
    /// this store's own zone, which no one else may write: a shared record may be deleted meanwhile, and a fetch
    /// from scratch brings no deletions (seed 4040 kept a customer so).
    static func comesWithItsPage(_ db: Database, table: SyncTable, record: SyncRecord, site: SyncSite) throws -> Bool {
        let zone = record.zoneID.zoneName
        guard zone == SyncTable.siteZone(site.siteCode), try ShopSync.state(db, "refetching:" + zone) != nil,
            try resendFields(db, table: table.name, recordID: record.recordName) != nil
        else { return false }
        return try !isListedInRefetch(db, zone: zone, recordName: record.recordName)
    }

    /// A row whose version went up again after the server's restore and is not settled yet: the server's version
    /// is merged with it by clock, so that values newer here go up again rather than being overwritten.
    static func heldForResend(_ db: Database, table: SyncTable, recordID: String) throws -> Bool {
        guard try resendFields(db, table: table.name, recordID: recordID) != nil else { return false }
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(table.name) WHERE recordID = ?)"), arguments: [recordID])
            ?? false
    }
}
