import Foundation
import SyncProtocol

/// What a storage engine does for the server. The rules live above it (`ModifyPlanner`, `SyncService`); an engine
/// only reads and writes, each method in one transaction. Two engines: SQLite (the default) and PostgreSQL.
protocol SyncStorage: Sendable {
    /// Changes when the data is replaced (a restore), so every older sync token expires.
    func epoch() async throws -> String
    /// Marks the data as restored: a new epoch, so that every token given before expires, and the time of the
    /// newest change the restored data holds (`restoredThrough`).
    func startNewEpoch() async throws
    /// After a restore: the server's time of the newest change the restored data holds. A client holds anything the
    /// server changed after it in a version the server has lost. Nil when the data was never restored.
    func restoredThrough() async throws -> Int64?
    /// Notes that the site has sent again, in `epoch`, what a restore lost; ignored unless `epoch` is the current one.
    func noteCaughtUp(container: String, siteCode: String, epoch: String) async throws
    /// The container's sites that have sent again, in the current epoch, what the restore lost.
    func caughtUpSites(container: String) async throws -> Set<String>

    func addEnrollment(tokenHash: String, container: String, role: Role, expires: Int64, siteCode: String?, replaces: Bool) async throws
    /// What an unspent, unexpired token grants, without spending it; nil otherwise.
    func enrollment(tokenHash: String, now: Int64) async throws -> EnrollmentGrant?
    /// Spends a one-time token: fails when it is unknown, spent or expired, or the site code is taken (unless the
    /// token replaces that site's credential). A token bound to a site enrols that site, whatever `siteCode` says.
    func redeemEnrollment(tokenHash: String, siteCode: String, credentialHash: String, now: Int64) async throws -> Installation
    /// The container's tokens, spent or not, newest first.
    func enrollments(container: String) async throws -> [EnrollmentGrant]
    /// Deletes an unspent token whose hash starts with `id`; false when there is none.
    func revokeEnrollment(container: String, id: String) async throws -> Bool
    /// The installation whose current credential, or next one, hashes to `credentialHash`. The first use of the
    /// next one (`rotateCredential`) makes it the current one, issued `now`, and retires the old one.
    func installation(credentialHash: String, now: Int64) async throws -> Installation?
    /// Keeps `nextHash` as the site's next credential, replacing any earlier next one; the current one stays valid
    /// until the next one is first used.
    func rotateCredential(container: String, siteCode: String, nextHash: String) async throws
    func installations(container: String) async throws -> [Installation]
    /// Whether the site was enrolled and is now revoked.
    func revoke(container: String, siteCode: String, now: Int64) async throws -> Bool

    /// The container's schema as declared (JSON), or nil.
    func schema(container: String) async throws -> String?
    func saveSchema(container: String, json: String) async throws

    func zones(container: String, scope: DatabaseScope) async throws -> [ZoneState]
    /// Reads the named zones, lets `decide` say what they become, and writes that. A zone that becomes deleted
    /// loses its records.
    func modifyZones<Answer: Sendable>(
        container: String,
        scope: DatabaseScope,
        names: [String],
        decide: @Sendable ([String: ZoneState]) -> ([ZoneState], Answer)
    ) async throws -> Answer

    /// Applies a batch in one transaction: locks its zones in name order, reads what `ModifyReads` holds, and writes
    /// what `batch.decide` says (`ModifyBatch` holds the steps). The answer is JSON (`ModifyAnswer`).
    func modifyRecords(_ batch: ModifyBatch) async throws -> String

    func lookup(container: String, scope: DatabaseScope, keys: [RecordKey]) async throws -> [RecordKey: StoredRecord]

    /// How many live records a database holds, and their bytes as stored.
    func usage(container: String, scope: DatabaseScope) async throws -> (records: Int, bytes: Int)

    /// A page of a zone's changes after `after` (live records only when `after` is nil), read in one snapshot.
    /// A page never splits one change: it ends at a change's last record, even past `limit`.
    func changes(
        container: String,
        scope: DatabaseScope,
        zoneName: String,
        after: Int64?,
        limit: Int,
        recordTypes: [String]?
    ) async throws -> ChangesPage

    /// A zone's live records of one type, in record-name order.
    func liveRecords(container: String, scope: DatabaseScope, zoneName: String, recordType: String) async throws -> [StoredRecord]

    /// Which of these assets the container holds.
    func presentAssets(container: String, hashes: [String]) async throws -> Set<String>
    /// Stores verified bytes under their hash (once: a second upload of the same bytes changes nothing).
    func saveAsset(container: String, sha256: String, data: Data) async throws
    func asset(container: String, sha256: String) async throws -> Data?
    /// The bytes of every asset the container holds, for its quota.
    func assetBytes(container: String) async throws -> Int64

    /// Deletes tombstones written before `before` and raises each zone's purge floor past them.
    func purgeTombstones(before: Int64) async throws -> Int

    /// An installation's subscriptions in one database, in ID order.
    func subscriptions(container: String, scope: DatabaseScope, siteCode: String) async throws -> [StoredSubscription]
    /// Reads an installation's subscriptions, lets `decide` say what they become, and writes that, in one transaction.
    func modifySubscriptions<Answer: Sendable>(
        container: String,
        scope: DatabaseScope,
        siteCode: String,
        decide: @Sendable ([StoredSubscription]) throws -> ([StoredSubscription], Answer)
    ) async throws -> Answer

    /// Calls `changed` with a container's name each time another instance commits to it, until cancelled; nil when
    /// this engine has only one instance (its own commits are signalled in process). `ready` is called each time
    /// the listening starts (again).
    func listen(_ changed: @escaping @Sendable (String) async -> Void, ready: @escaping @Sendable () -> Void) -> Task<Void, Never>?

    /// Releases connections; the engine is not used afterwards.
    func close() async
}

extension SyncStorage {
    func close() async {}
    func listen(_ changed: @escaping @Sendable (String) async -> Void, ready: @escaping @Sendable () -> Void) -> Task<Void, Never>? { nil }
}

/// A record as a changes page carries it: its stored JSON, read but not decoded (a client catching up is sent the
/// bytes as stored), and the columns paging needs.
struct ChangedRecord: Sendable {
    var recordName: String
    var recordType: String
    var seq: Int64
    var body: String

    func decoded() throws -> SyncRecord { try SyncRecord.decode(Data(body.utf8)) }
}

/// A page of a zone's changes.
struct ChangesPage: Sendable {
    /// The zone as it stood in the snapshot; nil when it does not exist.
    var zone: ZoneState?
    var records: [ChangedRecord]
    /// The change number the page ends at: the client's next token.
    var through: Int64
    var moreComing: Bool
}

/// What an enrolment token grants, as the administrator sees it (never the token itself).
public struct EnrollmentGrant: Sendable, Equatable {
    /// The first 12 hex digits of the token's hash: enough to name it, useless to enrol with.
    public var id: String
    public var container: String
    public var role: Role
    /// The site it enrols, chosen by the administrator; nil when the installation gives its own.
    public var siteCode: String?
    /// It gives an enrolled (revoked or lost) site a new credential.
    public var replaces: Bool
    public var created: Int64
    public var expires: Int64
    /// The site that spent it; nil while unspent.
    public var usedBy: String?
}
