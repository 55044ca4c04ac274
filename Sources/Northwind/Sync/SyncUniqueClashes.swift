import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension SyncEngineSide {
    /// Writes a downloaded record, settling a clash on a unique column (two shops created the customer code ALFKI,
    /// or the category "Teas", offline). The value written first by clock (then by record id) keeps it; the other
    /// record's value gets its author's site code appended ("ALFKI-OXF"), here and, through the outbox, everywhere:
    /// every installation that meets the clash picks the same winner and the same new value. The inbox records it.
    /// Any other failure to apply is recorded in the inbox too, so that one bad record never stops sync.
    static func writeKeepingUnique(
        _ db: Database,
        table: SyncTable,
        record: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> Bool {
        var fields = record.fields
        for attempt in 0..<3 {
            do {
                return try writeRow(db, table: table, recordID: record.recordName, fields: fields, site: site)
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE && table.appendOnly && attempt < 2 {
                // An invoice number given twice: the same document keeps it everywhere (`settleNumberClash`).
                switch try settleNumberClash(db, table: table, record: record, site: site, applied: &applied) {
                case .incomingSetAside?: return true
                case .localSetAside?: continue
                case .wait?: return false
                case nil: break
                }
                // A ledger's record (a shipment, an invoice, a return) under a number or a link another record holds:
                // two versions of one document. Neither is removed or renamed (an issued document never changes);
                // the arrival goes into the inbox, listed, and the record held here stays.
                try discardWhole(
                    db,
                    table: table.name,
                    record: record,
                    reason: "refused: \(NorthwindError.translating(error).description); the one held here stays",
                    applied: &applied
                )
                return true
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE && attempt < 2 {
                switch try settleDuplicateLink(db, table: table, record: record, fields: fields, site: site, applied: &applied, reupload: &reupload) {
                case .incomingDropped?: return true
                case .localRemoved?: continue
                case nil: break
                }
                guard
                    try settleUniqueClash(
                        db,
                        table: table,
                        record: record,
                        fields: &fields,
                        site: site,
                        applied: &applied,
                        reupload: &reupload
                    )
                else {
                    try discardWhole(
                        db,
                        table: table.name,
                        record: record,
                        reason: "could not apply: \(NorthwindError.translating(error).description)",
                        applied: &applied
                    )
                    return true
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                try discardWhole(
                    db,
                    table: table.name,
                    record: record,
                    reason: "could not apply: \(NorthwindError.translating(error).description)",
                    applied: &applied
                )
                return true
            }
        }
        return true
    }

    /// Finds the local row holding one of the record's unique values and renames the later of the two; false when
    /// no such row exists (the clash is something else).
    private static func settleUniqueClash(
        _ db: Database,
        table: SyncTable,
        record: SyncRecord,
        fields: inout [String: FieldValue],
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> Bool {
        let uniqueColumns = try db.indexes(on: table.name).filter { $0.isUnique && $0.columns.count == 1 }.map { $0.columns[0] }
            .filter { !table.localColumns.contains($0) }
        for column in uniqueColumns {
            guard case .string(let value)? = fields[column],
                let other = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT recordID FROM \(table.name) WHERE \(column.quotedDatabaseIdentifier) = ? AND recordID <> ?"),
                    arguments: [value, record.recordName]
                )
            else { continue }
            let (incomingLoses, loserClock) = try clash(db, table: table, record: record, other: other, column: column, site: site)
            let renamed = try freeValue(db, table: table, column: column, base: "\(value)-\(loserClock.site.isEmpty ? "X" : loserClock.site)")
            if incomingLoses {
                fields[column] = .string(renamed)
                reupload.append((table.name, record.recordName))
            } else {
                try db.execute(
                    sql: "UPDATE \(table.name) SET \(column.quotedDatabaseIdentifier) = ? WHERE recordID = ?",
                    arguments: [renamed, other]
                )
                reupload.append((table.name, other))
            }
            try recordConflict(
                db,
                table: table.name,
                recordID: incomingLoses ? record.recordName : other,
                DiscardedValue(field: column, kept: .string(renamed), keptClock: loserClock, lost: .string(value), lostClock: loserClock),
                reason: "\(column) \(value) was taken by an earlier record (\(incomingLoses ? other : record.recordName)): renamed"
            )
            applied.discarded += 1
            return true
        }
        return false
    }

    /// Who keeps a value that an incoming record and the local row `other` both hold: the earlier write of `column`
    /// (by clock, then record id), so that every installation picks the same. Returns the loser's clock too.
    static func clash(
        _ db: Database,
        table: SyncTable,
        record: SyncRecord,
        other: String,
        column: String,
        site: SyncSite
    ) throws -> (incomingLoses: Bool, loserClock: FieldClock) {
        let theirs = FieldClock.clocks(of: record.fields)[column] ?? FieldClock(text: "")
        let ours = try localClock(db, table: table, recordID: other, column: column, site: site)
        let incomingLoses = (ours.text, other) < (theirs.text, record.recordName)
        return (incomingLoses, incomingLoses ? theirs : ours)
    }

    /// When a local row's `column` was written: by the server's clocks once it has been sent, else by its last
    /// local change.
    private static func localClock(_ db: Database, table: SyncTable, recordID: String, column: String, site: SyncSite) throws -> FieldClock {
        let base = try String.fetchOne(
            db.cachedStatement(sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?"),
            arguments: [table.name, recordID]
        )
        return try base.flatMap { FieldClock.clocks(of: try ShopSync.decodeFields($0))[column] }
            ?? resendFields(db, table: table.name, recordID: recordID).flatMap { FieldClock.clocks(of: $0)[column] }
            ?? FieldClock(milliseconds: try ShopSync.changedAt(db, table: table.name, recordID: recordID), site: site.siteCode)
    }

    enum LinkClash { case incomingDropped, localRemoved }

    /// Two installations made the same link offline (one employee to one territory, one customer to one
    /// demographic): two records, one pair, which a unique index over several columns allows once. The link made
    /// first (by clock, then record id) stays; the other is removed here, and everywhere through the outbox of
    /// whichever installation holds it. The inbox records it. Nil when the clash is not over such an index.
    private static func settleDuplicateLink(
        _ db: Database,
        table: SyncTable,
        record: SyncRecord,
        fields: [String: FieldValue],
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> LinkClash? {
        var parents: [String: String] = [:]
        for column in try table.columns(db) { parents[column.name] = column.parent }
        for index in try db.indexes(on: table.name) where index.isUnique && index.columns.count > 1 {
            var values: [DatabaseValue] = []
            for column in index.columns {
                if let parent = parents[column], case .reference(let reference)? = fields[column],
                    let id = try Int64.fetchOne(
                        db.cachedStatement(sql: "SELECT id FROM \(parent) WHERE recordID = ?"),
                        arguments: [reference.recordName]
                    )
                {
                    values.append(id.databaseValue)
                } else if parents[column] == nil, let value = fields[column].flatMap(RecordMapping.databaseValue) {
                    values.append(value)
                }
            }
            guard values.count == index.columns.count,
                let other = try String.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT recordID FROM \(table.name)
                            WHERE \(index.columns.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: " AND ")) AND recordID <> ?
                            """
                    ),
                    arguments: StatementArguments(values + [record.recordName.databaseValue])
                )
            else { continue }
            let column = index.columns[0]
            let (incomingLoses, _) = try clash(db, table: table, record: record, other: other, column: column, site: site)
            let (winner, loser) = incomingLoses ? (other, record.recordName) : (record.recordName, other)
            try recordConflict(
                db,
                table: table.name,
                recordID: loser,
                DiscardedValue(field: "*", kept: .string(winner), lost: .string(loser)),
                reason: "the same \(index.columns.joined(separator: " and ")) as \(winner), made earlier at another site: removed"
            )
            applied.discarded += 1
            if incomingLoses { return .incomingDropped }
            try db.execute(sql: "DELETE FROM \(table.name) WHERE recordID = ?", arguments: [other])
            reupload.append((table.name, other))
            return .localRemoved
        }
        return nil
    }

    /// `base`, or `base-2`, `base-3`… whichever no row of the table holds yet.
    private static func freeValue(_ db: Database, table: SyncTable, column: String, base: String) throws -> String {
        var candidate = base
        var number = 1
        while try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(table.name) WHERE \(column.quotedDatabaseIdentifier) = ?)"),
            arguments: [candidate]
        ) == true {
            number += 1
            candidate = "\(base)-\(number)"
        }
        return candidate
    }
}
