import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// Where this store syncs and as whom, saved when it joins.
public struct SyncMembership: Sendable, Codable, Equatable {
    public var server: String
    public var container: String
    public var siteCode: String
    /// `hq` or `shop`.
    public var role: String
    /// Kept in a file beside the store (`StoreFiles.syncCredential`), not in it: empty when that file is missing.
    public var credential: String
    /// Head office's own certificate authority (PEM), pinned when the store joined it by its fingerprint; nil when
    /// the machine's trusted authorities vouch for head office's certificate.
    public var authority: String?

    public init(server: String, container: String, siteCode: String, role: String, credential: String, authority: String? = nil) {
        self.server = server
        self.container = container
        self.siteCode = siteCode
        self.role = role
        self.credential = credential
        self.authority = authority
    }
}

/// One local transaction's changes, sent as one atomic `records/modify` batch.
public struct OutboxBatch: Sendable {
    /// The last change-log entry it covers: once acknowledged, everything up to here is sent.
    public var throughSeq: Int64
    /// The same on every retry, so the server recognises a replay after a lost answer.
    public var batchID: String
    public var operations: [OutboxOperation]
    /// The bytes of the pictures its records name, by SHA-256: they go up before the records.
    public var assets: [String: Data] = [:]

    /// As kept in `sync_state` while it waits for its answer: a line with the sequence number and the ID, then one
    /// line per operation, its kind and its record's JSON (which has no raw line breaks). Foundation's JSON coders
    /// took a third of the first upload's time.
    var stored: String {
        (["\(throughSeq) \(batchID)"] + operations.map { "\($0.kind.rawValue) \($0.record.json)" }).joined(separator: "\n")
    }

    init(throughSeq: Int64, batchID: String, operations: [OutboxOperation]) {
        self.throughSeq = throughSeq
        self.batchID = batchID
        self.operations = operations
    }

    init(stored: String) throws {
        let lines = stored.split(separator: "\n", omittingEmptySubsequences: false)
        let head = lines.first?.split(separator: " ", maxSplits: 1) ?? []
        guard head.count == 2, let through = Int64(head[0]) else { throw NorthwindError.storeUnavailable("The pending sync batch is unreadable.") }
        throughSeq = through
        batchID = String(head[1])
        operations = try lines.dropFirst().map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let kind = OutboxOperation.Kind(rawValue: String(parts[0])) else {
                throw NorthwindError.storeUnavailable("The pending sync batch is unreadable.")
            }
            return OutboxOperation(kind: kind, record: try SyncRecord.decode(Data(parts[1].utf8)))
        }
    }
}

public struct OutboxOperation: Sendable {
    /// `forceDelete`: a deletion of a version sent again after a server restore, whose change tag on the restored
    /// server this store does not know.
    public enum Kind: String, Sendable { case create, update, delete, forceDelete, append }
    public var kind: Kind
    public var record: SyncRecord
}

/// What a batch to the shared database says of its store: its client ID, its place in the site's sequence of batches,
/// and whether it takes the site over (see the server's `SiteLineage`).
public struct SyncLineage: Sendable, Equatable {
    public var clientID: String
    public var sequence: Int64
    public var takeOver: Bool
}

/// What the server said of one operation.
public enum OperationOutcome: Sendable {
    case saved(SyncRecord)
    /// The server's record changed since this store's base (CONFLICT), or already exists (EXISTS).
    case changedOnServer(SyncRecord)
    /// The record is gone on the server (NOT_FOUND): deletes beat concurrent updates.
    case goneOnServer
    /// Not applied because another operation of its atomic batch failed: it goes up again.
    case notApplied
    /// Refused because a record it refers to is gone on the server (VALIDATING_REFERENCE_ERROR): that record is
    /// restored from here and goes up first, then this one again.
    case missingReference(String)
    /// Refused for a reason a retry cannot fix (ACCESS_DENIED, a reference the server lacks, a limit); recorded in
    /// the conflict inbox so that nothing is lost silently.
    case refused(String)
}

