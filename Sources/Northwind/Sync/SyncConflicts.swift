import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// A value a merge or the server discarded, kept so that a manager can review it and restore it.
public struct SyncConflict: Sendable, Codable, Equatable, Identifiable {
    public var id: Int64
    public var table: String
    public var recordID: String
    /// The column, or "*" for a whole change the server refused.
    public var field: String
    public var kept: String?
    public var keptSite: String?
    public var lost: String?
    public var lostSite: String?
    public var reason: String
    public var createdAt: String
    public var resolvedAt: String?
}

extension ShopSync {
    /// The conflict inbox, newest first: open ones only unless `all`.
    public func conflicts(all: Bool = false) async throws(NorthwindError) -> [SyncConflict] {
        try await read { db in try Self.syncConflicts(db, where: all ? "1" : "resolvedAt IS NULL") }
    }

    /// One page of the inbox, newest first, with how many entries there are: a long inbox is read a page at a time.
    public func conflictPage(all: Bool = false, limit: Int = 50, offset: Int = 0) async throws(NorthwindError) -> Page<SyncConflict> {
        try checkPaging(limit: limit, offset: offset)
        let condition = all ? "1" : "resolvedAt IS NULL"
        return try await read { db in
            Page(
                items: try Self.syncConflicts(db, where: condition, limit: limit, offset: offset),
                total: try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_conflicts WHERE \(condition)") ?? 0,
                offset: offset,
                limit: limit
            )
        }
    }

    /// The inbox entries with these ids, newest first.
    static func syncConflicts(_ db: Database, ids: [Int64]) throws -> [SyncConflict] {
        guard !ids.isEmpty else { return [] }
        return try syncConflicts(db, where: "id IN (\(ids.map(String.init).joined(separator: ", ")))")
    }

    private static func syncConflicts(_ db: Database, where condition: String, limit: Int = -1, offset: Int = 0) throws -> [SyncConflict] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT id, tableName, recordID, field, keptValue, keptSite, lostValue, lostSite, reason, createdAt, resolvedAt
                FROM sync_conflicts WHERE \(condition) ORDER BY id DESC LIMIT ? OFFSET ?
                """,
            arguments: [limit, offset]
        ).map { row in
            SyncConflict(
                id: row["id"],
                table: row["tableName"],
                recordID: row["recordID"],
                field: row["field"],
                kept: Self.display(row["keptValue"]),
                keptSite: row["keptSite"],
                lost: Self.display(row["lostValue"]),
                lostSite: row["lostSite"],
                reason: row["reason"],
                createdAt: row["createdAt"],
                resolvedAt: row["resolvedAt"]
            )
        }
    }

    /// A stored value as a person reads it: text as it is, other types as JSON.
    static func display(_ json: String?) -> String? {
        guard let json else { return nil }
        guard let value = try? JSONDecoder().decode(FieldValue.self, from: Data(json.utf8)) else { return json }
        switch value {
        case .string(let text), .decimal(let text): return text
        case .int64(let number), .timestamp(let number): return String(number)
        case .double(let number): return String(number)
        default: return json
        }
    }

    /// Settles a conflict. Keeping this store's value when it was the one discarded writes it back as a new local
    /// edit, which syncs (and, being later, wins everywhere); keeping the other value when this store's was
    /// discarded, or the value already kept, just closes the entry. A refused change kept as "mine" is sent again;
    /// kept as "theirs", the row goes back to what the server last acknowledged.
    /// Resolves a conflict by the values' places rather than their origin: keep the value that stands, or bring
    /// back the one the merge set aside (whichever installation it came from).
    public func resolveConflict(id: Int64, restoreLost: Bool) async throws(NorthwindError) {
        let mineWasLost = try await read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT field, lostSite FROM sync_conflicts WHERE id = ?", arguments: [id]) else {
                throw NorthwindError.notFound(entity: "conflict", key: "#\(id)")
            }
            let site = try StoreMetadata.siteCode(db)
            return (row["field"] as String) == "*" || (row["lostSite"] as String?) == site
        }
        try await backoffice.sync.resolveConflict(id: id, keepMine: restoreLost == mineWasLost)
    }

    public func resolveConflict(id: Int64, keepMine: Bool) async throws(NorthwindError) {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM sync_conflicts WHERE id = ?", arguments: [id]) else {
                throw NorthwindError.notFound(entity: "conflict", key: "#\(id)")
            }
            if let resolved: String = row["resolvedAt"] {
                throw NorthwindError.invalidState("Conflict #\(id) was already resolved at \(resolved).")
            }
            let site = try StoreMetadata.siteCode(db)
            let table: String = row["tableName"]
            let recordID: String = row["recordID"]
            let field: String = row["field"]
            let lostSite: String? = row["lostSite"]
            // "Mine" was lost when the lost value came from here (a refused change is always this store's).
            let mineWasLost = field == "*" || lostSite == site
            // A document set aside for a number given twice never comes back into the ledger: resolving it only
            // says that someone has seen to it (sent the customer the invoice issued again).
            if try SyncEngineSide.isSetAside(db, table: table, recordID: recordID) {
                try db.execute(sql: "UPDATE sync_conflicts SET resolvedAt = ? WHERE id = ?", arguments: [Timestamp.now.description, id])
                return
            }
            if field == "*", !keepMine, let syncTable = SyncTable.byName[table], let syncSite = try syncSite(db),
                let base = try String.fetchOne(
                    db,
                    sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?",
                    arguments: [table, recordID]
                )
            {
                _ = try SyncEngineSide.writeRow(db, table: syncTable, recordID: recordID, fields: try Self.decodeFields(base), site: syncSite)
            } else if keepMine == mineWasLost, let syncTable = SyncTable.byName[table] {
                if field == "*" {
                    try restoreDeletedRow(db, row["lostValue"], table: syncTable, recordID: recordID)
                    try db.execute(
                        sql: "INSERT INTO change_log (tableName, recordID, operation) VALUES (?, ?, 'update')",
                        arguments: [table, recordID]
                    )
                } else {
                    let json: String? = row["lostValue"]
                    let value = try json.map { try JSONDecoder().decode(FieldValue.self, from: Data($0.utf8)) } ?? .null
                    if syncTable.assetAttributes.contains(field) {
                        try restorePicture(db, value, table: syncTable, attribute: field, recordID: recordID, conflict: id)
                        try db.execute(sql: "UPDATE sync_conflicts SET resolvedAt = ? WHERE id = ?", arguments: [Timestamp.now.description, id])
                        try Self.forgetDiscardedPictures(db)
                        return
                    }
                    guard let column = try syncTable.columns(db).first(where: { $0.name == field }) else {
                        throw NorthwindError.invalidState("\(table) has no column \(field) any more; nothing to restore.")
                    }
                    let stored: DatabaseValue
                    if let parent = column.parent, case .reference(let reference) = value {
                        stored =
                            try Int64.fetchOne(
                                db.cachedStatement(sql: "SELECT id FROM \(parent) WHERE recordID = ?"),
                                arguments: [reference.recordName]
                            )?
                            .databaseValue ?? .null
                    } else {
                        stored = RecordMapping.databaseValue(value) ?? .null
                    }
                    try db.execute(
                        sql: "UPDATE \(table) SET \(field.quotedDatabaseIdentifier) = ? WHERE recordID = ?",
                        arguments: [stored, recordID]
                    )
                }
            }
            try db.execute(sql: "UPDATE sync_conflicts SET resolvedAt = ? WHERE id = ?", arguments: [Timestamp.now.description, id])
            try Self.forgetDiscardedPictures(db)
        }
    }

    /// Drops kept pictures that no open conflict names any more.
    static func forgetDiscardedPictures(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM sync_conflict_assets WHERE NOT EXISTS (
                  SELECT 1 FROM sync_conflicts WHERE resolvedAt IS NULL AND instr(ifnull(lostValue, ''), sync_conflict_assets.sha256) > 0)
                """
        )
    }
}

