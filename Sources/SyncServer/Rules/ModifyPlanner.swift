import Foundation
import SyncAPI
import SyncProtocol

/// What `records/modify` needs to decide, read inside the writing transaction with the zones locked.
struct ModifyState: Sendable {
    var zones: [String: ZoneState]
    var records: [RecordKey: StoredRecord]
    var assets: Set<String>
    var now: Int64
    /// From the newest change the restored data holds to the restore: the server times a version put back may
    /// carry into a site's zone; nil when the database was never restored or no operation is a put-back.
    var restoreWindow: Range<Int64>? = nil
}

/// What to write: the records' final states, the zones' new counters and checksums, and the answer.
struct ModifyPlan: Sendable {
    var writes: [StoredRecord]
    var zones: [ZoneState]
    var response: Components.Schemas.ModifyResponse
}

/// The rules of `records/modify`, in one place and free of storage: both engines run this inside their
/// transaction, after locking the zones in name order.
struct ModifyPlanner {
    typealias Operation = Components.Schemas.RecordOperation

    let caller: Installation
    let scope: DatabaseScope
    let operations: [Operation]
    let atomic: Bool
    /// The request's size: a record cannot pass the per-record limit when the whole request is below it.
    var requestBytes = Int.max
    /// The container's schema, in the shared database; nil when none was declared.
    var schema: SchemaRules?

    /// The records to read before deciding: each operation's record and everything it references.
    var keysToRead: Set<RecordKey> {
        var keys = Set<RecordKey>()
        for operation in operations {
            let record = operation.record
            keys.insert(RecordKey(zoneName: record.zoneID.zoneName, recordName: record.recordName))
            for reference in record.fields.values.flatMap(\.references) {
                keys.insert(RecordKey(zoneName: reference.zoneName ?? record.zoneID.zoneName, recordName: reference.recordName))
            }
        }
        return keys
    }

    /// The zones the batch writes, in the order they must be locked.
    var zonesToLock: [String] { Set(operations.map(\.record.zoneID.zoneName)).sorted() }

    /// Whether any operation is a put-back, for which the storage reads the restore window.
    var hasPutBack: Bool { operations.contains { [.create, .append].contains($0.operationType) && $0.record.modified != nil } }

    var assetsToCheck: Set<String> {
        Set(operations.flatMap { $0.record.fields.values.flatMap(\.assets).map(\.sha256) })
    }

    /// Checks the request as a whole, before any storage is touched.
    static func checkRequest(_ request: Components.Schemas.ModifyRequest, bodySize: Int, now: Int64 = Clock.now()) throws(SyncError) {
        if request.operations.count > SyncLimits.operationsPerRequest || bodySize > SyncLimits.bytesPerRequest {
            throw SyncError(
                .limitExceeded,
                "the request has \(request.operations.count) operations and \(bodySize) bytes; split it in half and send both. "
                    + SyncLimits.summary
            )
        }
        if request.operations.isEmpty { throw SyncError(.badRequest, "operations is empty: send at least one") }
        for (name, value) in [("clientID", request.clientID), ("batchID", request.batchID)] where value.isEmpty || value.utf8.count > 200 {
            throw SyncError(.badRequest, "\(name) must be 1 to 200 characters")
        }
        // Stored as text, an ID would end at a NUL: two that differ after one would be taken for the same.
        for (name, value) in [("clientID", request.clientID), ("batchID", request.batchID)] + request.operations.map({ ("opID", $0.opID) })
        where value.unicodeScalars.contains("\u{0}") {
            throw SyncError(.badRequest, "\(name) holds a NUL character (U+0000), which an ID may not")
        }
        var seen = Set<String>()
        for operation in request.operations where !seen.insert(operation.opID).inserted {
            throw SyncError(.badRequest, "opID \(operation.opID) appears twice in the batch; each operation needs its own")
        }
        try checkClocks(request, now: now)
    }

