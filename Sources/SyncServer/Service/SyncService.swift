import Crypto
import Foundation
import Logging
import SyncAPI
import SyncProtocol

/// The server's rules above storage: who is calling, what they may touch, tokens and paging. HTTP handlers and the
/// administration commands call this; it calls a `SyncStorage` engine.
public struct SyncService: Sendable {
    let storage: any SyncStorage
    let logger: Logger
    /// Wakes this instance's event streams when a container changes.
    let signal = ChangeSignal()
    /// Each container's schema, decoded once per version of its stored JSON.
    let schemas = SchemaCache()
    /// The most asset bytes one container may hold; nil for no limit.
    public var assetQuota: Int64?
    /// How long a credential is good for after it is issued, in milliseconds; nil for ever. Shops rotate theirs
    /// before (`rotateCredential`), so a credential copied from a machine stops working on its own.
    public var credentialLifetime: Int64? = 365 * 86_400_000

    init(storage: any SyncStorage, logger: Logger = Logger(label: "northwind-sync")) {
        self.storage = storage
        self.logger = logger
    }

    /// Opens the embedded SQLite engine at `path`, creating it on first use.
    public static func sqlite(path: String, logger: Logger = Logger(label: "northwind-sync")) throws(SyncError) -> SyncService {
        do {
            return SyncService(storage: try SQLiteStorage(path: path), logger: logger)
        } catch {
            throw SyncError(.internalError, "cannot open the sync database at \(path): \(error)")
        }
    }