extension ShopSync {
    /// A row deleted at another site while a change made here was waiting to go up comes back, as the inbox kept
    /// it, under its record id; it goes up as a new record (the server holds only its tombstone).
    private func restoreDeletedRow(_ db: Database, _ json: String?, table: SyncTable, recordID: String) throws {
        guard
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(table.name) WHERE recordID = ?)"), arguments: [recordID])
                == false,
            let json, case .string(let text) = try JSONDecoder().decode(FieldValue.self, from: Data(json.utf8)),
            let kept = try? JSONDecoder().decode(SyncRecord.self, from: Data(text.utf8)), let site = try syncSite(db)
        else { return }
        guard try SyncEngineSide.writeRow(db, table: table, recordID: recordID, fields: kept.fields, site: site) else {
            throw NorthwindError.invalidState(
                "The \(table.name) row \(recordID) refers to a row, or a picture, that is gone here; put that back first."
            )
        }
        try SyncEngineSide.forgetBase(db, table: table.name, recordID: recordID)
    }

    /// Puts a discarded picture (kept in `sync_conflict_assets`) back on its row, as a new local edit.
    private func restorePicture(_ db: Database, _ value: FieldValue, table: SyncTable, attribute: String, recordID: String, conflict: Int64) throws {
        guard let rowID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table.name) WHERE recordID = ?"), arguments: [recordID]) else {
            throw NorthwindError.invalidState("The \(table.name) row \(recordID) is gone; there is nothing to put the picture back on.")
        }
        guard case .asset(let asset) = value else {
            try store.binaries.save(db, nil, table: table.name, attribute: attribute, id: rowID)
            return
        }
        guard
            let kept = try Row.fetchOne(
                db,
                sql: "SELECT contentType, bytes FROM sync_conflict_assets WHERE sha256 = ?",
                arguments: [asset.sha256]
            )
        else {
            throw NorthwindError.invalidState(
                "The picture conflict #\(conflict) discarded was not kept here, so it cannot be restored; set the picture again instead."
            )
        }
        try store.binaries.save(
            db,
            BinaryContent(bytes: kept["bytes"], contentType: kept["contentType"]),
            table: table.name,
            attribute: attribute,
            id: rowID
        )
    }
}