/// What a download or an acknowledgement did.
public struct SyncApplied: Sendable, Equatable {
    public var saved = 0
    public var deleted = 0
    public var merged = 0
    public var waiting = 0
    public var discarded = 0
    /// Changes the server refused: each went to the conflict inbox once, and is not sent again until edited here.
    public var refused = 0
    /// The zone's checksum differed from the server's at the end of a catch-up: fetch it again from scratch.
    public var refetch = false
    /// It still differed after fetching it again: `sync status` names the zone.
    public var checksumDiffers = false
    /// After an acknowledgement: this store's client and the batches the server has taken from it, for the file
    /// beside the store (`StoreFiles.syncWatermark`).
    var watermark: Watermark?

    struct Watermark: Sendable, Equatable {
        var clientID: String
        var batches: Int64
    }
}

/// The store's side of sync: what it must send, what it has heard, and the merge rules. Every method is one
/// transaction, and the sync engine keeps no state of its own, so a crash at any point loses nothing: the outbox is
/// the change log, and an acknowledgement or a downloaded page is recorded with its effects or not at all.
extension ShopSync {
    // MARK: Membership

    /// The membership, with the credential from its file beside the store. A store whose credential still sits in
    /// the store (an older version kept it there) has it moved out, so that its backups carry none from then on.
    public func membership() async throws(NorthwindError) -> SyncMembership? {
        guard var membership = try await read({ db in try Self.membership(db) }) else { return nil }
        try takeOverIfRevertedCopy()
        let files = StoreFiles(path: store.configuration.path)
        if !membership.credential.isEmpty {
            if files.readSyncCredential() == nil { try files.writeSyncCredential(membership.credential) }
            let stored = membership
            try await write { db in try Self.saveMembership(db, stored) }
        }
        membership.credential = files.readSyncCredential() ?? ""
        return membership
    }

    /// A store file put back to an older copy of itself knows of fewer batches than the server took from it (its
    /// watermark beside it says how many), or is a client it has been before; then it is treated as a restored
    /// store: it takes its site over, fetches everything again, and executes no order until a full sync has brought
    /// back what shipped since that copy. True when it was found so.
    @discardableResult
    public func takeOverIfRevertedCopy() throws(NorthwindError) -> Bool {
        let watermark = StoreFiles(path: store.configuration.path).readSyncWatermark()
        guard !watermark.isEmpty else { return false }
        do {
            return try store.pool.write { db in
                guard try Self.membership(db) != nil else { return false }
                // No client yet, beside a watermark: a copy from before the store's first batch.
                if let clientID = try Self.state(db, "clientID") {
                    guard let index = watermark.lastIndex(where: { $0.clientID == clientID }) else { return false }
                    let taken = Int64(try Self.state(db, "batchesTaken") ?? "0") ?? 0
                    guard watermark[index].batches > taken || index != watermark.count - 1 else { return false }
                }
                try Backups.startOverAsRestored(db)
                return true
            }
        } catch {
            throw NorthwindError.translating(error)
        }
    }

    /// Saves the membership without its credential, which goes to its file beside the store.
    static func saveMembership(_ db: Database, _ membership: SyncMembership) throws {
        var stored = membership
        stored.credential = ""
        let json = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
        try db.execute(
            sql: "INSERT INTO sync_state (key, value) VALUES ('membership', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [json]
        )
    }

    static func membership(_ db: Database) throws -> SyncMembership? {
        guard let json = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'membership'") else { return nil }
        return try JSONDecoder().decode(SyncMembership.self, from: Data(json.utf8))
    }

    /// This store's site code, which it enrols with and which prefixes its order numbers.
    public func siteCode() async throws(NorthwindError) -> String {
        try await read { db in try StoreMetadata.siteCode(db) }
    }

