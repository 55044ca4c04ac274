import Foundation
import SyncProtocol

/// What an installation may do in its container.
public enum Role: String, Codable, Sendable, CaseIterable {
    /// Head office: uploads the company's data first and may write zones kept for head office.
    case hq
    case shop
}

/// An enrolled installation: a shop, the warehouse or head office.
public struct Installation: Codable, Hashable, Sendable {
    public var container: String
    public var siteCode: String
    public var role: Role
    /// Milliseconds since 1970.
    public var enrolled: Int64
    public var revoked: Int64?
    /// When its credential was issued (at enrolment, or the rotation that replaced it), in milliseconds since 1970.
    public var credentialIssued: Int64

    init(container: String, siteCode: String, role: Role, enrolled: Int64, revoked: Int64? = nil, credentialIssued: Int64? = nil) {
        self.container = container
        self.siteCode = siteCode
        self.role = role
        self.enrolled = enrolled
        self.revoked = revoked
        self.credentialIssued = credentialIssued ?? enrolled
    }
}

/// A container's database: `shared` by every installation, one installation's `private` one, or a user's private
/// one (`private` with a `Sync-User` header), which every installation of the container reads and writes for that
/// user, as a CloudKit private database belongs to an account rather than a device.
public enum DatabaseScope: Hashable, Sendable {
    case shared
    case privateTo(site: String)
    case user(String)

    /// How the scope is stored: `shared` or `private/CODE`.
    var key: String {
        switch self {
        case .shared: "shared"
        case .privateTo(let site): "private/\(site)"
        case .user(let login): "user/\(login)"
        }
    }
}

/// Who may write a zone's records.
public enum ZoneWriters: String, Codable, Sendable {
    /// Every installation of the container.
    case all
    /// Head office only.
    case hq
    /// The zone's owner only (`site-CODE` zones).
    case owner
}

/// A zone as stored: its change counter, the floor below which tokens have expired, and its checksum.
struct ZoneState: Hashable, Sendable {
    var zoneID: ZoneID
    var owner: String?
    var writers: ZoneWriters
    /// The number of the zone's last change; every write transaction takes the next one.
    var seq: Int64
    /// Tombstones up to this change have been purged: a token below it has expired.
    var purgedThrough: Int64
    var checksum: UInt64
    var deleted: Bool
}

/// A record as stored, with the change that last wrote it.
struct StoredRecord: Hashable, Sendable {
    var record: SyncRecord
    var seq: Int64
    /// Written by `append`: a ledger entry, never changed or deleted.
    var appendOnly: Bool
}

/// A subscription as storage keeps it: its ID and its JSON. The rules read it (`SyncService.modifySubscriptions`);
/// storage knows no protocol type.
struct StoredSubscription: Hashable, Sendable {
    var id: String
    var body: String
}

/// A record's place: its zone and name.
struct RecordKey: Hashable, Sendable, Comparable {
    var zoneName: String
    var recordName: String
    static func < (a: RecordKey, b: RecordKey) -> Bool {
        (a.zoneName, a.recordName) < (b.zoneName, b.recordName)
    }
}

/// The server's clock, in milliseconds since 1970.
enum Clock {
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
