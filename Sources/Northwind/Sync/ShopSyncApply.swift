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
        assets: [String: Data] = [:],
        advances: [ZoneTokenAdvance] = []
    ) async throws(NorthwindError) -> SyncApplied {
        let applied = try await syncWrite { db in
            guard let site = try syncSite(db, assets: assets) else { return SyncApplied() }
            let before = try Self.lastSeq(db)
            var applied = SyncApplied()
            var reupload: [(String, String)] = []
            // Rows restored because the server lost them go up before the records that refer to them.
            var restored: [(String, String)] = []
            for (operation, outcome) in zip(batch.operations, outcomes) {
                try Self.apply(outcome, to: operation, db, site: site, applied: &applied, reupload: &reupload, restored: &restored)
            }
            try Self.finishApply(db, after: before, reupload: restored + reupload)
            try ZoneTokenAdvance.apply(advances, db)
            applied.watermark = try Self.movePast(batch, db)
            return applied
        }
        // After the commit: a watermark lower than the store's (a crash between the two) is harmless; a higher one
        // would take this store for an older copy of itself.
        if let watermark = applied.watermark {
            try StoreFiles(path: store.configuration.path).writeSyncWatermark(clientID: watermark.clientID, batches: watermark.batches)
        }
        return applied
    }

    /// What one operation's outcome does here: a saved record becomes its row's base, a record changed or gone on
    /// the server is merged or removed, and a refused one goes to the inbox or, when only its parent is missing, up
    /// again after the parent (`restored`).
    private static func apply(
        _ outcome: OperationOutcome,
        to operation: OutboxOperation,
        _ db: Database,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)],
        restored: inout [(String, String)]
    ) throws {
        let record = operation.record
        guard let table = SyncTable.byName[record.recordType] else { return }
        switch outcome.readable(by: table) {
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
            try Self.writeOrWait(db, table: table, record: server, site: site, applied: &applied, reupload: &reupload)
        case .goneOnServer where Self.isAnotherSitesZone(record.zoneID.zoneName, site: site):
            // Another site's record, deleted on the server after the version put back from here: gone here too,
            // unless rows here refer to it; never sent again into a zone that is not ours.
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
        case .changedOnServer(let server) where try Self.comesWithItsPage(db, table: table, record: server, site: site):
            break  // Merged by the page that brings it, with the rest of its change.
        case .changedOnServer(let server):
            if try Self.merge(db, table: table, server: server, site: site, applied: &applied) == true {
                reupload.append((table.name, record.recordName))
            }
        case .notApplied:
            reupload.append((table.name, record.recordName))
        case .goneOnServer:
            try Self.removeRow(db, table: table, recordID: record.recordName, site: site, applied: &applied, reupload: &reupload)
        case .missingReference(let reason), .refused(let reason):
            // A missing parent goes up first, then the record again; else the whole record goes to the inbox.
            if case .missingReference = outcome,
                try Self.restoreParents(db, of: table, record: record, reason: reason, site: site, applied: &applied, reupload: &restored)
            {
                reupload.append((table.name, record.recordName))
            } else {
                try Self.refuse(db, table: table.name, record: record, reason: reason, applied: &applied)
            }
        }
    }

    /// Moves the outbox past an acknowledged batch, and gives the watermark the store's file then records.
    private static func movePast(_ batch: OutboxBatch, _ db: Database) throws -> SyncApplied.Watermark? {
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
        return try ShopSync.state(db, "clientID").map { SyncApplied.Watermark(clientID: $0, batches: taken + 1) }
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
            // A waiting record this page names again is an older version of it (a deletion, say): the page's stands.
            let named = Set(records.map { "\($0.zoneID.zoneName) \($0.recordName)" })
            queue += try String.fetchAll(db, sql: "SELECT body FROM sync_waiting").map { try SyncRecord.decode(Data($0.utf8)) }
                .filter { !named.contains("\($0.zoneID.zoneName) \($0.recordName)") }
            try db.execute(sql: "DELETE FROM sync_waiting")
            queue = try Self.applyInOrder(db, queue, site: site, applied: &applied, reupload: &reupload)
            // After the page: an answer to an offer from here may have come with it.
            let copies = try Self.takeSuperseded(db, zone: zone, site: site, applied: &applied, reupload: &reupload)
            if !copies.isEmpty { queue = try Self.applyInOrder(db, queue + copies, site: site, applied: &applied, reupload: &reupload) }
            try Self.answerOffers(db, site: site, applied: &applied, reupload: &reupload)
            if !moreComing, !queue.isEmpty,
                try Self.bringBackRemovedParents(
                    db,
                    of: queue,
                    zone: zone,
                    listed: Set(records.map(\.recordName)),
                    site: site,
                    applied: &applied,
                    reupload: &reupload
                )
            {
                queue = try Self.applyInOrder(db, queue, site: site, applied: &applied, reupload: &reupload)
            }
            for record in queue { try Self.keepWaiting(db, record) }
            applied.waiting = queue.count
            if try ShopSync.state(db, "refetching:" + zone) != nil {
                for record in records {
                    try db.cachedStatement(
                        sql: "INSERT OR IGNORE INTO sync_refetch (zoneName, recordName) VALUES (?, ?)"
                    )
                    .execute(arguments: [zone, record.recordName])
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

    /// Applies records parents first; a record whose parent came later (or refers to its own table) gets another
    /// pass, until a pass makes no progress. Returns the records still waiting for a row not here.
    static func applyInOrder(
        _ db: Database,
        _ records: [SyncRecord],
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)],
        loading: Bool = false
    ) throws -> [SyncRecord] {
        var queue = records.sorted { SyncTable.rank($0.recordType) < SyncTable.rank($1.recordType) }
        while !queue.isEmpty {
            var waiting: [SyncRecord] = []
            for record in queue
            where try !Self.applyDownloaded(db, record, site: site, applied: &applied, reupload: &reupload, loading: loading) {
                waiting.append(record)
            }
            if waiting.count == queue.count { break }
            queue = waiting
        }
        return queue
    }

    /// A site's purchasing is its own: a purchase order line belongs to an order of its zone's owner, and a receipt or
    /// a reversal to a line of such an order (and a reversal to a receipt of that site). Another zone's record that
    /// names someone else's order would change what that order received, or what is on order there.
    static func purchaseOwnerRefusal(_ db: Database, table: SyncTable, record: SyncRecord, site: SyncSite) throws -> String? {
        guard !record.deleted, record.zoneID.zoneName.hasPrefix("site-") else { return nil }
        let owner = String(record.zoneID.zoneName.dropFirst("site-".count))
        func ownerOf(_ sql: String, _ reference: FieldValue?) throws -> String?? {
            guard case .reference(let parent)? = reference else { return nil }
            // A parent not here yet is judged when it is (the record waits for it).
            guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [parent.recordName]) else { return nil }
            return .some((row[0] as String?) ?? site.siteCode)
        }
        switch table.name {
        case "purchase_order_lines":
            if case .some(let orderOwner) = try ownerOf("SELECT location FROM purchase_orders WHERE recordID = ?", record.fields["purchaseOrderID"]),
                orderOwner != owner
            {
                return "a purchase order line in site \(owner)'s zone on an order of site \(orderOwner ?? "?"); a site buys only for itself"
            }
        case "stock_movements":
            let lineOwner = try ownerOf(
                "SELECT o.location FROM purchase_order_lines l JOIN purchase_orders o ON o.id = l.purchaseOrderID WHERE l.recordID = ?",
                record.fields["purchaseLineID"]
            )
            if case .some(let orderOwner) = lineOwner, orderOwner != owner {
                return "a receipt in site \(owner)'s zone against a purchase order of site \(orderOwner ?? "?"); only that site receives it"
            }
            if case .some(let receiptOwner) = try ownerOf("SELECT location FROM stock_movements WHERE recordID = ?", record.fields["reversesID"]),
                receiptOwner != owner
            {
                return "a reversal in site \(owner)'s zone of a receipt of site \(receiptOwner ?? "?"); only that site reverses it"
            }
        default: break
        }
        return nil
    }

    /// A ledger record's place is its zone's: a movement's location is always its zone's owner (whatever the sender
    /// wrote), a transfer's movement out is only in the sender's zone and its movement in only in the destination's.
    /// Returns why a record breaks this, or nil (after setting the movement's location from its zone).
    static func bindToZoneOwner(_ db: Database, table: SyncTable, record: inout SyncRecord) throws -> String? {
        guard ShopSync.ownerBound[table.name] != nil, !record.deleted else { return nil }
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
        if table.name == "record_offers" || table.name == "record_offer_answers" {
            return record.fields["site"] == .string(owner)
                ? nil : "an offer of a lost record, or its answer, in site \(owner)'s zone written as another site's"
        }
        if table.name == "invoices" {
            // A site numbers only its own series: another's number here would take that site's invoice's place.
            return record.fields["site"] == .string(owner)
                ? nil : "an invoice or credit note in site \(owner)'s zone numbered in another site's series"
        }
        if table.name == "purchase_orders" {
            if let location = record.fields["location"], location != .string(owner) {
                return "a purchase order in site \(owner)'s zone that names another site (\(location)); a site buys only for itself"
            }
            record.fields["location"] = .string(owner)
            return nil
        }
        if let location = record.fields["location"], location != .string(owner) {
            return "a stock movement in site \(owner)'s zone that names another location (\(location)); a site moves only its own shelf"
        }
        record.fields["location"] = .string(owner)
        guard case .string(let reason)? = record.fields["reason"], reason == "transferOut" || reason == "transferIn",
            case .reference(let reference)? = record.fields["transferID"],
            let transfer = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT fromLocation, toLocation FROM stock_transfers WHERE recordID = ?"),
                arguments: [reference.recordName]
            )
        else { return nil }
        let expected: String = reason == "transferOut" ? transfer["fromLocation"] : transfer["toLocation"]
        guard expected == owner else {
            return "a \(reason) movement of a transfer in site \(owner)'s zone, where it belongs to \(expected)'s"
        }
        return nil
    }

    /// Writes a record and keeps its base; or, when it names a row not here yet (or waits for a clash to settle),
    /// keeps it waiting.
    static func writeOrWait(
        _ db: Database,
        table: SyncTable,
        record: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws {
        if try writeKeepingUnique(db, table: table, record: record, site: site, applied: &applied, reupload: &reupload) {
            try saveBase(db, table: table.name, record: record)
        } else {
            try keepWaiting(db, record)
        }
    }

    /// A record that names a row not here yet, or waits for a clash to settle: tried again with every page.
    static func keepWaiting(_ db: Database, _ record: SyncRecord) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_waiting (zoneName, recordName, body) VALUES (?, ?, ?)")
            .execute(arguments: [record.zoneID.zoneName, record.recordName, record.json])
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

    /// The pictures these records (and the records waiting here, or staged by a first download) name whose bytes this
    /// store lacks: the sync engine downloads them and passes them to `applyDownloaded`, `acknowledge` or
    /// `loadSnapshot`.
    public func assetsToFetch(for records: [SyncRecord]) async throws(NorthwindError) -> [AssetReference] {
        try await read { db in
            guard let site = try syncSite(db) else { return [] }
            // Records waiting, and those a first download under way staged that name a picture (staging a download
            // cut off left behind is not asked for: it may name pictures the server no longer has).
            let pictured = SyncTable.all.filter { !$0.assetAttributes.isEmpty }.map { "'\($0.name)'" }.joined(separator: ",")
            let staged =
                try ShopSync.state(db, "snapshot") != nil
                ? " UNION ALL SELECT body FROM sync_snapshot WHERE recordType IN (\(pictured))" : ""
            let waiting = try String.fetchAll(db, sql: "SELECT body FROM sync_waiting" + staged).map { try SyncRecord.decode(Data($0.utf8)) }
            var needed: [String: AssetReference] = [:]
            for record in records + waiting where !record.deleted {
                guard let table = SyncTable.byName[record.recordType] else { continue }
                for attribute in table.assetAttributes {
                    guard case .asset(let asset)? = record.fields[attribute], needed[asset.sha256] == nil else { continue }
                    let rowID = try Int64.fetchOne(
                        db.cachedStatement(sql: "SELECT id FROM \(table.name) WHERE recordID = ?"),
                        arguments: [record.recordName]
                    )
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

    /// Applies one record; false when it names a row not here yet. `loading`: a first download into a store with
    /// no changes of its own and no sync history (`loadSnapshot`), where the checks for local edits, restores and
    /// rows already here find nothing, and are skipped.
    private static func applyDownloaded(
        _ db: Database,
        _ record: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied,
        reupload: inout [(String, String)],
        loading: Bool = false
    ) throws -> Bool {
        guard let table = SyncTable.byName[record.recordType] else { return true }
        var record = table.readable(record)
        if let refusal = try bindToZoneOwner(db, table: table, record: &record) ?? purchaseOwnerRefusal(db, table: table, record: record, site: site)
        {
            // A forged or misplaced ledger record moves no shelf: it goes to the inbox, whole.
            try saveBase(db, table: table.name, record: record)
            try discardWhole(db, table: table.name, record: record, reason: refusal, applied: &applied)
            return true
        }
        if try keepsSetAside(db, table: table, record: record, applied: &applied) {
            try saveBase(db, table: table.name, record: record)
            return true
        }
        if loading, !record.deleted {
            guard try writeKeepingUnique(db, table: table, record: record, site: site, applied: &applied, reupload: &reupload) else {
                return false
            }
            applied.saved += 1
            try saveBase(db, table: table.name, record: record)
            return true
        }
        if try keepsNewerWhileOwnerCatchesUp(db, table: table, record: record, site: site) { return true }
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
        if try hasPendingChange(db, table: table.name, recordID: record.recordName) || heldForResend(db, table: table, recordID: record.recordName) {
            // A merged row that names a row not here yet waits, as any record does.
            guard let goesUpAgain = try merge(db, table: table, server: record, site: site, applied: &applied) else { return false }
            if goesUpAgain { reupload.append((table.name, record.recordName)) }
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
    /// lacks, which must go up again; nil when the merged row names a row not here yet (nothing is written).
    private static func merge(
        _ db: Database,
        table: SyncTable,
        server: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied
    ) throws -> Bool? {
        let base = try ShopSync.decodeFields(
            String.fetchOne(
                db.cachedStatement(sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?"),
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
        do {
            // All or nothing: a merge that names a row not here yet is tried again with it, and says nothing now.
            var written = false
            try db.inSavepoint {
                for value in result.discarded {
                    try recordConflict(db, table: table.name, recordID: server.recordName, value, reason: "changed here and on the server")
                    if table.assetAttributes.contains(value.field), case .asset(let lost)? = value.lost {
                        try keepDiscardedPicture(db, lost, table: table, recordID: server.recordName, site: site)
                    }
                }
                // A merge that leaves the row as it is does not write it: its version would move, and whoever is
                // editing it here would be told that someone else saved it.
                written =
                    try result.fields == local.fields || writeRow(db, table: table, recordID: server.recordName, fields: result.fields, site: site)
                return written ? .commit : .rollback
            }
            guard written else { return nil }
            applied.discarded += result.discarded.count
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
        if bytes == nil,
            let rowID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table.name) WHERE recordID = ?"), arguments: [recordID])
        {
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

}
