import Foundation

/// The codes a sync server answers with, after CloudKit's, each with its HTTP status.
public enum ServerErrorCode: String, Codable, Sendable, CaseIterable {
    case conflict = "CONFLICT"
    case exists = "EXISTS"
    case notFound = "NOT_FOUND"
    case zoneNotFound = "ZONE_NOT_FOUND"
    case changeTokenExpired = "CHANGE_TOKEN_EXPIRED"
    case accessDenied = "ACCESS_DENIED"
    case authenticationFailed = "AUTHENTICATION_FAILED"
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    case quotaExceeded = "QUOTA_EXCEEDED"
    case throttled = "THROTTLED"
    case tryAgainLater = "TRY_AGAIN_LATER"
    case limitExceeded = "LIMIT_EXCEEDED"
    case atomicError = "ATOMIC_ERROR"
    case incompatibleVersion = "INCOMPATIBLE_VERSION"
    case badRequest = "BAD_REQUEST"
    case internalError = "INTERNAL_ERROR"
    /// A batch ID sent before with other content: a store reverted or copied reuses IDs, and its new changes must
    /// not be answered with the old batch's answer.
    case batchReused = "BATCH_REUSED"
    /// A field clock further ahead of the server's time than `FieldClocks.allowedLead`: one wrong clock would win
    /// every later merge.
    case clockSkew = "CLOCK_SKEW"
    /// The server has taken batches from this site that the sending store does not know of: the store was put back
    /// to an older copy of its file, or another copy of it syncs as the same site.
    case storeDiverged = "STORE_DIVERGED"
    /// A record that breaks the container's schema (an undeclared type, a missing or mistyped field, a field bound to
    /// the zone's owner that names another).
    case schemaViolation = "SCHEMA_VIOLATION"

    public var httpStatus: Int {
        switch self {
        case .conflict, .exists, .batchReused, .storeDiverged: 409
        case .notFound, .zoneNotFound: 404
        case .changeTokenExpired: 410
        case .accessDenied: 403
        case .authenticationFailed: 401
        case .validatingReferenceError: 412
        case .quotaExceeded: 413
        case .throttled: 429
        case .tryAgainLater: 503
        case .limitExceeded, .atomicError, .badRequest, .clockSkew, .schemaViolation: 400
        case .incompatibleVersion: 426
        case .internalError: 500
        }
    }
}

/// An error the server answers with: what went wrong in words a person can act on, when to retry, and for a
/// CONFLICT the server's current record, to merge into and send again.
public struct SyncError: Error, Codable, Hashable, Sendable {
    public var serverErrorCode: ServerErrorCode
    public var reason: String
    /// Seconds to wait before retrying (THROTTLED, TRY_AGAIN_LATER).
    public var retryAfter: Int?
    public var serverRecord: SyncRecord?

    public init(_ code: ServerErrorCode, _ reason: String, retryAfter: Int? = nil, serverRecord: SyncRecord? = nil) {
        self.serverErrorCode = code
        self.reason = reason
        self.retryAfter = retryAfter
        self.serverRecord = serverRecord
    }

    public var httpStatus: Int { serverErrorCode.httpStatus }
}

/// The protocol's limits, enforced by the server and stated in every LIMIT_EXCEEDED.
public enum SyncLimits {
    public static let operationsPerRequest = 400
    public static let bytesPerRequest = 2 * 1024 * 1024
    public static let bytesPerRecord = 1024 * 1024
    public static let recordsPerChangesPage = 400
    public static let bytesPerAsset = 50 * 1024 * 1024
    /// A user's private database holds at most this many records, and this many bytes of them (iCloud's key-value
    /// store's quotas: 1,024 keys and 1 MB).
    public static let recordsPerUser = 1024
    public static let bytesPerUser = 1024 * 1024
    /// The `Sync-User` header that names a user's private database.
    public static let userHeader = "Sync-User"

    public static let summary =
        "limits: \(operationsPerRequest) operations and \(bytesPerRequest / 1024 / 1024) MB per request, "
        + "\(bytesPerRecord / 1024 / 1024) MB per record, \(recordsPerChangesPage) records per changes page, "
        + "\(bytesPerAsset / 1024 / 1024) MB per asset"
}

/// The protocol version this code speaks, sent in the `Sync-Protocol-Version` header.
public enum SyncProtocolVersion {
    public static let current = 1
    public static let header = "Sync-Protocol-Version"
}

/// Field clocks, as the protocol carries them: a record's reserved field `~clocks` holds a JSON object from field
/// name to clock, each "MILLISECONDS.SITE" with the milliseconds as 15 digits, so clocks compare as text. The server
/// knows no field's meaning, but bounds every clock by its own time.
public enum FieldClocks {
    public static let fieldName = "~clocks"
    /// How far ahead of the server's time a clock may be (and how far apart a client's and the server's clocks may
    /// be before the client refuses to sync).
    public static let allowedLead: Int64 = 5 * 60 * 1000

    /// Every clock's milliseconds in a record's fields; nil when `~clocks` is present but unreadable.
    public static func milliseconds(in fields: [String: FieldValue]) -> [Int64]? {
        guard let value = fields[fieldName] else { return [] }
        guard case .string(let json) = value, let map = JSONReader.strings(Data(json.utf8)) else { return nil }
        var result: [Int64] = []
        for clock in map.values {
            guard let milliseconds = Int64(clock.prefix { $0 != "." }) else { return nil }
            result.append(milliseconds)
        }
        return result
    }
}
