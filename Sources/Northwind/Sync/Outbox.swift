import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension ShopSync {
    // MARK: Outbox

    /// Change-log entries not yet acknowledged.
    public func pendingChanges() async throws(NorthwindError) -> Int {
        try await read { db in try Self.pendingCount(db) }
    }

    static func pendingCount(_ db: Database) throws -> Int {
        let through = Int64(try state(db, "uploadedThrough") ?? "0") ?? 0
        return try Int.fetchOne(
            db,
            sql: "SELECT count(*) FROM change_log WHERE seq > ? AND origin = 'local' AND NOT localOnly",
            arguments: [through]
        ) ?? 0
    }

    static func nextBatch(_ db: Database, site: SyncSite) throws -> OutboxBatch? {
        try record(buildBatch(db, site: site), db)
    }

    /// What `buildBatch` found, before anything is written.
    struct BuiltBatch: Sendable {
        /// Nil when nothing is left to send.
        var batch: OutboxBatch?
        /// The batch was built before and not acknowledged: it goes again as it was, and nothing is written.
        var kept: Bool
        /// How far the outbox was read: entries with nothing left to say up to here are passed over for good.
        var through: Int64
        /// What `outboxPosition` was when the outbox was read, to check that it has not moved before the batch is
        /// recorded.
        var position: [String?]
        /// `uploadedThrough` when the outbox was read.
        var from: Int64

        /// Whether recording it writes anything: a new batch, or entries passed over.
        var writes: Bool { !kept && (batch != nil || through > from) }
    }

    /// Everything a batch's content depends on besides the rows: how far the outbox went, the batch kept, the
    /// batches the server took, this store's client and the server's epoch (whose change clears the bases a batch's
    /// updates are built on, and queues their records to go up again whole).
    static func outboxPosition(_ db: Database) throws -> [String?] {
        try ["uploadedThrough", "pendingBatchID", "batchesTaken", "clientID", "serverEpoch"].map { try state(db, $0) }
    }

    /// Records `built` if the outbox has not moved since it was read; else builds the batch again, here.
    static func recordIfUnmoved(_ built: BuiltBatch, _ db: Database, site: SyncSite) throws -> OutboxBatch? {
        guard try outboxPosition(db) == built.position else { return try nextBatch(db, site: site) }
        return try record(built, db)
    }

    /// The next batch, read without writing anything, so that it can be built in a read transaction while orders
    /// go on (`record` then keeps its extent). See `nextBatch`.
    static func buildBatch(_ db: Database, site: SyncSite) throws -> BuiltBatch {
        let position = try outboxPosition(db)
        // A batch built and not acknowledged goes again as it was, whatever was committed since: the server
        // recognises a replay by the batch's ID and answers it with its first answer, which must fit.
        if let stored = try state(db, "pendingBatch") {
            var batch = try OutboxBatch(stored: stored)
            batch.assets = try assetBytes(db, of: batch.operations, site: site)
            return BuiltBatch(batch: batch, kept: true, through: batch.throughSeq, position: position, from: batch.throughSeq)
        }
        let from = Int64(try state(db, "uploadedThrough") ?? "0") ?? 0
        var through = from
        while true {
            let entries = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT seq, tableName, recordID, txn FROM change_log WHERE seq > ? AND origin = 'local' AND NOT localOnly
                        ORDER BY seq LIMIT 2000
                        """
                ),
                arguments: [through]
            )
            guard let first = entries.first else { return BuiltBatch(batch: nil, kept: false, through: through, position: position, from: from) }
            let txn: Int64? = first["txn"]
            var keys: [(String, String)] = []
            var seen = Set<String>()
            var last: Int64 = first["seq"]
            for entry in entries {
                // One transaction's entries, or a run of entries made outside the domain. (Several whole
                // transactions in one request measured slower for the order path, twice: docs/performance.md.)
                guard (entry["txn"] as Int64?) == txn else { break }
                let table: String = entry["tableName"]
                let recordID: String = entry["recordID"]
                if seen.insert(table + "/" + recordID).inserted {
                    if keys.count == SyncLimits.operationsPerRequest { break }
                    keys.append((table, recordID))
                }
                last = entry["seq"]
            }
            try extendToLaterChanges(db, after: through, last: &last, keys: &keys, seen: &seen)
            var operations: [OutboxOperation] = []
            for (table, recordID) in keys {
                if let operation = try operation(db, table: table, recordID: recordID, site: site) { operations.append(operation) }
            }
            if !operations.isEmpty {
                // Random, kept with the batch: a store reverted to an older copy, or copied, repeats its change-log
                // positions, and an ID made from them would be answered with another batch's answer.
                let batchID = "\(site.siteCode)-\(UUID().uuidString.lowercased())"
                var batch = OutboxBatch(throughSeq: last, batchID: batchID, operations: operations)
                batch.assets = try assetBytes(db, of: operations, site: site)
                return BuiltBatch(batch: batch, kept: false, through: through, position: position, from: from)
            }
            // Nothing left to say (a row made and removed before upload, an update back to what the server has):
            // pass over it.
            through = last
        }
    }

    /// Keeps a built batch's extent (so that it goes again exactly as built until acknowledged), and passes over the
    /// entries before it that had nothing to say. Answers the batch to send.
    static func record(_ built: BuiltBatch, _ db: Database) throws -> OutboxBatch? {
        if built.kept { return built.batch }
        if built.through > Int64(try state(db, "uploadedThrough") ?? "0") ?? 0 {
            try setState(db, "uploadedThrough", String(built.through))
        }
        guard let batch = built.batch else { return nil }
        try setState(db, "pendingBatch", batch.stored)
        try setState(db, "pendingBatchID", batch.batchID)
        return batch
    }

    /// Rows go up as they are now, so a record a later transaction changed again carries that transaction's values:
    /// the batch takes in that transaction too, and any later one that changed its records again, or the server
    /// would show part of a transaction (an order shipped, without the movements its execution made). Up to the
    /// limit of a request; beyond it, the later transactions follow in their own batches.
    private static func extendToLaterChanges(
        _ db: Database,
        after through: Int64,
        last: inout Int64,
        keys: inout [(String, String)],
        seen: inout Set<String>
    ) throws {
        while let later = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT c.seq, c.txn FROM change_log b JOIN change_log c ON c.recordID = b.recordID AND c.tableName = b.tableName
                    WHERE b.seq > ?1 AND b.seq <= ?2 AND b.origin = 'local' AND NOT b.localOnly
                      AND c.seq > ?2 AND c.origin = 'local' AND NOT c.localOnly
                    ORDER BY c.seq DESC LIMIT 1
                    """
            ),
            arguments: [through, last]
        ) {
            let end: Int64 =
                try (later["txn"] as Int64?).flatMap {
                    try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(seq) FROM change_log WHERE txn = ?"), arguments: [$0])
                } ?? later["seq"]
            var (extended, extendedSeen) = (keys, seen)
            for entry in try Row.fetchAll(
                db,
                sql: "SELECT tableName, recordID FROM change_log WHERE seq > ? AND seq <= ? AND origin = 'local' AND NOT localOnly ORDER BY seq",
                arguments: [last, end]
            ) {
                let (table, recordID): (String, String) = (entry["tableName"], entry["recordID"])
                if extendedSeen.insert(table + "/" + recordID).inserted { extended.append((table, recordID)) }
            }
            guard extended.count <= SyncLimits.operationsPerRequest else { return }
            (keys, seen, last) = (extended, extendedSeen, end)
        }
    }

    /// The bytes of the pictures that the operations name (those still here).
    static func assetBytes(_ db: Database, of operations: [OutboxOperation], site: SyncSite) throws -> [String: Data] {
        var bytes: [String: Data] = [:]
        for operation in operations {
            guard let table = SyncTable.byName[operation.record.recordType], !table.assetAttributes.isEmpty,
                operation.record.fields.values.contains(where: { !$0.assets.isEmpty }),
                let rowID = try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT id FROM \(table.name) WHERE recordID = ?"),
                    arguments: [operation.record.recordName]
                )
            else { continue }
            for attribute in table.assetAttributes {
                if let asset = try RecordMapping.asset(db, table: table, attribute: attribute, rowID: rowID, site: site) {
                    bytes[asset.reference.sha256] = asset.content.bytes
                }
            }
        }
        return bytes
    }

    /// The operation that brings the server to this row's present state, or nil when there is nothing to send.
    static func operation(_ db: Database, table name: String, recordID: String, site: SyncSite) throws -> OutboxOperation? {
        guard let table = SyncTable.byName[name] else { return nil }
        // A document set aside is the server's as it stands: nothing of it goes up, its removal here least of all.
        if name == "invoices" || name == "invoice_lines", try SyncEngineSide.isSetAside(db, table: name, recordID: recordID) { return nil }
        let base = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT zoneName, changeTag, fields FROM sync_records WHERE tableName = ? AND recordID = ?"),
            arguments: [name, recordID]
        )
        let zoneName = try RecordMapping.zone(db, table: table, recordID: recordID, siteCode: site.siteCode)
        let now = FieldClock(milliseconds: try changedAt(db, table: name, recordID: recordID), site: site.siteCode)
        guard var record = try RecordMapping.record(db, table: table, recordID: recordID, site: site, zoneName: zoneName)
        else {
            guard let base else {
                // Deleted here while its version waited to go up again after a server restore: the deletion goes
                // up instead, or the restored server's older copy would come back.
                guard try SyncEngineSide.resendFields(db, table: name, recordID: recordID) != nil else { return nil }
                return OutboxOperation(kind: .forceDelete, record: SyncRecord(recordName: recordID, recordType: name, zoneID: ZoneID(zoneName)))
            }
            // Only the owning site writes its zone; another site's rows are removed here only by a download.
            return OutboxOperation(
                kind: .delete,
                record: SyncRecord(recordName: recordID, recordType: name, zoneID: ZoneID(zoneName), recordChangeTag: base["changeTag"])
            )
        }
        // A version sent again after the server's restore: its values go up with the clocks they were written with.
        let version = try SyncEngineSide.resendVersion(db, table: name, recordID: recordID)
        let held = version?.fields ?? [:]
        let heldClocks = FieldClock.clocks(of: held)
        func clock(_ field: String) -> FieldClock {
            heldClocks[field].flatMap { held[field] == record.fields[field] ? $0 : nil } ?? now
        }
        guard let base else {
            let clocks = Dictionary(uniqueKeysWithValues: record.fields.keys.map { ($0, clock($0)) })
            record.fields[FieldClock.fieldName] = FieldClock.field(clocks)
            // With the server's time of the version held, so that a deletion the server took after it stands.
            record.modified = version?.modified.map { Stamp(timestamp: $0, site: site.siteCode) }
            return OutboxOperation(kind: table.appendOnly ? .append : .create, record: record)
        }
        if table.appendOnly { return nil }
        // A base saved before this version (or by an older one) may hold another value of a field sent to older
        // versions at a fixed value: that is no change of this row's, and must not overwrite theirs.
        let baseFields = table.readable(
            SyncRecord(recordName: recordID, recordType: name, zoneID: ZoneID(zoneName), fields: try decodeFields(base["fields"]))
        ).fields
        var clocks = FieldClock.clocks(of: baseFields)
        var changed: [String: FieldValue] = [:]
        for name in Set(baseFields.keys).union(record.fields.keys).subtracting([FieldClock.fieldName]) where baseFields[name] != record.fields[name] {
            changed[name] = record.fields[name] ?? .null
            clocks[name] = clock(name)
        }
        guard !changed.isEmpty else { return nil }
        changed[FieldClock.fieldName] = FieldClock.field(clocks)
        record.fields = changed
        record.recordChangeTag = base["changeTag"]
        return OutboxOperation(kind: .update, record: record)
    }

    /// When the row last changed here (not by a download): its newest local change-log entry.
    static func changedAt(_ db: Database, table: String, recordID: String) throws -> Int64 {
        let text = try String.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT changedAt FROM change_log WHERE recordID = ? AND tableName = ? AND origin = 'local' AND NOT localOnly
                    ORDER BY seq DESC LIMIT 1
                    """
            ),
            arguments: [recordID, table]
        )
        // Never later than now: an edit made while the clock ran ahead, synced once it is right, must not carry a
        // clock the server refuses (CLOCK_SKEW) or that wins every later merge.
        return min((text.flatMap(Timestamp.init) ?? .now).milliseconds, Timestamp.now.milliseconds)
    }

    static func decodeFields(_ json: String?) throws -> [String: FieldValue] {
        guard let json else { return [:] }
        return try SyncRecord.decodeFields(Data(json.utf8))
    }

    static func encodeFields(_ fields: [String: FieldValue]) throws -> String {
        SyncRecord.fieldsJSON(fields)
    }
}
