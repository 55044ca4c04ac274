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

/// A zone's tokens around a batch this store sent, from the server's answer: the batch's records are the zone's only
/// change between the two, so a store that held `previousToken` holds the zone up to `syncToken` once the answer is
/// taken, and need not fetch its own records back.
public struct ZoneTokenAdvance: Sendable, Hashable {
    public var zone: String
    public var previousToken: String
    public var syncToken: String
    /// The zone had never held a record before the batch: a store that never fetched it holds all of it too.
    public var firstChange: Bool

    public init(zone: String, previousToken: String, syncToken: String, firstChange: Bool) {
        (self.zone, self.previousToken, self.syncToken, self.firstChange) = (zone, previousToken, syncToken, firstChange)
    }

    /// Moves each zone's token past the batch, in the transaction that takes its answer, when the store held the
    /// token just before it. Any other token stays: the fetch brings what lies between, the batch included.
    static func apply(_ advances: [ZoneTokenAdvance], _ db: Database) throws {
        for advance in advances {
            // A zone being fetched again from scratch is left to its fetch: its last page removes every row whose
            // record it did not see, and a batch skipped over would be among them.
            guard try ShopSync.state(db, "refetching:" + advance.zone) == nil else { continue }
            let held = try ShopSync.state(db, "token:" + advance.zone)
            guard held == advance.previousToken || (held == nil && advance.firstChange) else { continue }
            try ShopSync.setState(db, "token:" + advance.zone, advance.syncToken)
        }
    }
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

    /// The values of every key that starts with `prefix`, read by a range of the key's index (not a scan of every
    /// key: one is kept per acknowledged deletion, so the table grows).
    static func states(_ db: Database, prefix: String) throws -> [String] {
        guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { return [] }
        let end = String(prefix.unicodeScalars.dropLast()) + String(Character(next))
        return try String.fetchAll(
            db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key >= ? AND key < ? ORDER BY key"),
            arguments: [prefix, end]
        )
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
    /// Sites whose records this store keeps in a newer version than the restored server's, until each has sent
    /// again what the restore lost (`SyncOwnerCatchUp`).
    public var awaitingSites: [String] = []
    /// Versions of other sites' records that both the site and the server lost, offered from here to their site and
    /// kept until it answers (`RecordOffers.swift`).
    public var offersWaiting = 0
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
                awaitingSites: try String.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT substr(key, 19) FROM sync_state p
                        WHERE key LIKE 'ownerPending:site-%'
                          AND EXISTS (SELECT 1 FROM sync_state s WHERE s.key LIKE 'superseded:' || substr(p.key, 14) || ' %')
                        ORDER BY 1
                        """
                ),
                offersWaiting: try SyncEngineSide.offersWaiting(db, site: try StoreMetadata.siteCode(db)),
                credentialExpires: try Self.state(db, "engine:credentialExpires").flatMap(Int64.init).map {
                    Timestamp(milliseconds: $0).description
                },
                credentialMissing: membership.map { $0.credential.isEmpty && StoreFiles(path: store.configuration.path).readSyncCredential() == nil }
                    ?? false
            )
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
