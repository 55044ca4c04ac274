import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension SyncEngineSide {
    /// Writes a record's fields into its row, creating the row if needed; false when a reference names a row not
    /// here yet, or a picture's bytes are not at hand. Columns the record lacks become NULL; local columns keep their
    /// values.
    static func writeRow(
        _ db: Database,
        table: SyncTable,
        recordID: String,
        fields: [String: FieldValue],
        site: SyncSite
    ) throws -> Bool {
        var names: [String] = []
        var values: [DatabaseValue] = []
        for column in try table.columns(db) {
            var value = DatabaseValue.null
            if let parent = column.parent {
                if case .reference(let reference)? = fields[column.name] {
                    guard
                        let id = try Int64.fetchOne(
                            db.cachedStatement(sql: "SELECT id FROM \(parent) WHERE recordID = ?"),
                            arguments: [reference.recordName]
                        )
                    else {
                        return false
                    }
                    value = id.databaseValue
                }
            } else if let field = fields[column.name] {
                value = RecordMapping.databaseValue(field) ?? .null
            }
            // This store's own movements move its own shelf, which has no location.
            if ShopSync.ownerBound[table.name] == "location", column.name == "location", value == site.siteCode.databaseValue { value = .null }
            names.append(column.name)
            values.append(value)
        }
        let existing = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table.name) WHERE recordID = ?"), arguments: [recordID])
        guard let binaries = try binaryWrites(db, table: table, rowID: existing, fields: fields, site: site) else { return false }
        let hasVersion = try db.columns(in: table.name).contains { $0.name == "version" }
        try db.inSavepoint {
            var rowID = existing
            if let id = existing {
                let sets = names.map { "\($0.quotedDatabaseIdentifier) = ?" } + (hasVersion ? ["version = version + 1"] : [])
                try db.cachedStatement(sql: "UPDATE \(table.name) SET \(sets.joined(separator: ", ")) WHERE id = ?")
                    .execute(arguments: StatementArguments(values + [id.databaseValue]))
            } else {
                let marks = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
                try db.cachedStatement(
                    sql: "INSERT INTO \(table.name) (recordID, \(names.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(marks))"
                )
                .execute(arguments: StatementArguments([recordID.databaseValue] + values))
                rowID = db.lastInsertedRowID
            }
            for (attribute, content) in binaries {
                try site.binaries.save(db, content, table: table.name, attribute: attribute, id: rowID ?? db.lastInsertedRowID)
            }
            return .commit
        }
        return true
    }

    /// The pictures to write for a record: (attribute, bytes or nil to remove) for each that differs from the row's;
    /// nil when one's bytes are not at hand (the record waits, and the sync engine fetches them).
    private static func binaryWrites(
        _ db: Database,
        table: SyncTable,
        rowID: Int64?,
        fields: [String: FieldValue],
        site: SyncSite
    ) throws -> [(String, BinaryContent?)]? {
        var writes: [(String, BinaryContent?)] = []
        for attribute in table.assetAttributes {
            let current = try rowID.flatMap { try RecordMapping.asset(db, table: table, attribute: attribute, rowID: $0, site: site)?.content }
            guard case .asset(let wanted)? = fields[attribute] else {
                if current != nil { writes.append((attribute, nil)) }
                continue
            }
            let type = wanted.contentType ?? "application/octet-stream"
            if let current, RecordMapping.sha256(current.bytes) == wanted.sha256 {
                if current.contentType != type { writes.append((attribute, BinaryContent(bytes: current.bytes, contentType: type))) }
                continue
            }
            guard let bytes = site.assets[wanted.sha256] else { return nil }
            guard RecordMapping.sha256(bytes) == wanted.sha256 else {
                throw NorthwindError.invalidState(
                    "The sync server sent other bytes for picture \(wanted.sha256) than the ones it names; nothing was applied. "
                        + "Sync again; if it happens again, the server's copy is damaged."
                )
            }
            writes.append((attribute, BinaryContent(bytes: bytes, contentType: type)))
        }
        return writes
    }

    /// Removes a row the server deleted. Deletes beat concurrent updates; a row still referenced here stays, and
    /// the inbox says why.
    static func removeRow(
        _ db: Database,
        table: SyncTable,
        recordID: String,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws {
        let local = try RecordMapping.record(db, table: table, recordID: recordID, site: site, zoneName: "")
        // Foreign keys are deferred while a page applies, so the delete below would not fail: ask first.
        if let local, try isReferenced(db, table: table, recordID: recordID) {
            // Another site's record is that site's to send: sent from here, it would land in this site's zone, a
            // second record under the same name. It stays here, unsent (its site may take it back from an offer).
            if isAnotherSitesZone(try RecordMapping.zone(db, table: table, recordID: recordID, siteCode: site.siteCode), site: site) {
                try keepUnsent(db, table: table.name, recordID: recordID, kept: local, applied: &applied)
                return
            }
            try restore(db, table: table, recordID: recordID, kept: local, reupload: &reupload)
            applied.discarded += 1
            return
        }
        // A change made here and not yet sent loses to the delete, but not silently: the inbox keeps the row as it
        // was, and `resolve --keep mine` puts it back.
        if let local, try hasPendingChange(db, table: table.name, recordID: recordID) {
            try recordConflict(
                db,
                table: table.name,
                recordID: recordID,
                DiscardedValue(
                    field: "*",
                    lost: .string(local.json),
                    lostClock: FieldClock(milliseconds: try ShopSync.changedAt(db, table: table.name, recordID: recordID), site: site.siteCode)
                ),
                reason: "deleted at another site, which discards the change made here"
            )
            applied.discarded += 1
        }
        do {
            let zone = try RecordMapping.zone(db, table: table, recordID: recordID, siteCode: site.siteCode)
            try db.inSavepoint {
                try db.cachedStatement(sql: "DELETE FROM \(table.name) WHERE recordID = ?").execute(arguments: [recordID])
                return .commit
            }
            try forgetBase(db, table: table.name, recordID: recordID)
            if let local {
                try keepRemoved(db, table: table, kept: local, zone: zone)
                applied.deleted += 1
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            // The row stays (a ledger row is never deleted).
            try keepUnsent(db, table: table.name, recordID: recordID, kept: local, applied: &applied)
        }
    }

    /// A row that stays here though the server's copy is gone: no base, so that the zone's checksum agrees with the
    /// server's, and the inbox says why.
    private static func keepUnsent(_ db: Database, table: String, recordID: String, kept: SyncRecord?, applied: inout SyncApplied) throws {
        try forgetBase(db, table: table, recordID: recordID)
        try recordConflict(
            db,
            table: table,
            recordID: recordID,
            DiscardedValue(field: "*", kept: kept.map { .string($0.json) }),
            reason: "deleted on the server, but rows here still refer to it: kept here"
        )
        applied.discarded += 1
    }

    /// Whether rows here refer to this one through a foreign key that forbids deleting it (orders to their customer,
    /// order lines to their product), or from the ledger, which no delete may reach; other references that cascade
    /// or clear themselves do not count.
    static func isReferenced(_ db: Database, table: SyncTable, recordID: String) throws -> Bool {
        guard let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table.name) WHERE recordID = ?"), arguments: [recordID]) else {
            return false
        }
        for child in SyncTable.all {
            for key in try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \"from\", \"table\", on_delete FROM pragma_foreign_key_list(?)"),
                arguments: [child.name]
            ) {
                guard key["table"] as String == table.name,
                    ["NO ACTION", "RESTRICT"].contains(key["on_delete"] as String) || (child.appendOnly && key["on_delete"] as String == "CASCADE")
                else { continue }
                let column: String = key["from"]
                if try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(child.name) WHERE \(column) = ?)"), arguments: [id])
                    == true
                {
                    return true
                }
            }
        }
        return false
    }

    /// A row deleted at another site while rows here still refer to it (an order taken for a customer someone else
    /// deleted meanwhile) is restored, not deleted: an order is history and keeps its customer. The row stays, goes
    /// up again as a new record (the server has only its tombstone), and the inbox says so.
    private static func restore(_ db: Database, table: SyncTable, recordID: String, kept: SyncRecord, reupload: inout [(String, String)]) throws {
        try forgetBase(db, table: table.name, recordID: recordID)
        try recordConflict(
            db,
            table: table.name,
            recordID: recordID,
            DiscardedValue(field: "*", kept: .string(kept.json)),
            reason: "deleted at another site while rows here still refer to it: restored"
        )
        reupload.append((table.name, recordID))
    }

    /// The server refused a record because a record it refers to is gone there (deleted at another site before this
    /// one arrived). The parent the server names (every parent, if its reason names none) is restored if it is still
    /// here; false when none is, and the refusal stands.
    static func restoreParents(
        _ db: Database,
        of table: SyncTable,
        record: SyncRecord,
        reason: String,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> Bool {
        let references = try table.columns(db).compactMap { column -> (SyncTable, RecordReference)? in
            guard let parentName = column.parent, let parent = SyncTable.byName[parentName],
                case .reference(let reference)? = record.fields[column.name]
            else { return nil }
            return (parent, reference)
        }
        let named = references.filter { reason.contains("refers to \($0.1.recordName) ") }
        var restoredAny = false
        for (parent, reference) in named.isEmpty ? references : named {
            // Another site's record is that site's to send: restored from here, it would land in this site's zone.
            if isAnotherSitesZone(reference.zoneName ?? record.zoneID.zoneName, site: site) { continue }
            guard
                let kept = try RecordMapping.record(
                    db,
                    table: parent,
                    recordID: reference.recordName,
                    site: site,
                    zoneName: ""
                )
            else { continue }
            guard !reupload.contains(where: { $0 == (parent.name, reference.recordName) }) else {
                restoredAny = true
                continue
            }
            // A parent the server refused stays refused: sending it again would be refused again, and its children
            // with it, for ever. The child's refusal stands too, and goes to the inbox.
            if try isRefused(db, table: parent.name, recordID: reference.recordName) { continue }
            try restore(db, table: parent, recordID: reference.recordName, kept: kept, reupload: &reupload)
            applied.discarded += 1
            restoredAny = true
        }
        return restoredAny
    }

    static func hasPendingChange(_ db: Database, table: String, recordID: String) throws -> Bool {
        let through = Int64(try ShopSync.state(db, "uploadedThrough") ?? "0") ?? 0
        return try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM change_log WHERE tableName = ? AND recordID = ? AND seq > ? AND origin = 'local'
                                   AND NOT localOnly)
                    """
            ),
            arguments: [table, recordID, through]
        ) ?? false
    }
}