    /// Refuses a batch with a field clock ahead of the server's time by more than the allowed lead, or unreadable:
    /// clocks decide merges, so one set ahead would win every later one.
    static func checkClocks(_ request: Components.Schemas.ModifyRequest, now: Int64) throws(SyncError) {
        for operation in request.operations {
            guard let clocks = FieldClocks.milliseconds(in: operation.record.fields) else {
                throw SyncError(
                    .badRequest,
                    "record \(operation.record.recordName)'s \(FieldClocks.fieldName) is not an object of clocks \"MILLISECONDS.SITE\""
                )
            }
            if let latest = clocks.max(), latest > now + FieldClocks.allowedLead {
                throw SyncError(
                    .clockSkew,
                    "record \(operation.record.recordName) carries a clock \((latest - now) / 60_000) minutes ahead of the server's "
                        + "time; nothing was applied. Set the computer's clock right (or turn on network time), then sync again"
                )
            }
        }
    }

    func plan(_ state: ModifyState) -> ModifyPlan {
        var working = state.records
        var results: [Components.Schemas.OperationResult] = []
        for operation in operations {
            let name = operation.record.recordName
            // An operation touches one record: on failure, putting that one back undoes it (copying the whole
            // working set per operation would cost a batch 400 × 400 copies).
            let key = RecordKey(zoneName: operation.record.zoneID.zoneName, recordName: name)
            let before = working[key]
            do throws(SyncError) {
                let record = try apply(operation, to: &working, state: state)
                // Without atomicity each operation stands alone: what it refers to must exist already.
                if !atomic, let failure = unresolvedReference(in: [operation], records: working, assets: state.assets) {
                    throw failure.error
                }
                results.append(.init(opID: operation.opID, recordName: name, record: record))
            } catch {
                working[key] = before
                results.append(.init(opID: operation.opID, recordName: name, error: error))
            }
        }
        guard atomic else { return finish(working: working, state: state, results: results) }
        // In an atomic batch a child may come before its parent: references are checked once all have applied.
        if results.allSatisfy({ $0.error == nil }), let failure = unresolvedReference(in: operations, records: working, assets: state.assets) {
            results = results.map { $0.opID == failure.opID ? .init(opID: $0.opID, recordName: $0.recordName, error: failure.error) : $0 }
        }
        guard results.contains(where: { $0.error != nil }) else { return finish(working: working, state: state, results: results) }
        // All or nothing: the operations that would have succeeded say why they were not applied.
        let notApplied = SyncError(.atomicError, "not applied: another operation of this atomic batch failed")
        results = results.map { $0.error == nil ? .init(opID: $0.opID, recordName: $0.recordName, error: notApplied) : $0 }
        return ModifyPlan(writes: [], zones: [], response: .init(records: results, replayed: false))
    }

    /// Gives each written zone its next change number, stamps the written records with it, and keeps checksums.
    private func finish(working: [RecordKey: StoredRecord], state: ModifyState, results: [Components.Schemas.OperationResult]) -> ModifyPlan {
        let changed = working.filter { key, value in state.records[key] != value }
        var zones: [String: ZoneState] = [:]
        for key in changed.keys {
            if zones[key.zoneName] == nil, var zone = state.zones[key.zoneName] {
                zone.seq += 1
                zones[key.zoneName] = zone
            }
        }
        var writes: [StoredRecord] = []
        var stamped: [RecordKey: SyncRecord] = [:]
        for (key, stored) in changed.sorted(by: { $0.key < $1.key }) {
            guard var zone = zones[key.zoneName] else { continue }
            var record = stored.record
            record.recordChangeTag = String(zone.seq)
            if let old = state.records[key], !old.record.deleted, let tag = old.record.recordChangeTag {
                zone.checksum ^= ZoneChecksum.of(recordName: key.recordName, changeTag: tag)
            }
            if !record.deleted { zone.checksum ^= ZoneChecksum.of(recordName: key.recordName, changeTag: String(zone.seq)) }
            zones[key.zoneName] = zone
            writes.append(StoredRecord(record: record, seq: zone.seq, appendOnly: stored.appendOnly))
            stamped[key] = record
        }
        let answered = results.map { result -> Components.Schemas.OperationResult in
            guard let record = result.record else { return result }
            let key = RecordKey(zoneName: record.zoneID.zoneName, recordName: record.recordName)
            return .init(opID: result.opID, recordName: result.recordName, record: stamped[key] ?? record)
        }
        return ModifyPlan(writes: writes, zones: zones.values.sorted { $0.zoneID < $1.zoneID }, response: .init(records: answered, replayed: false))
    }

