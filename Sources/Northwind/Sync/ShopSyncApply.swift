import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension SyncEngineSide {
    /// Records the server's answer to a batch, in one transaction: each saved record becomes its row's base, records
    /// changed on the server are merged into their rows, and the outbox moves past the batch.
    /// `assets` holds the bytes of the pictures that records changed on the server name (`assetsToFetch`).
    public func acknowledge(
        _ batch: OutboxBatch,
        outcomes: [OperationOutcome],
        assets: [String: Data] = [:]
    ) async throws(NorthwindError) -> SyncApplied {
        let applied = try await syncWrite { db in
            guard let site = try syncSite(db, assets: assets) else { return SyncApplied() }
            let before = try Self.lastSeq(db)
            var applied = SyncApplied()
            var reupload: [(String, String)] = []
            // Rows restored because the server lost them go up before the records that refer to them.
            var restored: [(String, String)] = []
            for (operation, outcome) in zip(batch.operations, outcomes) {
                let record = operation.record
                guard let table = SyncTable.byName[record.recordType] else { continue }
                switch outcome {
                case .saved(let saved):
                    try Self.forgetRefusal(db, table: table.name, recordID: saved.recordName)
                    try Self.forgetResend(db, table: table.name, recordID: saved.recordName)
                    if saved.deleted {
                        try Self.forgetBase(db, table: table.name, recordID: saved.recordName)
                        try Self.noteAcknowledgedDeletion(db, table: table.name, recordID: saved.recordName)
                    } else {
                        try Self.saveBase(db, table: table.name, record: saved)
                    }
                    applied.saved += 1
                case .changedOnServer(let server) where Self.isAnotherSitesZone(server.zoneID.zoneName, site: site):
                    // Head office put back a site's record that the zone holds already: only its site changes it, so
                    // the zone's version stands here, and a later one held here goes to the inbox, whole.
                    if let held = try Self.resendFields(db, table: table.name, recordID: server.recordName),
                        held.filter({ $0.key != FieldClock.fieldName }) != server.fields.filter({ $0.key != FieldClock.fieldName })
                    {
                        var lost = server
                        lost.fields = held
                        try Self.discardWhole(
                            db,
                            table: table.name,
                            record: lost,
                            reason: "a version of another site's record that the sync server lost in its restore: the site holds another, "
                                + "which stands",
                            applied: &applied
                        )
                    }
                    try Self.forgetResend(db, table: table.name, recordID: server.recordName)
                    if try Self.writeKeepingUnique(db, table: table, record: server, site: site, applied: &applied, reupload: &reupload) {
                        try Self.saveBase(db, table: table.name, record: server)
                    }
                case .goneOnServer where Self.isAnotherSitesZone(record.zoneID.zoneName, site: site):
                    // Another site's record, deleted on the server after the version put back from here: gone here
                    // too, unless rows here still refer to it; it is never sent again into a zone that is not ours.
                    try Self.forgetResend(db, table: table.name, recordID: record.recordName)
                    if try Self.isReferenced(db, table: table, recordID: record.recordName) {
                        try Self.forgetBase(db, table: table.name, recordID: record.recordName)
                        try Self.discardWhole(
                            db,
                            table: table.name,
                            record: record,
                            reason: "deleted on the server after this version, but rows here still refer to it: kept here",
                            applied: &applied
                        )
                    } else {
                        try Self.removeRow(db, table: table, recordID: record.recordName, site: site, applied: &applied, reupload: &reupload)
                    }
                case .changedOnServer(let server):
                    if try Self.merge(db, table: table, server: server, site: site, applied: &applied) {
                        reupload.append((table.name, record.recordName))
                    }
                case .notApplied:
                    reupload.append((table.name, record.recordName))
                case .goneOnServer:
                    try Self.removeRow(db, table: table, recordID: record.recordName, site: site, applied: &applied, reupload: &reupload)
                case .missingReference(let reason), .refused(let reason):
                    // A missing parent goes up first, then the record again; with no parent here, or any other
                    // refusal, the whole record goes to the inbox.
                    if case .missingReference = outcome,
                        try Self.restoreParents(db, of: table, record: record, reason: reason, site: site, applied: &applied, reupload: &restored)
                    {
                        reupload.append((table.name, record.recordName))
                    } else {
                        try Self.refuse(db, table: table.name, record: record, reason: reason, applied: &applied)
                    }
                }
            }
            try Self.finishApply(db, after: before, reupload: restored + reupload)
            // The server took the batch: the next one follows it in the site's sequence, and no longer takes over.
            let taken = Int64(try ShopSync.state(db, "batchesTaken") ?? "0") ?? 0
            try ShopSync.setState(db, "batchesTaken", String(taken + 1))
            try ShopSync.setState(db, "takeOver", nil)
            let through = Int64(try ShopSync.state(db, "uploadedThrough") ?? "0") ?? 0
            try ShopSync.setState(db, "uploadedThrough", String(max(through, batch.throughSeq)))
            // Another sync may have answered this batch already and built the next one: that one stays.
            if try ShopSync.state(db, "pendingBatchID") == batch.batchID {
                try ShopSync.setState(db, "pendingBatch", nil)
                try ShopSync.setState(db, "pendingBatchID", nil)
            }
            applied.watermark = try ShopSync.state(db, "clientID").map { SyncApplied.Watermark(clientID: $0, batches: taken + 1) }
            return applied
        }
        // After the commit: a watermark lower than the store's (a crash between the two) is harmless; a higher one
        // would take this store for an older copy of itself.
        if let watermark = applied.watermark {
            try StoreFiles(path: store.configuration.path).writeSyncWatermark(clientID: watermark.clientID, batches: watermark.batches)
        }
        return applied
    }

    /// Applies one downloaded page of a zone and saves its token, in one transaction. Records that name a row not here
    /// yet wait, and are tried again after every page; so do records whose pictures' bytes are not in `assets`
    /// (see `assetsToFetch`). While the zone is fetched again from scratch (`syncEngine.resetToken`), the page's record
    /// names are noted, and its last page (`moreComing` false) removes the rows the server no longer has.
    public func applyDownloaded(
        zone: String,
        records: [SyncRecord],
        token: String,
        assets: [String: Data] = [:],
        moreComing: Bool = false,
        checksum: String? = nil
    ) async throws(NorthwindError) -> SyncApplied {
        try await syncWrite { db in
            guard let site = try syncSite(db, assets: assets) else { return SyncApplied() }
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            let before = try Self.lastSeq(db)
            var applied = SyncApplied()
            var reupload: [(String, String)] = []
            // Records of a type this version does not know are held, whole, and applied once it does (after an
            // upgrade), so that the zone's token can move past them without losing them.
            var queue: [SyncRecord] = []
            for record in records {
                if SyncTable.byName[record.recordType] == nil {
                    try Self.hold(db, record)
                } else {
                    queue.append(record)
                }
            }
            queue += try Self.knownHeldRecords(db)
            queue += try String.fetchAll(db, sql: "SELECT body FROM sync_waiting").map { try SyncRecord.decode(Data($0.utf8)) }
            try db.execute(sql: "DELETE FROM sync_waiting")
            queue.sort { SyncTable.rank($0.recordType) < SyncTable.rank($1.recordType) }
            // Parents first; a record whose parent came later in the page (or refers to its own table) gets another
            // pass, until a pass makes no progress.
            while !queue.isEmpty {
                var waiting: [SyncRecord] = []
                for record in queue {
                    if try !Self.applyDownloaded(db, record, site: site, applied: &applied, reupload: &reupload) {
                        waiting.append(record)
                    }
                }
                if waiting.count == queue.count { break }
                queue = waiting
            }
            for record in queue {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_waiting (zoneName, recordName, body) VALUES (?, ?, ?)",
                    arguments: [record.zoneID.zoneName, record.recordName, record.json]
                )
            }
            applied.waiting = queue.count
            if try ShopSync.state(db, "refetching:" + zone) != nil {
                for record in records {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO sync_refetch (zoneName, recordName) VALUES (?, ?)",
                        arguments: [zone, record.recordName]
                    )
                }
                if !moreComing { try Self.reconcile(db, zone: zone, site: site, applied: &applied, reupload: &reupload) }
            }
            try Self.finishApply(db, after: before, reupload: reupload)
            try ShopSync.setState(db, "token:" + zone, token)
            if !moreComing, let checksum { try Self.compareChecksum(db, zone: zone, server: checksum, applied: &applied) }
            // Everything written, nothing committed: a crash here must leave the page unapplied.
            CrashPoint.reach("apply")
            return applied
        }
    }

    /// A ledger record's place is its zone's: a movement's location is always its zone's owner (whatever the sender
    /// wrote), a transfer's movement out is only in the sender's zone and its movement in only in the destination's.
    /// Returns why a record breaks this, or nil (after setting the movement's location from its zone).
    static func bindToZoneOwner(_ db: Database, table: SyncTable, record: inout SyncRecord) throws -> String? {
        guard table.name == "stock_movements" || table.name == "stock_transfers", !record.deleted else { return nil }
        let zone = record.zoneID.zoneName
        guard zone.hasPrefix("site-") else {
            return "a ledger record in zone \(zone), which is no site's: only a site writes its own stock"
        }
        let owner = String(zone.dropFirst("site-".count))
        if table.name == "stock_transfers" {
            guard case .string(let from)? = record.fields["fromLocation"], from == owner else {
                return "a stock transfer in site \(owner)'s zone that is not sent from \(owner)"
            }
            return nil
        }
        if let location = record.fields["location"], location != .string(owner) {
            return "a stock movement in site \(owner)'s zone that names another location (\(location)); a site moves only its own shelf"
        }
        record.fields["location"] = .string(owner)
        guard case .string(let reason)? = record.fields["reason"], reason == "transferOut" || reason == "transferIn",
            case .reference(let reference)? = record.fields["transferID"],
            let transfer = try Row.fetchOne(
                db,
                sql: "SELECT fromLocation, toLocation FROM stock_transfers WHERE recordID = ?",
                arguments: [reference.recordName]
            )
        else { return nil }
        let expected: String = reason == "transferOut" ? transfer["fromLocation"] : transfer["toLocation"]
        guard expected == owner else {
            return "a \(reason) movement of a transfer in site \(owner)'s zone, where it belongs to \(expected)'s"
        }
        return nil
    }

    /// Compares the server's checksum of a zone, at the end of a catch-up, with this store's: the XOR over the
    /// records it holds as the server sent them (its bases, the records waiting for a parent and those held for a
    /// newer version) of the first 8 bytes of SHA-256(name NUL tag). A difference starts the zone's fetch again
    /// from scratch, once; if it remains after that, `sync status` names the zone until a catch-up agrees.
    static func compareChecksum(_ db: Database, zone: String, server: String, applied: inout SyncApplied) throws {
        var local: UInt64 = 0
        for row in try Row.fetchAll(db, sql: "SELECT recordID, changeTag FROM sync_records WHERE zoneName = ?", arguments: [zone]) {
            local ^= checksum(recordName: row["recordID"], changeTag: row["changeTag"])
        }
        for body in try String.fetchAll(
            db,
            sql: "SELECT body FROM sync_waiting WHERE zoneName = ?1 UNION ALL SELECT body FROM sync_held WHERE zoneName = ?1",
            arguments: [zone]
        ) {
            let record = try SyncRecord.decode(Data(body.utf8))
            if !record.deleted { local ^= checksum(recordName: record.recordName, changeTag: record.recordChangeTag ?? "") }
        }
        let text = String(local, radix: 16)
        let mine = String(repeating: "0", count: max(0, 16 - text.count)) + text
        if mine == server.lowercased() {
            try ShopSync.setState(db, "checksumRetried:" + zone, nil)
            try ShopSync.setState(db, "checksumDiffers:" + zone, nil)
            return
        }
        if try ShopSync.state(db, "checksumRetried:" + zone) == nil {
            try ShopSync.setState(db, "checksumRetried:" + zone, "1")
            try ShopSync.setState(db, "token:" + zone, nil)
            try ShopSync.setState(db, "refetching:" + zone, "1")
            try db.execute(sql: "DELETE FROM sync_refetch WHERE zoneName = ?", arguments: [zone])
            applied.refetch = true
        } else {
            try ShopSync.setState(
                db,
                "checksumDiffers:" + zone,
                "\(Timestamp.now.description): zone \(zone) differs from the server's after fetching it again (server \(server), here \(mine))"
            )
            applied.checksumDiffers = true
        }
    }

    static func checksum(recordName: String, changeTag: String) -> UInt64 {
        var bytes = Array(recordName.utf8)
        bytes.append(0)
        bytes.append(contentsOf: changeTag.utf8)
        return SHA256.hash(data: bytes).prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
    }

    /// A record of a type this version does not know: kept whole until an upgrade knows it.
    static func hold(_ db: Database, _ record: SyncRecord) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_held (zoneName, recordName, recordType, body) VALUES (?, ?, ?, ?)",
            arguments: [record.zoneID.zoneName, record.recordName, record.recordType, record.json]
        )
    }

    /// Held records whose type this version knows (it was upgraded since): taken out of the hold, to apply.
    static func knownHeldRecords(_ db: Database) throws -> [SyncRecord] {
        let types = try String.fetchAll(db, sql: "SELECT DISTINCT recordType FROM sync_held").filter { SyncTable.byName[$0] != nil }
        var records: [SyncRecord] = []
        for type in types {
            records += try String.fetchAll(db, sql: "SELECT body FROM sync_held WHERE recordType = ?", arguments: [type])
                .map { try SyncRecord.decode(Data($0.utf8)) }
            try db.execute(sql: "DELETE FROM sync_held WHERE recordType = ?", arguments: [type])
        }
        return records
    }

    /// The pictures these records (and the records waiting here) name whose bytes this store lacks: the sync engine
    /// downloads them and passes them to `applyDownloaded` or `acknowledge`.
    public func assetsToFetch(for records: [SyncRecord]) async throws(NorthwindError) -> [AssetReference] {
        try await read { db in
            guard let site = try syncSite(db) else { return [] }
            let waiting = try String.fetchAll(db, sql: "SELECT body FROM sync_waiting").map { try SyncRecord.decode(Data($0.utf8)) }
            var needed: [String: AssetReference] = [:]
            for record in records + waiting where !record.deleted {
                guard let table = SyncTable.byName[record.recordType] else { continue }
                for attribute in table.assetAttributes {
                    guard case .asset(let asset)? = record.fields[attribute], needed[asset.sha256] == nil else { continue }
                    let rowID = try Int64.fetchOne(db, sql: "SELECT id FROM \(table.name) WHERE recordID = ?", arguments: [record.recordName])
                    let current = try rowID.flatMap { try RecordMapping.asset(db, table: table, attribute: attribute, rowID: $0, site: site) }
                    if current?.reference.sha256 != asset.sha256 { needed[asset.sha256] = asset }
                }
            }
            return needed.values.sorted { $0.sha256 < $1.sha256 }
        }
    }

    /// The token to fetch a zone's changes from; nil for a zone never fetched.
    public func token(zone: String) async throws(NorthwindError) -> String? {
        try await read { db in try ShopSync.state(db, "token:" + zone) }
    }

    /// Forgets a zone's token (the server said CHANGE_TOKEN_EXPIRED): the next fetch starts from scratch.
    /// Starts fetching a zone again from scratch (its token expired). Kept in the store, so that a sync cut off
    /// halfway still ends in the reconciliation when it is taken up again.
    public func resetToken(zone: String) async throws(NorthwindError) {
        try await write { db in
            try ShopSync.setState(db, "token:" + zone, nil)
            try ShopSync.setState(db, "refetching:" + zone, "1")
            try db.execute(sql: "DELETE FROM sync_refetch WHERE zoneName = ?", arguments: [zone])
        }
    }

    /// Applies one record; false when it names a row not here yet.
    private static func applyDownloaded(
        _ db: Database,
        _ record: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> Bool {
        guard let table = SyncTable.byName[record.recordType] else { return true }
        var record = record
        if let refusal = try bindToZoneOwner(db, table: table, record: &record) {
            // A forged or misplaced ledger record moves no shelf: it goes to the inbox, whole.
            try saveBase(db, table: table.name, record: record)
            try discardWhole(db, table: table.name, record: record, reason: refusal, applied: &applied)
            return true
        }
        if record.deleted {
            try removeRow(db, table: table, recordID: record.recordName, site: site, applied: &applied, reupload: &reupload)
            return true
        }
        if try deletedHereBeforeTheServersRestore(db, table: table.name, record: record) {
            // The server's restore brought back a record this store deleted, and had been told was deleted: it is
            // deleted again, from the version the server has now, rather than brought back here. What it holds goes
            // to the inbox, whole: another site may have edited it since the restore.
            try saveBase(db, table: table.name, record: record)
            try discardWhole(
                db,
                table: table.name,
                record: record,
                reason: "deleted here before the sync server's restore brought it back: deleted again",
                applied: &applied
            )
            reupload.append((table.name, record.recordName))
            return true
        }
        if try hasPendingChange(db, table: table.name, recordID: record.recordName) {
            if try merge(db, table: table, server: record, site: site, applied: &applied) {
                reupload.append((table.name, record.recordName))
            }
            return true
        }
        // A row that already holds these values (this store's own change, coming back) is not written again, so
        // that nobody editing it is told it changed.
        var incoming = record.fields
        incoming[FieldClock.fieldName] = nil
        let current = try RecordMapping.record(
            db,
            table: table,
            recordID: record.recordName,
            site: site,
            zoneName: record.zoneID.zoneName
        )
        if current?.fields != incoming {
            guard try writeKeepingUnique(db, table: table, record: record, site: site, applied: &applied, reupload: &reupload) else {
                return false
            }
            applied.saved += 1
        }
        try saveBase(db, table: table.name, record: record)
        return true
    }

    /// Merges the server's record into a row with local changes; true when the merge kept local values the server
    /// lacks, which must go up again.
    private static func merge(
        _ db: Database,
        table: SyncTable,
        server: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied
    ) throws -> Bool {
        let base = try ShopSync.decodeFields(
            String.fetchOne(
                db,
                sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?",
                arguments: [table.name, server.recordName]
            )
        )
        guard
            let local = try RecordMapping.record(
                db,
                table: table,
                recordID: server.recordName,
                site: site,
                zoneName: server.zoneID.zoneName
            )
        else {
            // Deleted here while changed there: the delete stands and goes up with its own entry.
            return false
        }
        // The local values date from the local edit, not from now: an edit queued offline loses to a later one.
        let clock = FieldClock(milliseconds: try ShopSync.changedAt(db, table: table.name, recordID: server.recordName), site: site.siteCode)
        // A version sent again after the server's restore keeps the clocks it was written with.
        let held = try resendFields(db, table: table.name, recordID: server.recordName) ?? [:]
        let result = FieldMerge.merge(base: base, server: server.fields, local: local.fields, localClock: clock, held: held)
        for value in result.discarded {
            try recordConflict(db, table: table.name, recordID: server.recordName, value, reason: "changed here and on the server")
            if table.assetAttributes.contains(value.field), case .asset(let lost)? = value.lost {
                try keepDiscardedPicture(db, lost, table: table, recordID: server.recordName, site: site)
            }
        }
        applied.discarded += result.discarded.count
        do {
            guard try writeRow(db, table: table, recordID: server.recordName, fields: result.fields, site: site) else { return false }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            // The merged values break a rule of this store: keep the row as it is, and say so.
            try discardWhole(
                db,
                table: table.name,
                record: server,
                reason: "could not merge: \(NorthwindError.translating(error).description)",
                applied: &applied
            )
            return false
        }
        try saveBase(db, table: table.name, record: server)
        applied.merged += 1
        var serverFields = server.fields
        serverFields[FieldClock.fieldName] = nil
        // Kept until the server takes what it still lacks, so that those values go up with their own clocks.
        if result.fields == serverFields { try forgetResend(db, table: table.name, recordID: server.recordName) }
        return result.fields != serverFields
    }

    /// Keeps the bytes of a picture a merge discarded, so that the conflict inbox can restore it: the local picture
    /// (about to be replaced) or the server's (fetched with the page).
    private static func keepDiscardedPicture(_ db: Database, _ lost: AssetReference, table: SyncTable, recordID: String, site: SyncSite) throws {
        var bytes = site.assets[lost.sha256]
        if bytes == nil, let rowID = try Int64.fetchOne(db, sql: "SELECT id FROM \(table.name) WHERE recordID = ?", arguments: [recordID]) {
            for attribute in table.assetAttributes {
                if let local = try RecordMapping.asset(db, table: table, attribute: attribute, rowID: rowID, site: site),
                    local.reference.sha256 == lost.sha256
                {
                    bytes = local.content.bytes
                }
            }
        }
        guard let bytes else { return }
        try db.execute(
            sql: "INSERT OR IGNORE INTO sync_conflict_assets (sha256, contentType, bytes) VALUES (?, ?, ?)",
            arguments: [lost.sha256, lost.contentType ?? "application/octet-stream", bytes]
        )
    }

    /// Writes a downloaded record, settling a clash on a unique column (two shops created the customer code ALFKI,
    /// or the category "Teas", offline). The value written first by clock (then by record id) keeps it; the other
    /// record's value gets its author's site code appended ("ALFKI-OXF"), here and, through the outbox, everywhere:
    /// every installation that meets the clash picks the same winner and the same new value. The inbox records it.
    /// Any other failure to apply is recorded in the inbox too, so that one bad record never stops sync.
    private static func writeKeepingUnique(
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
                    db,
                    sql: "SELECT recordID FROM \(table.name) WHERE \(column.quotedDatabaseIdentifier) = ? AND recordID <> ?",
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
    private static func clash(
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
            db,
            sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?",
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
                    let id = try Int64.fetchOne(db, sql: "SELECT id FROM \(parent) WHERE recordID = ?", arguments: [reference.recordName])
                {
                    values.append(id.databaseValue)
                } else if parents[column] == nil, let value = fields[column].flatMap(RecordMapping.databaseValue) {
                    values.append(value)
                }
            }
            guard values.count == index.columns.count,
                let other = try String.fetchOne(
                    db,
                    sql: """
                        SELECT recordID FROM \(table.name)
                        WHERE \(index.columns.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: " AND ")) AND recordID <> ?
                        """,
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
            db,
            sql: "SELECT EXISTS (SELECT 1 FROM \(table.name) WHERE \(column.quotedDatabaseIdentifier) = ?)",
            arguments: [candidate]
        ) == true {
            number += 1
            candidate = "\(base)-\(number)"
        }
        return candidate
    }

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
                    guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM \(parent) WHERE recordID = ?", arguments: [reference.recordName])
                    else {
                        return false
                    }
                    value = id.databaseValue
                }
            } else if let field = fields[column.name] {
                value = RecordMapping.databaseValue(field) ?? .null
            }
            // This store's own movements move its own shelf, which has no location.
            if table.name == "stock_movements", column.name == "location", value == site.siteCode.databaseValue { value = .null }
            names.append(column.name)
            values.append(value)
        }
        let existing = try Int64.fetchOne(db, sql: "SELECT id FROM \(table.name) WHERE recordID = ?", arguments: [recordID])
        guard let binaries = try binaryWrites(db, table: table, rowID: existing, fields: fields, site: site) else { return false }
        let hasVersion = try db.columns(in: table.name).contains { $0.name == "version" }
        try db.inSavepoint {
            var rowID = existing
            if let id = existing {
                let sets = names.map { "\($0.quotedDatabaseIdentifier) = ?" } + (hasVersion ? ["version = version + 1"] : [])
                try db.execute(
                    sql: "UPDATE \(table.name) SET \(sets.joined(separator: ", ")) WHERE id = ?",
                    arguments: StatementArguments(values + [id.databaseValue])
                )
            } else {
                let marks = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
                try db.execute(
                    sql: "INSERT INTO \(table.name) (recordID, \(names.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(marks))",
                    arguments: StatementArguments([recordID.databaseValue] + values)
                )
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
    private static func removeRow(
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
            try db.inSavepoint {
                try db.execute(sql: "DELETE FROM \(table.name) WHERE recordID = ?", arguments: [recordID])
                return .commit
            }
            try forgetBase(db, table: table.name, recordID: recordID)
            if local != nil { applied.deleted += 1 }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            try recordConflict(
                db,
                table: table.name,
                recordID: recordID,
                DiscardedValue(field: "*", kept: local.map { .string($0.json) }),
                reason: "deleted on the server, but rows here still refer to it: kept here"
            )
            applied.discarded += 1
        }
    }

    /// Whether rows here refer to this one through a foreign key that forbids deleting it (orders to their customer,
    /// order lines to their product), or from the ledger, which no delete may reach; other references that cascade
    /// or clear themselves do not count.
    private static func isReferenced(_ db: Database, table: SyncTable, recordID: String) throws -> Bool {
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM \(table.name) WHERE recordID = ?", arguments: [recordID]) else { return false }
        for child in SyncTable.all {
            for key in try Row.fetchAll(db, sql: "SELECT \"from\", \"table\", on_delete FROM pragma_foreign_key_list(?)", arguments: [child.name]) {
                guard key["table"] as String == table.name,
                    ["NO ACTION", "RESTRICT"].contains(key["on_delete"] as String) || (child.appendOnly && key["on_delete"] as String == "CASCADE")
                else { continue }
                let column: String = key["from"]
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(child.name) WHERE \(column) = ?)", arguments: [id]) == true {
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
    private static func restoreParents(
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

    private static func hasPendingChange(_ db: Database, table: String, recordID: String) throws -> Bool {
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

    static func saveBase(_ db: Database, table: String, record: SyncRecord) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_records (tableName, recordID, zoneName, changeTag, fields, modified) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (tableName, recordID) DO UPDATE SET zoneName = excluded.zoneName, changeTag = excluded.changeTag,
                  fields = excluded.fields, modified = excluded.modified
                """
        ).execute(arguments: [
            table, record.recordName, record.zoneID.zoneName, record.recordChangeTag ?? "", try ShopSync.encodeFields(record.fields),
            record.modified?.timestamp,
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
        let here = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table) WHERE recordID = ?", arguments: [record.recordName]) ?? false
        return !here
    }

    /// Also forgets a version waiting to go up again after a server restore: the row is gone or starts afresh.
    static func forgetBase(_ db: Database, table: String, recordID: String) throws {
        try db.execute(sql: "DELETE FROM sync_records WHERE tableName = ? AND recordID = ?", arguments: [table, recordID])
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
        try db.execute(
            sql: """
                INSERT INTO sync_conflicts (tableName, recordID, field, keptValue, keptClock, keptSite, lostValue, lostClock, lostSite, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                table, recordID, value.field, try text(value.kept), value.keptClock?.text, value.keptClock?.site, try text(value.lost),
                value.lostClock?.text, value.lostClock?.site, reason,
            ]
        )
    }

    static func lastSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0
    }

    /// What a download or an acknowledgement wrote is not this store's change: live pages see it, the outbox not.
    /// Rows whose merge kept local values get a fresh entry, to go up again.
    private static func finishApply(_ db: Database, after before: Int64, reupload: [(String, String)]) throws {
        try pruneInbox(db)
        try db.execute(sql: "UPDATE change_log SET origin = 'sync' WHERE seq > ?", arguments: [before])
        for (table, recordID) in reupload {
            try db.execute(
                sql: "INSERT INTO change_log (tableName, recordID, operation, origin) VALUES (?, ?, 'update', 'local')",
                arguments: [table, recordID]
            )
        }
    }
}

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
            guard let table = SyncTable.byName[name], try !hasPendingChange(db, table: name, recordID: recordID) else { continue }
            try removeRow(db, table: table, recordID: recordID, site: site, applied: &applied, reupload: &reupload)
        }
        try db.execute(sql: "DELETE FROM sync_refetch WHERE zoneName = ?", arguments: [zone])
        try ShopSync.setState(db, "refetching:" + zone, nil)
    }
}