    /// Opens the engine `database` names: a `postgres://` URL (several instances may share it), or a SQLite file,
    /// created on first use.
    public static func open(database: String, logger: Logger = Logger(label: "northwind-sync")) async throws(SyncError) -> SyncService {
        guard database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") else {
            return try sqlite(path: database, logger: logger)
        }
        do {
            return SyncService(storage: try await PostgresStorage(url: database, logger: logger), logger: logger)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.internalError, "cannot open the sync database at \(Self.redacted(database)): \(String(reflecting: error))")
        }
    }

    /// A URL without its password, for messages and logs.
    public static func redacted(_ database: String) -> String {
        guard var parts = URLComponents(string: database), parts.password != nil else { return database }
        parts.password = "***"
        return parts.string ?? database
    }

    /// Releases the engine's connections.
    public func close() async { await storage.close() }

    /// Runs storage work, turning its failures into errors a client can act on.
    func guarded<T>(_ work: () async throws -> T) async throws(SyncError) -> T {
        do {
            return try await work()
        } catch let error as SyncError {
            throw error
        } catch {
            if StorageFailure.isBusy(error) {
                throw SyncError(.tryAgainLater, "the sync database is busy; try again shortly", retryAfter: 1)
            }
            logger.error("storage failed: \(String(reflecting: error))")
            throw SyncError(.internalError, "the sync server could not complete the request; it has been logged")
        }
    }

    // MARK: Scope

    /// The database a caller names in the path: its own container only; `private` is the installation's own, or
    /// with `user` that user's.
    func scope(_ caller: Installation, container: String, database: String, user: String? = nil) throws(SyncError) -> DatabaseScope {
        guard container == caller.container else {
            throw SyncError(.accessDenied, "this credential belongs to container \(caller.container), not \(container)")
        }
        guard database == "private" else {
            if user != nil { throw SyncError(.badRequest, "\(SyncLimits.userHeader) names a user's private database: send it with private only") }
            return .shared
        }
        return user.map(DatabaseScope.user) ?? .privateTo(site: caller.siteCode)
    }

    // MARK: Schema

    /// The container's schema; no record types when head office declared none.
    func schema(_ caller: Installation, container: String) async throws(SyncError) -> Components.Schemas.ContainerSchema {
        _ = try scope(caller, container: container, database: "shared")
        return try await storedSchema(container: container) ?? .init(recordTypes: [])
    }

    /// Head office declares the container's schema; from then on the shared database refuses records that break it.
    func putSchema(
        _ caller: Installation,
        container: String,
        schema: Components.Schemas.ContainerSchema
    ) async throws(SyncError) -> Components.Schemas.ContainerSchema {
        _ = try scope(caller, container: container, database: "shared")
        guard caller.role == .hq else { throw SyncError(.accessDenied, "only head office declares the container's schema") }
        let names = schema.recordTypes.map(\.name)
        guard Set(names).count == names.count else { throw SyncError(.badRequest, "a record type appears twice in the schema") }
        for type in schema.recordTypes {
            let fields = type.fields.map(\.name)
            guard Set(fields).count == fields.count else {
                throw SyncError(.badRequest, "a field appears twice in record type \(type.name)")
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(schema) else { throw SyncError(.badRequest, "the schema cannot be stored") }
        let json = String(decoding: data, as: UTF8.self)
        try await guarded { try await storage.saveSchema(container: container, json: json) }
        return schema
    }

    func storedSchema(container: String) async throws(SyncError) -> Components.Schemas.ContainerSchema? {
        // Read every time, since another instance may have stored a new one.
        guard let json = try await guarded({ try await storage.schema(container: container) }) else { return nil }
        return schemas.schema(container: container, json: json)
    }

    // MARK: Zones

    /// The zones, with whether each one's owner has sent again what the last restore lost; `caughtUpEpoch`, when
    /// the caller says it has done so itself in the current epoch, is noted first.
    func listZones(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        caughtUpEpoch: String? = nil
    ) async throws(SyncError) -> Components.Schemas.ZonesResponse {
        if let caughtUpEpoch {
            try await guarded { try await storage.noteCaughtUp(container: container, siteCode: caller.siteCode, epoch: caughtUpEpoch) }
        }
        let epoch = try await guarded { try await storage.epoch() }
        let restoredThrough = try await guarded { try await storage.restoredThrough() }
        let zones = try await guarded { try await storage.zones(container: container, scope: scope) }
        // Never restored: nothing was lost, every owner is caught up.
        let caughtUp = restoredThrough == nil ? nil : try await guarded { try await storage.caughtUpSites(container: container) }
        return .init(
            zones: zones.filter { !$0.deleted }.map { zone in
                var wired = Self.wire(zone, epoch: epoch)
                if let caughtUp, let owner = zone.owner { wired.ownerCaughtUp = caughtUp.contains(owner) }
                return wired
            },
            epoch: epoch,
            restoredThrough: restoredThrough,
            credentialExpires: credentialExpires(caller),
            credentialIssued: caller.credentialIssued,
            siteCode: caller.siteCode
        )
    }

    static func wire(_ zone: ZoneState, epoch: String) -> Components.Schemas.Zone {
        .init(
            zoneID: zone.zoneID,
            owner: zone.owner,
            writers: .init(rawValue: zone.writers.rawValue) ?? .all,
            syncToken: ZoneToken(epoch: epoch, zone: zone.zoneID.zoneName, seq: zone.seq).encoded,
            checksum: ZoneChecksum.hex(zone.checksum)
        )
    }

    func modifyZones(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        operations: [Components.Schemas.ZoneOperation]
    ) async throws(SyncError) -> [Components.Schemas.ZoneResult] {
        if operations.count > SyncLimits.operationsPerRequest {
            throw SyncError(.limitExceeded, "\(operations.count) zone operations in one request. " + SyncLimits.summary)
        }
        let names = operations.map(\.zoneID.zoneName)
        guard Set(names).count == names.count else { throw SyncError(.badRequest, "a zone appears twice in one request") }
        let planner = ZonePlanner(caller: caller, scope: scope, operations: operations)
        let results = try await guarded {
            try await storage.modifyZones(container: container, scope: scope, names: names) { current in planner.plan(current) }
        }
        await signal.changed(container)
        let epoch = try await guarded { try await storage.epoch() }
        return results.map { outcome in
            switch outcome.result {
            case .success(let zone): .init(zoneID: outcome.zoneID, zone: Self.wire(zone, epoch: epoch))
            case .failure(let error): .init(zoneID: outcome.zoneID, error: error)
            }
        }
    }

    // MARK: Records

    func modifyRecords(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        request: Components.Schemas.ModifyRequest,
        bodySize: Int
    ) async throws(SyncError) -> String {
        try ModifyPlanner.checkRequest(request, bodySize: bodySize)
        if case .user(let login) = scope { try await checkQuota(login, container: container, scope: scope, operations: request.operations) }
        var planner = ModifyPlanner(caller: caller, scope: scope, operations: request.operations, atomic: request.atomic ?? true)
        planner.requestBytes = bodySize
        if case .shared = scope { planner.schema = SchemaRules(try await storedSchema(container: container)) }
        // Read before the batch's transaction: an epoch started meanwhile (`mark-restored`) leaves the answer tokens of
        // the old one, which the client's next fetch finds expired and starts over from, losing nothing.
        let epoch = try await guarded { try await storage.epoch() }
        let response = try await guarded {
            try await storage.modifyRecords(
                ModifyBatch(
                    container: container,
                    scope: scope,
                    clientID: "\(scope.key)/\(caller.siteCode)/\(request.clientID)",
                    batchID: request.batchID,
                    digest: ModifyAnswer.digest(request),
                    lineage: SiteLineage(site: caller.siteCode, request: request, scope: scope),
                    planner: planner,
                    now: Clock.now(),
                    epoch: epoch
                )
            )
        }
        await signal.changed(container)
        return response
    }

    /// Refuses a write that would take a user's private database over its quota. Checked before the write, so two
    /// installations writing for the same user at the same instant could each pass it; the next write is refused.
    private func checkQuota(
        _ login: String,
        container: String,
        scope: DatabaseScope,
        operations: [Components.Schemas.RecordOperation]
    ) async throws(SyncError) {
        let keys = operations.map { RecordKey(zoneName: $0.record.zoneID.zoneName, recordName: $0.record.recordName) }
        let (usage, current) = try await guarded {
            (try await storage.usage(container: container, scope: scope), try await storage.lookup(container: container, scope: scope, keys: keys))
        }
        var (records, bytes) = usage
        for (key, operation) in zip(keys, operations) {
            let existing = current[key].flatMap { $0.record.deleted ? nil : $0 }
            let old = existing.map { Self.bytes($0.record) } ?? 0
            switch operation.operationType {
            case .delete, .forceDelete:
                if existing != nil { (records, bytes) = (records - 1, bytes - old) }
            default:
                let new = Self.bytes(operation.record)
                (records, bytes) = existing == nil ? (records + 1, bytes + new) : (records, bytes - old + new)
            }
        }
        if records > SyncLimits.recordsPerUser || bytes > SyncLimits.bytesPerUser {
            throw SyncError(
                .quotaExceeded,
                "user \(login)'s private database would hold \(records) records and \(bytes) bytes; its quota is "
                    + "\(SyncLimits.recordsPerUser) records and \(SyncLimits.bytesPerUser / 1024 / 1024) MB: remove some first"
            )
        }
    }

    /// A record's size as stored.
    static func bytes(_ record: SyncRecord) -> Int { (try? JSONEncoder().encode(record).count) ?? 0 }

    func lookup(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        keys: [Components.Schemas.RecordKey]
    ) async throws(SyncError)
        -> [Components.Schemas.LookupResult]
    {
        if keys.count > SyncLimits.operationsPerRequest {
            throw SyncError(.limitExceeded, "\(keys.count) records asked for in one lookup. " + SyncLimits.summary)
        }
        let recordKeys = keys.map { RecordKey(zoneName: $0.zoneID.zoneName, recordName: $0.recordName) }
        let found = try await guarded { try await storage.lookup(container: container, scope: scope, keys: recordKeys) }
        let zones = Set(
            try await guarded { try await storage.zones(container: container, scope: scope) }.filter { !$0.deleted }.map(\.zoneID.zoneName)
        )
        return recordKeys.map { key in
            if let stored = found[key], !stored.record.deleted { return .init(recordName: key.recordName, record: stored.record) }
            let error =
                zones.contains(key.zoneName)
                ? SyncError(.notFound, "record \(key.recordName) does not exist in zone \(key.zoneName)")
                : SyncError(.zoneNotFound, "zone \(key.zoneName) does not exist in this database")
            return .init(recordName: key.recordName, error: error)
        }
    }

    func query(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        request: Components.Schemas.QueryRequest
    ) async throws(SyncError)
        -> Components.Schemas.QueryResponse
    {
        let zoneName = request.zoneID.zoneName
        try await requireZone(zoneName, container: container, scope: scope)
        let limit = request.resultsLimit ?? 100
        guard (1...SyncLimits.recordsPerChangesPage).contains(limit) else {
            throw SyncError(.limitExceeded, "resultsLimit is \(limit). " + SyncLimits.summary)
        }
        var offset = 0
        if let marker = request.continuationMarker {
            guard let decoded = TokenCoding.decode(QueryMarker.self, marker), decoded.offset >= 0 else {
                throw SyncError(.badRequest, "continuationMarker is not one this server gave; start the query again without it")
            }
            offset = decoded.offset
        }
        let records = try await guarded {
            try await storage.liveRecords(container: container, scope: scope, zoneName: zoneName, recordType: request.query.recordType)
        }
        let matched = try RecordQuery(request.query).run(records.map(\.record))
        let page = Array(matched.dropFirst(offset).prefix(limit))
        let next = offset + page.count < matched.count ? TokenCoding.encode(QueryMarker(offset: offset + page.count)) : nil
        return .init(records: page, continuationMarker: next)
    }

    private func requireZone(_ name: String, container: String, scope: DatabaseScope) async throws(SyncError) {
        let zones = try await guarded { try await storage.zones(container: container, scope: scope) }
        guard zones.contains(where: { $0.zoneID.zoneName == name && !$0.deleted }) else {
            throw SyncError(.zoneNotFound, "zone \(name) does not exist in this database")
        }
    }

    // MARK: Assets

    /// Which assets the caller must upload, with where to.
    func requestUploads(
        _ caller: Installation,
        container: String,
        assets: [Components.Schemas.Asset]
    ) async throws(SyncError)
        -> [Components.Schemas.AssetUploadAnswer]
    {
        _ = try scope(caller, container: container, database: "shared")
        if assets.count > SyncLimits.operationsPerRequest {
            throw SyncError(.limitExceeded, "\(assets.count) assets in one request. " + SyncLimits.summary)
        }
        for asset in assets {
            try Self.checkHash(asset.sha256)
            if asset.size > SyncLimits.bytesPerAsset || asset.size < 0 {
                throw SyncError(.limitExceeded, "asset \(asset.sha256) has \(asset.size) bytes. " + SyncLimits.summary)
            }
        }
        let present = try await guarded { try await storage.presentAssets(container: container, hashes: assets.map(\.sha256)) }
        return assets.map { asset in
            present.contains(asset.sha256)
                ? .init(sha256: asset.sha256, present: true)
                : .init(sha256: asset.sha256, present: false, uploadURL: "/sync/v1/\(container)/assets/\(asset.sha256)")
        }
    }

    /// Stores bytes after checking they hash to the address they were sent to.
    func upload(_ caller: Installation, container: String, sha256: String, data: Data) async throws(SyncError) -> Components.Schemas.Asset {
        _ = try scope(caller, container: container, database: "shared")
        try Self.checkHash(sha256)
        let actual = Secrets.sha256(data)
        guard actual == sha256 else {
            throw SyncError(.badRequest, "the bytes sent hash to \(actual), not \(sha256); nothing was stored. Upload them again")
        }
        if let quota = assetQuota, try await guarded({ try await storage.presentAssets(container: container, hashes: [sha256]) }).isEmpty {
            // Checked before each upload: two uploads at once may pass it by one asset.
            let used = try await guarded { try await storage.assetBytes(container: container) }
            if used + Int64(data.count) > quota {
                throw SyncError(
                    .quotaExceeded,
                    "\(container) holds \(used) bytes of assets and may hold \(quota); this asset's \(data.count) bytes would pass that. "
                        + "Ask the server's operator to raise --asset-quota-mb"
                )
            }
        }
        try await guarded { try await storage.saveAsset(container: container, sha256: sha256, data: data) }
        return .init(sha256: sha256, size: Int64(data.count))
    }

    func download(_ caller: Installation, container: String, sha256: String) async throws(SyncError) -> Data {
        _ = try scope(caller, container: container, database: "shared")
        try Self.checkHash(sha256)
        guard let data = try await guarded({ try await storage.asset(container: container, sha256: sha256) }) else {
            throw SyncError(.notFound, "asset \(sha256) was never uploaded to \(container)")
        }
        return data
    }

    static func checkHash(_ sha256: String) throws(SyncError) {
        guard sha256.wholeMatch(of: /[0-9a-f]{64}/) != nil else {
            throw SyncError(.badRequest, "an asset is named by its SHA-256 as 64 lowercase hex digits")
        }
    }

}

/// One zone's answer to changes/zone: the envelope, and its records as stored.
struct ZoneChangesPage: Sendable {
    /// Everything but the records (its `records` is empty).
    var envelope: Components.Schemas.ZoneChanges
    var records: [ChangedRecord]
}

/// Where a query's next page starts.
struct QueryMarker: Codable {
    var offset: Int
}

/// Secrets: random tokens, and the hashes the server keeps instead of them.
enum Secrets {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return hex(bytes)
    }

    static func hash(_ secret: String) -> String {
        sha256(Data(secret.utf8))
    }

    /// The SHA-256 of `data` as lowercase hex, as assets are named.
    static func sha256(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