    private func apply(_ operation: Operation, to records: inout [RecordKey: StoredRecord], state: ModifyState) throws(SyncError) -> SyncRecord {
        var incoming = operation.record
        // NULL removes a field: a new record simply lacks it, an update drops it from the stored record.
        var removed: [String] = []
        for (name, value) in incoming.fields { if case .null = value { removed.append(name) } }
        for name in removed { incoming.fields[name] = nil }
        let zoneName = incoming.zoneID.zoneName
        guard let zone = state.zones[zoneName], !zone.deleted else {
            throw SyncError(.zoneNotFound, "zone \(zoneName) does not exist in this database; create it with zones/modify first")
        }
        // A put-back: a version the server held before it was restored from a backup, sent again with the server's
        // time of that version (`modified`), by an installation that still holds it.
        let heldSince = [.create, .append].contains(operation.operationType) ? incoming.modified?.timestamp : nil
        try checkWriter(zone, putBack: heldSince.map { state.restoreWindow?.contains($0) ?? false } ?? false)
        try Self.checkShape(incoming, measure: requestBytes > SyncLimits.bytesPerRecord)
        if incoming.recordType.isEmpty {
            throw SyncError(.badRequest, "record \(incoming.recordName) has no recordType: every record has a type")
        }
        try schema?.check(operation, zone: zone, records: records)
        let key = RecordKey(zoneName: zoneName, recordName: incoming.recordName)
        let existing = records[key]
        let live = existing.flatMap { $0.record.deleted ? nil : $0 }
        let stamp = Stamp(timestamp: state.now, site: caller.siteCode)
        if let live, live.appendOnly, operation.operationType != .append {
            throw SyncError(
                .accessDenied,
                "\(incoming.recordName) is a ledger record (appended): it cannot be changed or deleted; append a correction instead"
            )
        }
        switch operation.operationType {
        case .create, .append:
            if let live {
                if operation.operationType == .append, live.record.recordType == incoming.recordType, live.record.fields == incoming.fields {
                    return live.record
                }
                throw SyncError(.exists, "record \(incoming.recordName) already exists in zone \(zoneName)", serverRecord: live.record)
            }
            // Deleted here after the version put back was written: the deletion is the newer change, and stands.
            if let heldSince, let deletion = existing?.record.modified?.timestamp, deletion > heldSince {
                throw SyncError(
                    .notFound,
                    "record \(incoming.recordName) was deleted in zone \(zoneName) after the version sent again; it stays deleted"
                )
            }
            records[key] = Self.new(incoming, stamp: stamp, deleted: false, appendOnly: operation.operationType == .append)
        case .update, .forceUpdate:
            return try update(operation, incoming, removing: removed, live: live, stamp: stamp, key: key, in: &records)
        case .delete, .forceDelete:
            return try delete(operation, incoming, existing: existing, live: live, stamp: stamp, key: key, in: &records)
        }
        return records[key]!.record
    }