    static func checkCanJoin(_ db: Database, containerHasData: Bool, siteCode: String?) throws {
        if try membership(db) != nil {
            throw NorthwindError.invalidState("This store has already joined a sync server; it syncs with `northwind sync now`.")
        }
        let empty = try Store.isEmpty(db)
        if containerHasData && !empty {
            throw NorthwindError.invalidState(
                "This store holds data and the company on the sync server does too: joining would mix two catalogues. "
                    + "Join with an empty store (northwind sync join URL TOKEN --store NEW-FILE), which downloads everything."
            )
        }
        let current = try StoreMetadata.siteCode(db)
        if let siteCode, siteCode != current, !empty {
            throw NorthwindError.invalidState(
                "The token enrols site \(siteCode), but this store holds data under site code \(current): ask for a token for \(current), "
                    + "or join with an empty store, which takes \(siteCode)."
            )
        }
    }

    static func state(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = ?"), arguments: [key])
    }

    static func setState(_ db: Database, _ key: String, _ value: String?) throws {
        if let value {
            try db.cachedStatement(sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                .execute(arguments: [key, value])
        } else {
            try db.cachedStatement(sql: "DELETE FROM sync_state WHERE key = ?").execute(arguments: [key])
        }
    }

    /// This copy of the store becomes the site's at the server (after a restore, or when the server said that it is
    /// behind): a new client ID, taking the site over with its next batch, and every zone fetched again from scratch,
    /// so that what the server took from the site since this copy's state comes back; until then it is treated as a
    /// restored store. The other copy, if any, is refused from then on.
    public func resumeAsThisCopy() async throws(NorthwindError) {
        try await write { db in
            guard try Self.membership(db) != nil else {
                throw NorthwindError.invalidState("This store has not joined a sync server: there is nothing to resume.")
            }
            try Backups.startOverAsRestored(db)
        }
    }

    static func takeOverSite(_ db: Database) throws {
        try setState(db, "clientID", UUID().uuidString.lowercased())
        try setState(db, "takeOver", "1")
    }

    /// Forgets every zone's token: the next sync fetches each from scratch, and removes what the server no longer has
    /// (unless changed here and not yet sent).
    static func refetchEverything(_ db: Database) throws {
        for zone in try String.fetchAll(db, sql: "SELECT DISTINCT zoneName FROM sync_records")
            + String.fetchAll(db, sql: "SELECT substr(key, 7) FROM sync_state WHERE key LIKE 'token:%'")
        {
            try setState(db, "token:" + zone, nil)
            try setState(db, "refetching:" + zone, "1")
            try db.execute(sql: "DELETE FROM sync_refetch WHERE zoneName = ?", arguments: [zone])
        }
    }

    // MARK: After a restore

    /// A store restored from a backup takes, executes and cancels no order, writes no quote, counts no stock and
    /// sends or receives no transfer until a full sync has brought back what the server knows: an order shipped after
    /// the backup reads "new" here until then, and would ship twice; the numbers this store gave out since are not
    /// known here; and a stock count is a movement from the shelf as this store sees it.
    static func requireSyncedSinceRestore(_ db: Database) throws {
        guard try membership(db) != nil, let since = try state(db, "restoredUntilFullSync") else { return }
        throw NorthwindError.invalidState(
            "This store was restored from a backup, or put back to an older copy of its file (\(since)), and has not completed a "
                + "full sync since, so it takes, executes and cancels no order, writes no quote, counts no stock and sends or "
                + "receives no transfer: what it did since that copy comes back with the sync, and would otherwise be done twice "
                + "or counted from the wrong shelf. Sync first (northwind sync now)."
        )
    }

    /// Whether orders wait for a full sync after a restore (what the order pages and `sync status` say).
    public func awaitsFullSyncAfterRestore() async throws(NorthwindError) -> Bool {
        try await read { db in try Self.membership(db) != nil && Self.state(db, "restoredUntilFullSync") != nil }
    }

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
        // A batch built and not acknowledged goes again as it was, whatever was committed since: the server
        // recognises a replay by the batch's ID and answers it with its first answer, which must fit.
        if let stored = try state(db, "pendingBatch") {
            var batch = try OutboxBatch(stored: stored)
            batch.assets = try assetBytes(db, of: batch.operations, site: site)
            return batch
        }
        var through = Int64(try state(db, "uploadedThrough") ?? "0") ?? 0
        while true {
            let entries = try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, tableName, recordID, txn FROM change_log WHERE seq > ? AND origin = 'local' AND NOT localOnly
                    ORDER BY seq LIMIT 2000
                    """,
                arguments: [through]
            )
            guard let first = entries.first else { return nil }
            let txn: Int64? = first["txn"]
            var keys: [(String, String)] = []
            var seen = Set<String>()
            var last: Int64 = first["seq"]
            for entry in entries {
                // One transaction's entries, or a run of entries made outside the domain. (Several small
                // transactions in one request measured no faster: docs/performance.md.)
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
                try setState(db, "pendingBatch", batch.stored)
                try setState(db, "pendingBatchID", batch.batchID)
                batch.assets = try assetBytes(db, of: operations, site: site)
                return batch
            }
            // Nothing left to say (a row made and removed before upload, an update back to what the server has):
            // pass over it.
            through = last
            try setState(db, "uploadedThrough", String(through))
        }
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
                let rowID = try Int64.fetchOne(db, sql: "SELECT id FROM \(table.name) WHERE recordID = ?", arguments: [operation.record.recordName])
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
        let baseFields = try decodeFields(base["fields"])
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
        return try JSONDecoder().decode([String: FieldValue].self, from: Data(json.utf8))
    }

    static func encodeFields(_ fields: [String: FieldValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(fields), as: UTF8.self)
    }
}

extension SyncEngineSide {
    /// Why a store that has joined cannot sync when its credential file is missing, and what to do.
    public func missingCredentialMessage(_ membership: SyncMembership) -> String {
        let file: String = StoreFiles(path: store.configuration.path).syncCredential.path
        let site: String = membership.siteCode
        return "This store has joined \(membership.container) as \(site), but its sync credential (\(file)) is missing: a store "
            + "restored or copied onto another machine has none, as backups carry none. Ask the sync server's administrator for "
            + "a token that replaces the site's credential (northwind-sync-server enroll --site \(site) --replace), then run "
            + "northwind sync join URL TOKEN --again."
    }

    /// Keeps a rotated credential (in its file beside the store).
    public func saveCredential(_ credential: String) throws(NorthwindError) {
        try StoreFiles(path: store.configuration.path).writeSyncCredential(credential)
    }

    /// Records the membership. A store that holds data may join only a container that holds none (head office's
    /// first upload); a store that joins a container with data must be empty and downloads everything.
    public func join(_ membership: SyncMembership, containerHasData: Bool) async throws(NorthwindError) {
        try await read { db in try ShopSync.checkCanJoin(db, containerHasData: containerHasData, siteCode: nil) }
        // The credential's file first: a store whose membership is recorded always has its credential beside it.
        try backoffice.syncEngine.saveCredential(membership.credential)
        // A watermark left by another store once at this path would take this one for an older copy of that one.
        try? FileManager.default.removeItem(at: StoreFiles(path: store.configuration.path).syncWatermark)
        try await write { db in
            try ShopSync.checkCanJoin(db, containerHasData: containerHasData, siteCode: nil)
            // A site the administrator chose (`enroll --site`): an empty store takes its code for its order numbers.
            // (A store with data was refused such a token before it was spent: `checkCanJoin` with the token's site.)
            if try StoreMetadata.siteCode(db) != membership.siteCode, try Store.isEmpty(db) {
                try StoreMetadata.setSiteCode(db, membership.siteCode)
            }
            try ShopSync.saveMembership(db, membership)
            // Head office's rows are all to upload: the change log holds every row's insert. An empty store has
            // nothing to send.
            let through = containerHasData ? (try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0) : 0
            try ShopSync.setState(db, "uploadedThrough", String(through))
        }
    }

    /// Whether this store may join a company: refused (before any token is spent) when it has joined already, when
    /// it holds data and so does the company, or when the token names another site than a store with data uses.
    public func checkCanJoin(containerHasData: Bool, siteCode: String?) async throws(NorthwindError) {
        try await read { db in try ShopSync.checkCanJoin(db, containerHasData: containerHasData, siteCode: siteCode) }
    }

    /// The store's site was given a new credential (`enroll --replace`): it syncs with it from now on, as before.
    public func replaceCredential(_ membership: SyncMembership) async throws(NorthwindError) {
        guard let current = try await read({ db in try ShopSync.membership(db) }), current.siteCode == membership.siteCode else {
            throw NorthwindError.invalidState("This store has not joined as site \(membership.siteCode).")
        }
        try backoffice.syncEngine.saveCredential(membership.credential)
        try await write { db in try ShopSync.saveMembership(db, membership) }
    }

    /// A value the sync engine keeps in the store (what it last declared, say).
    public func stateValue(_ key: String) async throws(NorthwindError) -> String? {
        try await read { db in try ShopSync.state(db, "engine:" + key) }
    }

    public func setStateValue(_ key: String, _ value: String?) async throws(NorthwindError) {
        try await write { db in try ShopSync.setState(db, "engine:" + key, value) }
    }

    // MARK: Lineage

    /// This store's client ID and the sequence of its next batch to the shared database (`SyncLineage`), made on first
    /// use.
    public func lineage() async throws(NorthwindError) -> SyncLineage {
        try await write { db in
            let clientID: String
            if let known = try ShopSync.state(db, "clientID") {
                clientID = known
            } else {
                clientID = UUID().uuidString.lowercased()
                try ShopSync.setState(db, "clientID", clientID)
            }
            let taken = Int64(try ShopSync.state(db, "batchesTaken") ?? "0") ?? 0
            return SyncLineage(clientID: clientID, sequence: taken + 1, takeOver: try ShopSync.state(db, "takeOver") != nil)
        }
    }

    /// A full sync ended with every zone fetched: a restored store may execute orders again, and a received record
    /// still waiting for the record it refers to waits for one the server no longer has (deleted at another site):
    /// the conflict inbox says so, once per record, and `sync status` counts them. Such a record stays waiting, and
    /// applies if its parent ever comes back.
    /// `listedZones`: the zones the server has; one this store still marks for fetching again but the server no
    /// longer lists has nothing to fetch, and holds nothing up.
    public func fullSyncCompleted(listedZones: Set<String>? = nil) async throws(NorthwindError) {
        try await write { db in
            if let listedZones {
                for key in try String.fetchAll(db, sql: "SELECT key FROM sync_state WHERE key LIKE 'refetching:%'")
                where !listedZones.contains(String(key.dropFirst("refetching:".count))) {
                    try ShopSync.setState(db, key, nil)
                }
            }
            let refetching = try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_state WHERE key LIKE 'refetching:%'") ?? 0
            if refetching == 0 {
                try ShopSync.setState(db, "restoredUntilFullSync", nil)
                // Every zone fetched in this epoch: the deletions acknowledged in earlier ones were sent again where
                // a restored server had brought their records back, and are kept no longer.
                try db.execute(
                    sql:
                        "DELETE FROM sync_state WHERE key LIKE 'deletedAck:%' AND value <> ifnull((SELECT value FROM sync_state WHERE key = 'serverEpoch'), '')"
                )
            }
            for body in try String.fetchAll(db, sql: "SELECT body FROM sync_waiting") {
                let record = try SyncRecord.decode(Data(body.utf8))
                let key = "orphan:\(record.zoneID.zoneName)/\(record.recordName)"
                guard try ShopSync.state(db, key) == nil else { continue }
                var applied = SyncApplied()
                try Self.discardWhole(
                    db,
                    table: record.recordType,
                    record: record,
                    reason: "received, but it refers to a record the server no longer has (deleted at another site): not applied",
                    applied: &applied
                )
                try ShopSync.setState(db, key, Timestamp.now.description)
            }
        }
    }

    // MARK: Server epoch

    /// Notes the server's epoch, which changes when its data is restored from a backup. On a change, every record
    /// this store wrote and had acknowledged (its own site's zone, and shared records whose fields carry its clocks)
    /// goes up again, and so does every shared record it holds in a version the server changed after the newest
    /// change of the restored data (`restoredThrough`), whoever wrote it: the writer may have lost it too, in a
    /// restore of its own. Each goes with the clocks it had, so that a server that lost it gets it back and one that
    /// kept it merges it by clock; then every zone is fetched again from scratch. Nothing acknowledged is deleted here
    /// to match a server that lost it. Returns how many records go up again (0 on the first contact or the same
    /// epoch).
    public func noteServerEpoch(_ epoch: String, restoredThrough: Int64? = nil) async throws(NorthwindError) -> Int {
        try await write { db in
            guard let site = try syncSite(db) else { return 0 }
            let known = try ShopSync.state(db, "serverEpoch")
            try ShopSync.setState(db, "serverEpoch", epoch)
            guard let known, known != epoch else { return 0 }
            let ownZone = SyncTable.siteZone(site.siteCode)
            var queued = 0
            // Parents' tables first, so that the batches (up to 400 records each) send a record's parent with it or
            // before it: head office cannot restore another site's parent later.
            let rows = try Row.fetchAll(db, sql: "SELECT tableName, recordID, zoneName, fields, modified FROM sync_records")
            func order(_ row: Row) -> (Int, String, String) { (SyncTable.rank(row["tableName"]), row["tableName"], row["recordID"]) }
            for row in rows.sorted(by: { order($0) < order($1) }) {
                let (table, recordID, zone): (String, String, String) = (row["tableName"], row["recordID"], row["zoneName"])
                let clocks = FieldClock.clocks(of: try ShopSync.decodeFields(row["fields"]))
                // A version the server took at or after the newest change its restored data holds: may be lost with the restore.
                let modified: Int64? = row["modified"]
                let lostByTheServer = restoredThrough.flatMap { through in modified.map { $0 >= through } } ?? false
                // Another site's zone is written by that site; head office also puts back what the site lost too.
                let anotherSites = zone != ownZone && !SyncTable.sharedZones.contains(zone)
                let sendsAgain =
                    anotherSites
                    ? lostByTheServer && site.membership.role == "hq"
                    : zone == ownZone || lostByTheServer || clocks.values.contains(where: { $0.site == site.siteCode })
                guard sendsAgain else { continue }
                try db.execute(sql: "DELETE FROM sync_records WHERE tableName = ? AND recordID = ?", arguments: [table, recordID])
                // A version still waiting from an earlier restore keeps the clocks it had.
                try db.execute(
                    sql: "INSERT OR IGNORE INTO sync_resend (tableName, recordID, fields, zoneName, modified) VALUES (?, ?, ?, ?, ?)",
                    arguments: [table, recordID, row["fields"] as String, zone, modified]
                )
                // The clock the record goes up with is when it last changed here (`changedAt`), as it was.
                let newest = clocks.values.max().map { Int64($0.text.prefix(while: \.isNumber)) ?? 0 } ?? 0
                let changedAt =
                    try String.fetchOne(
                        db,
                        sql: """
                            SELECT changedAt FROM change_log WHERE recordID = ? AND tableName = ? AND origin = 'local' AND NOT localOnly
                            ORDER BY seq DESC LIMIT 1
                            """,
                        arguments: [recordID, table]
                    ) ?? Timestamp(milliseconds: newest).description
                try db.execute(
                    sql: "INSERT INTO change_log (tableName, recordID, operation, origin, changedAt) VALUES (?, ?, 'update', 'local', ?)",
                    arguments: [table, recordID, changedAt]
                )
                queued += 1
            }
            // The restored server may hold an older schema, or none: declare it again.
            try ShopSync.setState(db, "engine:declaredSchema", nil)
            // A batch built before the restore may name changes the server has lost with it: build it afresh.
            try ShopSync.setState(db, "pendingBatch", nil)
            try ShopSync.setState(db, "pendingBatchID", nil)
            try ShopSync.refetchEverything(db)
            try ShopSync.setState(
                db,
                "lastServerRestore",
                "\(Timestamp.now.description): the server's data was restored; \(queued) records it may have lost went up again from here"
            )
            return queued
        }
    }

    /// The next batch to send: the changes of the oldest unacknowledged local transaction, with any later one that
    /// changed its records again (entries written outside the domain, such as a bulk load, go up to 400 records at a
    /// time), each record once, as it is when the batch is first built. Nil when nothing is pending.
    public func nextOutboxBatch() async throws(NorthwindError) -> OutboxBatch? {
        // A write, so that entries with nothing left to say are passed over for good, and the batch's extent is kept.
        try await write { db in try syncSite(db).flatMap { try ShopSync.nextBatch(db, site: $0) } }
    }

    /// Forgets the batch built and not acknowledged, so that the next one is built afresh: only when it is known
    /// that the server never applied it (a picture it names never reached the server, and is gone here since).
    public func forgetPendingBatch() async throws(NorthwindError) {
        try await write { db in
            try ShopSync.setState(db, "pendingBatch", nil)
            try ShopSync.setState(db, "pendingBatchID", nil)
        }
    }
}

/// What `sync status` shows.
public struct SyncStatus: Sendable, Codable, Equatable {
    public var server: String?
    public var container: String?
    public var siteCode: String
    public var role: String?
    /// Local changes not yet acknowledged by the server.
    public var pending: Int
    public var lastSuccess: String?
    /// The last failure, in words; nil once a sync succeeds.
    public var lastError: String?
    /// Since when the server has been out of reach; nil when it answers.
    public var offlineSince: String?
    public var openConflicts: Int
    /// The last change the server refused, in words, with when; it stays until a later refusal replaces it.
    public var lastRefusal: String?
    /// When this store last found the server's data restored from a backup, and what it sent again.
    public var lastServerRestore: String? = nil
    /// Set while a store restored from a backup has not completed a full sync: it executes no orders until then.
    public var restoredUntilFullSync: String? = nil
    /// Zones whose checksum differed from the server's even after fetching them again, in words.
    public var zonesDiffering: [String] = []
    /// Received records of types this version does not know: kept, and applied after an upgrade.
    public var heldForNewerVersion = 0
    /// Received records that refer to a record the server no longer has: each is in the conflict inbox.
    public var waitingForDeletedRecords = 0
    /// When this store's sync credential expires, as the server last said (it is rotated well before).
    public var credentialExpires: String? = nil
    /// This store has joined but its credential file is missing (restored or copied onto another machine).
    public var credentialMissing = false
}

extension ShopSync {
    public func status() async throws(NorthwindError) -> SyncStatus {
        try await read { db in
            let membership = try Self.membership(db)
            return SyncStatus(
                server: membership?.server,
                container: membership?.container,
                siteCode: try StoreMetadata.siteCode(db),
                role: membership?.role,
                pending: try Self.pendingCount(db),
                lastSuccess: try Self.state(db, "lastSuccess"),
                lastError: try Self.state(db, "lastError"),
                offlineSince: try Self.state(db, "offlineSince"),
                openConflicts: try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_conflicts WHERE resolvedAt IS NULL") ?? 0,
                lastRefusal: try Self.state(db, "lastRefusal"),
                lastServerRestore: try Self.state(db, "lastServerRestore"),
                restoredUntilFullSync: try Self.state(db, "restoredUntilFullSync"),
                zonesDiffering: try String.fetchAll(db, sql: "SELECT value FROM sync_state WHERE key LIKE 'checksumDiffers:%' ORDER BY key"),
                heldForNewerVersion: try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_held") ?? 0,
                waitingForDeletedRecords: try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM sync_waiting w
                        WHERE EXISTS (SELECT 1 FROM sync_state WHERE key = 'orphan:' || w.zoneName || '/' || w.recordName)
                        """
                ) ?? 0,
                credentialExpires: try Self.state(db, "engine:credentialExpires").flatMap(Int64.init).map {
                    Timestamp(milliseconds: $0).description
                },
                credentialMissing: membership.map { $0.credential.isEmpty && StoreFiles(path: store.configuration.path).readSyncCredential() == nil }
                    ?? false
            )
        }
    }
}

