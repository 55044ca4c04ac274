import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension SyncEngineSide {
    /// How long a removed row is kept for a late record that refers to it.
    static let removedRowsKept: TimeInterval = 30 * 24 * 3600

    /// A shared zone's row that a deletion from the server removed here, kept as it was (`sync_removed`): a record
    /// that refers to it may still come, written elsewhere before the deletion was known there.
    static func keepRemoved(_ db: Database, table: SyncTable, kept: SyncRecord, zone: String) throws {
        guard SyncTable.sharedZones.contains(zone) else { return }
        try db.cachedStatement(sql: "DELETE FROM sync_removed WHERE removedAt < ?")
            .execute(arguments: [Timestamp(Date(timeIntervalSinceNow: -removedRowsKept))])
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_removed (tableName, recordID, zoneName, body) VALUES (?, ?, ?, ?)")
            .execute(arguments: [table.name, kept.recordName, zone, kept.json])
    }

    /// Records still waiting once their zone is fetched to its end, for a row that a deletion from the server
    /// removed here: the row comes back and goes up again, with a word in the inbox. Had the record come first, the
    /// deletion would have kept the row (`removeRow`): an order is history and keeps its customer, whichever of
    /// the two arrives first. True when any row came back.
    static func bringBackRemovedParents(
        _ db: Database,
        of waiting: [SyncRecord],
        zone: String,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> Bool {
        var broughtBack = false
        for waiting in waiting where waiting.zoneID.zoneName == zone && !waiting.deleted {
            guard let table = SyncTable.byName[waiting.recordType] else { continue }
            let record = table.readable(waiting)
            for column in try table.columns(db) {
                guard let parentName = column.parent, let parent = SyncTable.byName[parentName],
                    case .reference(let reference)? = record.fields[column.name],
                    try Int64.fetchOne(db, sql: "SELECT id FROM \(parent.name) WHERE recordID = ?", arguments: [reference.recordName]) == nil,
                    let body = try String.fetchOne(
                        db,
                        sql: "SELECT body FROM sync_removed WHERE tableName = ? AND recordID = ?",
                        arguments: [parent.name, reference.recordName]
                    )
                else { continue }
                let kept = try SyncRecord.decode(Data(body.utf8))
                do {
                    // Its own parents gone too, or its code taken since: it stays removed, and the record waits.
                    guard try writeRow(db, table: parent, recordID: reference.recordName, fields: kept.fields, site: site) else { continue }
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    continue
                }
                try db.execute(
                    sql: "DELETE FROM sync_removed WHERE tableName = ? AND recordID = ?",
                    arguments: [parent.name, reference.recordName]
                )
                try recordConflict(
                    db,
                    table: parent.name,
                    recordID: reference.recordName,
                    DiscardedValue(field: "*", kept: .string(kept.json)),
                    reason: "deleted at another site, but \(table.name) \(record.recordName) of \(zone) refers to it: brought back"
                )
                reupload.append((parent.name, reference.recordName))
                applied.discarded += 1
                broughtBack = true
            }
        }
        return broughtBack
    }
}