    /// An update merges the fields sent into the live record; a forced one makes the record if the server lacks it.
    private func update(
        _ operation: Operation,
        _ incoming: SyncRecord,
        removing removed: [String],
        live: StoredRecord?,
        stamp: Stamp,
        key: RecordKey,
        in records: inout [RecordKey: StoredRecord]
    ) throws(SyncError) -> SyncRecord {
        let zoneName = key.zoneName
        guard var current = live else {
            if operation.operationType == .forceUpdate {
                records[key] = Self.new(incoming, stamp: stamp, deleted: false)
                return records[key]!.record
            }
            throw SyncError(.notFound, "record \(incoming.recordName) does not exist in zone \(zoneName); create it instead")
        }
        if operation.operationType == .update { try checkTag(incoming, against: current.record) }
        if !incoming.recordType.isEmpty && incoming.recordType != current.record.recordType {
            throw SyncError(.badRequest, "record \(incoming.recordName) is a \(current.record.recordType), not a \(incoming.recordType)")
        }
        // An update sends only the fields it changes.
        current.record.fields.merge(incoming.fields) { _, new in new }
        for name in removed { current.record.fields[name] = nil }
        current.record.modified = stamp
        records[key] = current
        return current.record
    }

    /// A deletion leaves a tombstone; a forced one leaves one even where the server lacks the record.
    private func delete(
        _ operation: Operation,
        _ incoming: SyncRecord,
        existing: StoredRecord?,
        live: StoredRecord?,
        stamp: Stamp,
        key: RecordKey,
        in records: inout [RecordKey: StoredRecord]
    ) throws(SyncError) -> SyncRecord {
        let zoneName = key.zoneName
        guard var current = live else {
            // A record deleted where the server lacks it (lost in a restore) leaves a tombstone all the same, so
            // that another installation's copy put back later does not bring it back.
            if operation.operationType == .forceDelete, existing == nil {
                records[key] = Self.new(incoming, stamp: stamp, deleted: true)
                return records[key]!.record
            }
            throw SyncError(.notFound, "record \(incoming.recordName) does not exist in zone \(zoneName)")
        }
        if operation.operationType == .delete { try checkTag(incoming, against: current.record) }
        current.record.fields = [:]
        current.record.deleted = true
        current.record.modified = stamp
        records[key] = current
        return current.record
    }

    /// A record the server did not hold, as it is stored: made and changed now, a tombstone without fields if deleted.
    private static func new(_ record: SyncRecord, stamp: Stamp, deleted: Bool, appendOnly: Bool = false) -> StoredRecord {
        var record = record
        if deleted { record.fields = [:] }
        record.created = stamp
        record.modified = stamp
        record.deleted = deleted
        return StoredRecord(record: record, seq: 0, appendOnly: appendOnly)
    }

    private func checkTag(_ incoming: SyncRecord, against current: SyncRecord) throws(SyncError) {
        guard let tag = incoming.recordChangeTag else {
            throw SyncError(
                .badRequest,
                "record \(incoming.recordName) needs its recordChangeTag to be updated or deleted (or use forceUpdate, forceDelete)"
            )
        }
        guard tag == current.recordChangeTag else {
            throw SyncError(
                .conflict,
                "record \(incoming.recordName) changed on the server since change \(tag); merge into the server's record and send it again",
                serverRecord: current
            )
        }
    }

    /// Head office may also put back into a site's zone what the server lost in a restore, when the site lost it
    /// too: only a version from between the newest change the restored data holds and the restore, and only to
    /// create a record the zone lacks, with the zone's owner in its owner-bound fields.
    private func checkWriter(_ zone: ZoneState, putBack: Bool) throws(SyncError) {
        guard case .shared = scope else { return }
        switch zone.writers {
        case .all: return
        case .hq where caller.role == .hq: return
        case .owner where zone.owner == caller.siteCode: return
        case .owner where putBack && caller.role == .hq: return
        case .hq:
            throw SyncError(.accessDenied, "zone \(zone.zoneID.zoneName) is written by head office only; \(caller.siteCode) is a shop")
        case .owner:
            throw SyncError(.accessDenied, "zone \(zone.zoneID.zoneName) belongs to \(zone.owner ?? "another site"); only it may write there")
        }
    }