extension SyncEngineSide {
    /// Records how a sync ended: a success clears the error; a failure keeps it, and an unreachable server starts
    /// (or continues) the offline period.
    public func recordOutcome(error: String?, offline: Bool) async throws(NorthwindError) {
        try await write { db in
            let now = Timestamp.now.description
            if let error {
                try ShopSync.setState(db, "lastError", error)
                if offline, try ShopSync.state(db, "offlineSince") == nil { try ShopSync.setState(db, "offlineSince", now) }
                if !offline { try ShopSync.setState(db, "offlineSince", nil) }
            } else {
                try ShopSync.setState(db, "lastSuccess", now)
                try ShopSync.setState(db, "lastError", nil)
                try ShopSync.setState(db, "offlineSince", nil)
            }
        }
    }
}

/// The sync state in a few words, for the header of every page.
public struct SyncBadge: Sendable, Equatable {
    public enum State: String, Sendable {
        case inSync = "in-sync"
        case pending, offline, error
    }
    public var state: State
    public var text: String
}

extension ShopSync {
    /// The most pending changes the badge counts: from there on it says "1000+ pending".
    static let badgeCountCap = 1000

    /// Nil for a store that has not joined. One bounded statement on the quick readers, since every page asks: a store
    /// that has not joined counts nothing (its whole change log would be pending), and a joined one counts at most
    /// `badgeCountCap` entries (a head office before its first upload has every row of its data pending).
    public func badge() throws(NorthwindError) -> SyncBadge? {
        let row = try quickRead { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT
                          (SELECT 1 FROM sync_state WHERE key = 'membership') AS joined,
                          (SELECT value FROM sync_state WHERE key = 'lastError') AS lastError,
                          (SELECT value FROM sync_state WHERE key = 'offlineSince') AS offlineSince,
                          CASE WHEN EXISTS (SELECT 1 FROM sync_state WHERE key = 'membership') THEN
                            (SELECT count(*) FROM (SELECT 1 FROM change_log WHERE origin = 'local' AND NOT localOnly
                               AND seq > CAST(ifnull((SELECT value FROM sync_state WHERE key = 'uploadedThrough'), '0') AS INTEGER)
                               LIMIT \(Self.badgeCountCap)))
                          END AS pending
                        """
                )
            )
        }
        guard let row, (row["joined"] as Int?) != nil else { return nil }
        let count: Int = row["pending"] ?? 0
        let pending = count < Self.badgeCountCap ? "\(count)" : "\(Self.badgeCountCap)+"
        if let since: String = row["offlineSince"] {
            return SyncBadge(
                state: .offline,
                text: "Offline since \(since.prefix(16).replacingOccurrences(of: "T", with: " ")) UTC, \(pending) pending"
            )
        }
        if let error: String = row["lastError"] { return SyncBadge(state: .error, text: "Sync error: \(error)") }
        if count > 0 { return SyncBadge(state: .pending, text: "\(pending) pending") }
        return SyncBadge(state: .inSync, text: "In sync")
    }
}

extension ShopSync {
    /// Only the installation that took an order changes it (its lines, its execution, its cancellation): the order
    /// lives in that site's zone, which nobody else may write. Another site's order is read-only here.
    static func requireWrittenHere(_ order: Order, _ db: Database) throws {
        guard
            let zone = try String.fetchOne(
                db.cachedStatement(sql: "SELECT zoneName FROM sync_records WHERE tableName = 'orders' AND recordID = ?"),
                arguments: [order.recordID]
            ),
            let membership = try membership(db)
        else { return }
        let own = SyncTable.siteZone(membership.siteCode)
        if zone != own {
            throw NorthwindError.invalidState(
                "Order \(order.number) was taken at site \(zone.dropFirst("site-".count)); only that site can change, execute or cancel it."
            )
        }
    }
}
