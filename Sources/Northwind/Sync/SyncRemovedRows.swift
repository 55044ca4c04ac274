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

    /// Records still waiting once their zone is fetched to its end, for rows that a deletion from the server
    /// removed here: the rows (and any of their own parents removed so) come back and go up again, with a word in
    /// the inbox. Had the record come first, the deletion would have kept them (`removeRow`): an order is history
    /// and keeps its customer, whichever of the two arrives first. A record that would still lack a parent brings
    /// nothing back. While the zone is fetched from scratch, only records the fetch listed count: the others are
    /// gone from the server. True when any row came back.
    static func bringBackRemovedParents(
        _ db: Database,
        of waiting: [SyncRecord],
        zone: String,
        listed: Set<String>,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> Bool {
        let refetching = try ShopSync.state(db, "refetching:" + zone) != nil
        var broughtBack = false
        for waiting in waiting where waiting.zoneID.zoneName == zone && !waiting.deleted {
            guard let table = SyncTable.byName[waiting.recordType] else { continue }
            if refetching, try !listed.contains(waiting.recordName) && !isListedInRefetch(db, zone: zone, recordName: waiting.recordName) {
                continue
            }
            let record = table.readable(waiting)
            guard let rows = try removedParents(db, of: table, fields: record.fields, depth: 0), !rows.isEmpty else { continue }
            var written = false
            do {
                try db.inSavepoint {
                    for (parent, kept) in rows {
                        // A code taken since, or pictures' bytes not here: it stays removed, and the record waits.
                        guard try writeRow(db, table: parent, recordID: kept.recordName, fields: kept.fields, site: site) else { return .rollback }
                    }
                    written = true
                    return .commit
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                continue
            }
            guard written else { continue }
            for (parent, kept) in rows {
                try db.execute(sql: "DELETE FROM sync_removed WHERE tableName = ? AND recordID = ?", arguments: [parent.name, kept.recordName])
                try recordConflict(
                    db,
                    table: parent.name,
                    recordID: kept.recordName,
                    DiscardedValue(field: "*", kept: .string(kept.json)),
                    reason: "deleted at another site, but \(table.name) \(record.recordName) of \(zone) refers to it: brought back"
                )
                reupload.append((parent.name, kept.recordName))
                applied.discarded += 1
            }
            broughtBack = true
        }
        return broughtBack
    }

    /// The removed rows a record's missing parents are, parents first (a product and its removed category); nil when
    /// one is missing and was not removed so, or the chain is longer than any in the schema.
    private static func removedParents(
        _ db: Database,
        of table: SyncTable,
        fields: [String: FieldValue],
        depth: Int
    ) throws -> [(SyncTable, SyncRecord)]? {
        var rows: [(SyncTable, SyncRecord)] = []
        for column in try table.columns(db) {
            guard let parentName = column.parent, let parent = SyncTable.byName[parentName],
                case .reference(let reference)? = fields[column.name],
                try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(parent.name) WHERE recordID = ?"), arguments: [reference.recordName])
                    == nil,
                !rows.contains(where: { $0.1.recordName == reference.recordName })
            else { continue }
            guard depth < 4,
                let body = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT body FROM sync_removed WHERE tableName = ? AND recordID = ?"),
                    arguments: [parent.name, reference.recordName]
                )
            else { return nil }
            let kept = try SyncRecord.decode(Data(body.utf8))
            guard let above = try removedParents(db, of: parent, fields: kept.fields, depth: depth + 1) else { return nil }
            rows += above.filter { row in !rows.contains { $0.1.recordName == row.1.recordName } } + [(parent, kept)]
        }
        return rows
    }

    /// Whether the fetch of `zone` from scratch under way has listed this record.
    static func isListedInRefetch(_ db: Database, zone: String, recordName: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sync_refetch WHERE zoneName = ? AND recordName = ?)"),
            arguments: [zone, recordName]
        ) ?? false
    }
}