    static func checkShape(_ record: SyncRecord, measure: Bool = true) throws(SyncError) {
        for (what, value) in [("recordName", record.recordName), ("recordType", record.recordType)] where value.utf8.count > 255 {
            throw SyncError(.badRequest, "\(what) is longer than 255 bytes")
        }
        if record.recordName.isEmpty { throw SyncError(.badRequest, "recordName is empty") }
        if record.fields.keys.contains(where: { $0.isEmpty || $0.utf8.count > 255 }) {
            throw SyncError(.badRequest, "record \(record.recordName) has a field name that is empty or longer than 255 bytes")
        }
        if record.fields.values.contains(where: \.holdsNullInList) {
            throw SyncError(.badRequest, "record \(record.recordName) has NULL inside a LIST; NULL only removes a whole field")
        }
        // SQLite's text ends at a NUL and PostgreSQL's refuses one: a value holding it would not come back as sent.
        if let field = record.fields.first(where: { $0.key.utf8.contains(0) || $0.value.holdsNUL })?.key
            ?? ([record.recordName, record.recordType].contains { $0.utf8.contains(0) } ? "recordName" : nil)
        {
            throw SyncError(
                .badRequest,
                "record \(record.recordName.debugDescription) holds a NUL character (U+0000) in \(field.debugDescription); text may not contain one"
            )
        }
        guard measure else { return }
        let size = (try? JSONEncoder().encode(record.fields).count) ?? 0
        if size > SyncLimits.bytesPerRecord {
            throw SyncError(
                .limitExceeded,
                "record \(record.recordName) has \(size) bytes of fields; store large values as assets. " + SyncLimits.summary
            )
        }
    }

    /// The first written live record that names a missing record or an asset never uploaded, in the fields its
    /// operation sent: the fields an update leaves alone were checked when they were written (and their targets are
    /// not among the records read for this batch).
    private func unresolvedReference(
        in operations: [Operation],
        records: [RecordKey: StoredRecord],
        assets: Set<String>
    ) -> (opID: String, error: SyncError)? {
        for operation in operations {
            let record = operation.record
            guard let stored = records[RecordKey(zoneName: record.zoneID.zoneName, recordName: record.recordName)], !stored.record.deleted
            else { continue }
            for reference in record.fields.values.flatMap(\.references) {
                let key = RecordKey(zoneName: reference.zoneName ?? record.zoneID.zoneName, recordName: reference.recordName)
                if records[key].map({ $0.record.deleted }) ?? true {
                    let reason =
                        "record \(record.recordName) refers to \(key.recordName) in zone \(key.zoneName), which does not exist; "
                        + "send that record first or in the same atomic batch"
                    return (operation.opID, SyncError(.validatingReferenceError, reason))
                }
            }
            for asset in record.fields.values.flatMap(\.assets) where !assets.contains(asset.sha256) {
                let reason = "record \(record.recordName) names asset \(asset.sha256), which was never uploaded; upload it first"
                return (operation.opID, SyncError(.validatingReferenceError, reason))
            }
        }
        return nil
    }
}

extension FieldValue {
    /// NULL means "remove this field", which has no meaning inside a list.
    fileprivate var holdsNUL: Bool {
        switch self {
        // By bytes: Foundation's `contains` on a String took a tenth of the server's CPU for a batch.
        case .string(let text), .decimal(let text): text.utf8.contains(0)
        case .reference(let reference): reference.recordName.utf8.contains(0) || (reference.zoneName?.utf8.contains(0) ?? false)
        case .list(let items): items.contains { $0.holdsNUL }
        default: false
        }
    }

    fileprivate var holdsNullInList: Bool {
        guard case .list(let items) = self else { return false }
        return items.contains { $0 == .null || $0.holdsNullInList }
    }
}
