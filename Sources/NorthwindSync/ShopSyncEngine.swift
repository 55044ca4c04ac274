import Foundation
@_spi(SyncEngine) import Northwind
import NorthwindStore
import SyncAPI
import SyncProtocol

/// What one sync moved.
public struct SyncReport: Sendable, Codable, Equatable {
    /// Records sent and acknowledged.
    public var uploaded = 0
    /// Records received and written here.
    public var downloaded = 0
    /// Records the server sent, written here or not: this store's own records fetched back are not written, and a
    /// batch's answer spares most of those fetches.
    public var fetched = 0
    /// Of those received, the records of a first download loaded in one transaction from the zones fetched whole
    /// (`SyncEngineSide.loadSnapshot`).
    public var loadedFromSnapshot = 0
    /// Records changed on both sides and merged field by field.
    public var merged = 0
    /// Values a merge discarded (they are in the conflict inbox).
    public var discarded = 0
    /// Changes the server refused (each is in the conflict inbox, once).
    public var refused = 0
    /// Received records that wait for a row not here yet.
    public var waiting = 0
    /// Local changes still not acknowledged.
    public var pending = 0
    /// Users' own settings sent and acknowledged, and received and written here.
    public var userSettingsUploaded = 0
    public var userSettingsDownloaded = 0
    /// Users whose private database on the server is full: their changes wait here.
    public var usersOverQuota: [String] = []
    /// Records this store wrote and had acknowledged, sent again because the server's data was restored.
    public var sentAgainAfterServerRestore = 0
    /// Zones whose checksum still differed from the server's after fetching them again from scratch.
    public var zonesDiffering: [String] = []
    /// The credential was rotated at the end of this sync, as its expiry neared.
    public var credentialRotated = false

    public init() {}

}

/// Syncs one store with its sync server: pushes the outbox, then pulls every zone. It keeps no state of its own: the
/// outbox, tokens and bases live in the store, written in the same transactions as the data, so a process killed
/// at any point resumes where the store says.
public actor ShopSyncEngine {
    let backoffice: Backoffice
    /// Replaces the address the store joined with, when the sync server moved (`sync.server`).
    let server: String?

    public init(backoffice: Backoffice, server: String? = nil) {
        self.backoffice = backoffice
        self.server = server.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Enrols this store with a one-time token from `northwind-sync-server enroll` and joins its company. Head office,
    /// first in, uploads its data on the next sync; a later installation must be empty and downloads everything. The
    /// token is checked first and spent only when this store can join (a store with data joining a company with
    /// data is refused before). A token bound to a site (`enroll --site`) gives an empty store that site's code.
    /// `again`: a store whose site was revoked, or lost its credential, joins again with a token that replaces it.
    /// `fingerprint`: the SHA-256 fingerprint of head office's own certificate authority, for a head office whose
    /// certificate this machine does not trust (a Northwind appliance); the store pins that authority
    /// (`PinnedAuthority`). Joining again without one keeps the authority pinned before.
    public static func join(
        _ backoffice: Backoffice,
        server: String,
        token: String,
        fingerprint: String? = nil,
        again: Bool = false
    ) async throws -> SyncMembership {
        let existing = try await backoffice.sync.membership()
        if existing != nil && !again {
            throw ShopSyncError(.notJoined, "This store has already joined a sync server; sync it with `northwind sync now`.")
        }
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ShopSyncError(.notJoined, "\(server) is not a server address; give one such as http://sync.example.com:8444")
        }
        let given = fingerprint.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        // Checked before the token is spent: a wrong fingerprint is a wrong head office.
        // Joining again without a fingerprint keeps the authority pinned for the same host, and for no other.
        let kept = existing.flatMap { URL(string: $0.server)?.host == url.host ? $0.authority : nil }
        let authority = given.isEmpty ? kept : try await PinnedAuthority.fetch(from: url, fingerprint: given)
        // Joining is done by a person waiting (at a terminal, or on the first-run page): an address where nothing
        // answers is said within seconds.
        let anonymous = try SyncClient(server: url, container: "", credential: nil, authority: authority, timeout: .seconds(10))
        let grant = try await anonymous.checkEnrollment(token: token)
        if again {
            guard let existing else {
                throw ShopSyncError(.notJoined, "This store has not joined a sync server yet: join without --again.")
            }
            guard grant.replaces, grant.siteCode == existing.siteCode, grant.container == existing.container else {
                throw ShopSyncError(
                    .notJoined,
                    "This token does not replace site \(existing.siteCode)'s credential in \(existing.container); ask the administrator for "
                        + "one (northwind-sync-server enroll --container \(existing.container) --site \(existing.siteCode) --replace)."
                )
            }
            let enrolment = try await anonymous.enroll(token: token, siteCode: existing.siteCode)
            var membership = existing
            membership.server = url.absoluteString
            membership.credential = enrolment.credential
            membership.authority = authority
            try await backoffice.syncEngine.replaceCredential(membership)
            return membership
        }
        let containerHasData = grant.zones.contains("catalog")
        // Refused here, before the token is spent.
        try await backoffice.syncEngine.checkCanJoin(containerHasData: containerHasData, siteCode: grant.siteCode)
        let storeSite = try await backoffice.sync.siteCode()
        let siteCode = grant.siteCode ?? storeSite
        let enrolment = try await anonymous.enroll(token: token, siteCode: siteCode)
        let client = try SyncClient(server: url, container: enrolment.container, credential: enrolment.credential, authority: authority)
        let membership = SyncMembership(
            server: url.absoluteString,
            container: enrolment.container,
            siteCode: enrolment.siteCode,
            role: enrolment.role.rawValue,
            credential: enrolment.credential,
            authority: authority
        )
        do {
            try await backoffice.syncEngine.join(membership, containerHasData: containerHasData)
        } catch {
            throw ShopSyncError(
                .notJoined,
                "\(error) This store's enrolment as \(siteCode) is spent: ask the administrator to run "
                    + "`northwind-sync-server shops revoke --container \(enrolment.container) \(siteCode)` and to make a new token."
            )
        }
        var create = ["site-\(siteCode)"]
        if !containerHasData && enrolment.role == .hq { create = ["catalog", "people", "customers"] + create }
        try await client.createZones(create)
        return membership
    }

    /// Pushes every pending change, then pulls every zone (or only `zones`; none for a push alone), then pushes what
    /// the merges produced. Records how it ended in the store, for `sync status` and the web pages.
    public func syncNow(pulling zones: Set<String>? = nil) async throws(ShopSyncError) -> SyncReport {
        do throws(ShopSyncError) {
            let used = try? await backoffice.sync.membership()?.credential
            let report: SyncReport
            do throws(ShopSyncError) {
                report = try await sync(pulling: zones)
            } catch {
                // Another process of this store rotated the credential under this sync: once more, with the new one.
                let current = try? await backoffice.sync.membership()?.credential
                guard error.kind == .refused(.authenticationFailed), current != used else { throw error }
                report = try await sync(pulling: zones)
            }
            try? await backoffice.syncEngine.recordOutcome(error: nil, offline: false)
            return report
        } catch {
            try? await backoffice.syncEngine.recordOutcome(error: error.message, offline: error.kind == .offline)
            throw error
        }
    }

    private func sync(pulling zones: Set<String>?) async throws(ShopSyncError) -> SyncReport {
        guard let membership = try await domain({ try await backoffice.sync.membership() }) else {
            throw ShopSyncError(.notJoined, "This store has not joined a sync server: run `northwind sync join URL TOKEN` first.")
        }
        guard let url = URL(string: server ?? membership.server) else {
            throw ShopSyncError(.notJoined, "The server address \(server ?? membership.server) is not valid.")
        }
        guard !membership.credential.isEmpty else {
            throw ShopSyncError(.notJoined, backoffice.syncEngine.missingCredentialMessage(membership))
        }
        let client = try SyncClient(server: url, container: membership.container, credential: membership.credential, authority: membership.authority)
        var report = SyncReport()
        let listed = try await checkClock(client, membership: membership, report: &report)
        let names = Set(listed.zones.map(\.zoneID.zoneName))
        if membership.role == "hq" { try await declareSchema(client) }
        let catchingUp = Set(listed.zones.filter { $0.ownerCaughtUp == false }.map(\.zoneID.zoneName))
        try await domain { try await backoffice.syncEngine.noteOwnersCatchingUp(catchingUp) }
        try await push(client, membership: membership, report: &report)
        try await reportCaughtUp(client, epoch: listed.epoch)
        let pulled = zones.map { names.intersection($0) } ?? names
        if !pulled.isEmpty {
            try await pull(client, zones: pulled, full: zones == nil, report: &report)
            // Merges that kept local values send them up again.
            try await push(client, membership: membership, report: &report)
        }
        // Users' settings come with every full sync, and go up with every push.
        try await syncUserSettings(client, membership: membership, pulling: zones == nil, report: &report)
        if zones == nil { try await domain { try await backoffice.syncEngine.fullSyncCompleted(listedZones: names) } }
        report.pending = try await domain { try await backoffice.sync.pendingChanges() }
        // Last, as the old credential stops working once the new one is used.
        report.credentialRotated = try await rotateIfDue(client, membership: membership, listed: listed)
        return report
    }

    /// Rotates the credential once a third or less of its life is left, so that a shop that syncs at all never
    /// meets its expiry. Another process of this store rotating at the same moment is left to it.
    private func rotateIfDue(
        _ client: SyncClient,
        membership: SyncMembership,
        listed: Components.Schemas.ZonesResponse
    ) async throws(ShopSyncError) -> Bool {
        guard let expires = listed.credentialExpires else { return false }
        let known = try await domain { try await backoffice.syncEngine.stateValue("credentialExpires") }
        if known != String(expires) { try await domain { try await backoffice.syncEngine.setStateValue("credentialExpires", String(expires)) } }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let issued = listed.credentialIssued ?? now
        guard expires - now <= (expires - issued) / 3, let lock = StoreFiles(path: backoffice.store.configuration.path).rotatingSyncCredential()
        else {
            return false
        }
        defer { lock.release() }
        // The sync itself is done: a rotation that fails (the server out of reach now) leaves the old credential
        // valid, and the next sync tries again.
        do {
            try await rotate(client, membership: membership)
            return true
        } catch {
            return false
        }
    }

    /// Gives this store a new credential now (`northwind sync rotate-credential`); returns when it expires.
    public func rotateCredential() async throws(ShopSyncError) -> Date? {
        guard let membership = try await domain({ try await backoffice.sync.membership() }),
            let url = URL(string: server ?? membership.server)
        else {
            throw ShopSyncError(.notJoined, "This store has not joined a sync server: there is no credential to rotate.")
        }
        guard !membership.credential.isEmpty else { throw ShopSyncError(.notJoined, backoffice.syncEngine.missingCredentialMessage(membership)) }
        guard let lock = StoreFiles(path: backoffice.store.configuration.path).rotatingSyncCredential() else {
            throw ShopSyncError(.notJoined, "Another process of this store is rotating its credential right now; try again in a moment.")
        }
        defer { lock.release() }
        let client = try SyncClient(server: url, container: membership.container, credential: membership.credential, authority: membership.authority)
        return try await rotate(client, membership: membership).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// The server keeps the old credential valid until the new one is first used: the new one is saved beside the
    /// store, then used once, which retires the old. A crash or a lost answer anywhere leaves a credential that works.
    @discardableResult
    private func rotate(_ client: SyncClient, membership: SyncMembership) async throws(ShopSyncError) -> Int64? {
        let answer = try await client.rotateCredential()
        try await domain { try backoffice.syncEngine.saveCredential(answer.credential) }
        let renewed = try SyncClient(
            server: client.server,
            container: membership.container,
            credential: answer.credential,
            authority: client.authority
        )
        let listed = try await renewed.zones()
        if let expires = listed.credentialExpires {
            try await domain { try await backoffice.syncEngine.setStateValue("credentialExpires", String(expires)) }
        }
        return listed.credentialExpires ?? answer.expires
    }

    /// Pulls what other installations saved in one zone, without sending anything.
    public func refresh(zone: String) async throws(ShopSyncError) {
        guard let membership = try await domain({ try await backoffice.sync.membership() }), let url = URL(string: server ?? membership.server) else {
            return
        }
        var report = SyncReport()
        let client = try SyncClient(server: url, container: membership.container, credential: membership.credential, authority: membership.authority)
        try await pull(client, zones: [zone], full: false, report: &report)
    }

    /// A `Backoffice.refreshBeforeEdit` that pulls for at most `timeout`: an unreachable or slow server must not hold
    /// up an edit, which then saves as an offline one would (merged by clock if it meets another).
    public static func refresher(
        for backoffice: Backoffice,
        server: String? = nil,
        timeout: Duration = .seconds(2)
    ) -> @Sendable (String) async -> Void {
        let engine = ShopSyncEngine(backoffice: backoffice, server: server)
        return { zone in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await engine.refresh(zone: zone) }
                group.addTask { try? await Task.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// How far from the server's this computer's clock may be. Edits are merged by their clocks: a clock far ahead
    /// would win every conflict for as long as it stays wrong, one far behind lose them all. The server refuses
    /// clocks further ahead than this too (CLOCK_SKEW).
    public static let allowedClockLead = TimeInterval(FieldClocks.allowedLead / 1000)

    /// Refuses to sync from a computer whose clock is more than five minutes from the server's, or when the server's
    /// time is unknown; returns the container's zones.
    private func checkClock(
        _ client: SyncClient,
        membership: SyncMembership,
        report: inout SyncReport
    ) async throws(ShopSyncError) -> Components.Schemas.ZonesResponse {
        let listed = try await client.zones()
        // A credential file copied from another store would sync this one as that site, mixing both ledgers.
        if let site = listed.siteCode, site != membership.siteCode {
            throw ShopSyncError(
                .notJoined,
                "The sync credential beside this store (\(StoreFiles(path: backoffice.store.configuration.path).syncCredential.path)) "
                    + "belongs to site \(site), and this store is site \(membership.siteCode): nothing was sent. Put back this store's own "
                    + "credential file, or get a new one (northwind-sync-server enroll --site \(membership.siteCode) --replace, then "
                    + "northwind sync join URL TOKEN --again)."
            )
        }
        if let epoch = listed.epoch {
            // The server's data was restored: what it lost of the acknowledged records this store holds goes up again.
            report.sentAgainAfterServerRestore += try await domain {
                try await backoffice.syncEngine.noteServerEpoch(epoch, restoredThrough: listed.restoredThrough)
            }
        }
        // Clocks decide merges: with no server time to check against, nothing is sent (fail closed).
        guard let serverNow = client.serverTime.now else {
            throw ShopSyncError(
                .clockOff(seconds: 0),
                "The sync server's answer did not say its time (no Date header; a proxy in front of it may drop it), so this "
                    + "computer's clock cannot be checked and nothing is sent. Let the Date header through, then sync again."
            )
        }
        let lead = Date().timeIntervalSince(serverNow)
        if abs(lead) > Self.allowedClockLead {
            let minutes = Int(abs(lead) / 60)
            throw ShopSyncError(
                .clockOff(seconds: Int(lead)),
                "This computer's clock is \(minutes) minutes \(lead > 0 ? "ahead of" : "behind") the sync server's. Edits are "
                    + "merged by their time, so nothing is sent until the clock is right: set it (or turn on network time), then sync again."
            )
        }
        return listed
    }

    /// Head office declares the container's schema whenever this version's differs from what it last declared, so
    /// that the server refuses records that break it (a forged movement naming another shelf, a record with no type).
    private func declareSchema(_ client: SyncClient) async throws(ShopSyncError) {
        let types = try await domain { try await backoffice.syncEngine.declaredSchema() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: (try? encoder.encode(types)) ?? Data(), as: UTF8.self)
        guard try await domain({ try await backoffice.syncEngine.stateValue("declaredSchema") }) != text else { return }
        try await client.declareSchema(types)
        try await domain { try await backoffice.syncEngine.setStateValue("declaredSchema", text) }
    }

    /// Once the outbox has emptied in an epoch (what the server's restore lost has gone up again), tells the server,
    /// so that other installations stop waiting for this site's records.
    private func reportCaughtUp(_ client: SyncClient, epoch: String?) async throws(ShopSyncError) {
        guard let epoch, try await domain({ try await backoffice.syncEngine.caughtUpEpoch() }) != epoch else { return }
        _ = try await client.zones(caughtUpEpoch: epoch)
        try await domain { try await backoffice.syncEngine.noteCaughtUp(epoch: epoch) }
    }

    private func push(_ client: SyncClient, membership: SyncMembership, report: inout SyncReport) async throws(ShopSyncError) {
        // A merge answered by another merge could go on for ever; a real outbox never needs this many rounds.
        for _ in 0..<100_000 {
            guard let batch = try await domain({ try await backoffice.syncEngine.nextOutboxBatch() }) else { return }
            // Pictures go up before the records that name them; the server holds each only once.
            let named = Set(batch.operations.flatMap { $0.record.fields.values.flatMap(\.assets) })
            do throws(ShopSyncError) {
                try await client.uploadAssets(named.sorted { $0.sha256 < $1.sha256 }, bytes: batch.assets)
            } catch {
                guard case .missingAsset = error.kind else { throw error }
                // The server lacks it, so it never took this batch: build it afresh from what is here now.
                try await domain { try await backoffice.syncEngine.forgetPendingBatch() }
                continue
            }
            // Built and kept (`pendingBatch`), not sent: the server never sees this attempt.
            CrashPoint.reach("upload")
            let answer: Components.Schemas.ModifyResponse
            let lineage = try await domain { try await backoffice.syncEngine.lineage() }
            do throws(ShopSyncError) {
                answer = try await client.modify(
                    clientID: lineage.clientID,
                    batchID: batch.batchID,
                    operations: batch.operations.map { ($0.kind.rawValue, $0.record) },
                    lineage: lineage
                )
            } catch  where error.kind == .refused(.batchReused) {
                // The server applied nothing: build the batch afresh, under a new ID.
                try await domain { try await backoffice.syncEngine.forgetPendingBatch() }
                continue
            }
            // The server committed the batch; its answer is not recorded yet.
            CrashPoint.reach("acknowledge")
            // By record name, not position: an answer is only ever taken for the record it names.
            let byName = Dictionary(answer.records.map { ($0.recordName, $0) }, uniquingKeysWith: { first, _ in first })
            let outcomes = batch.operations.map { Self.outcome(byName[$0.record.recordName]) }
            let changed = outcomes.compactMap { outcome -> SyncRecord? in
                if case .changedOnServer(let record) = outcome { return record }
                return nil
            }
            let assets = try await fetchAssets(client, for: changed)
            // This store's own records need not come back in the next fetch when nothing else was written between.
            let advances = (answer.zones ?? []).map {
                ZoneTokenAdvance(zone: $0.zoneName, previousToken: $0.previousToken, syncToken: $0.syncToken, firstChange: $0.firstChange)
            }
            let applied = try await domain {
                try await backoffice.syncEngine.acknowledge(batch, outcomes: outcomes, assets: assets, advances: advances)
            }
            report.uploaded += applied.saved
            report.merged += applied.merged
            report.discarded += applied.discarded
            report.refused += applied.refused
        }
        throw ShopSyncError(.refused(.internalError), "The outbox did not empty after 100,000 batches; see `northwind sync status`.")
    }

    static func outcome(_ result: Components.Schemas.OperationResult?) -> OperationOutcome {
        guard let result else { return .notApplied }
        if let record = result.record { return .saved(record) }
        guard let error = result.error else { return .notApplied }
        switch error.serverErrorCode {
        case .conflict, .exists:
            if let server = error.serverRecord { return .changedOnServer(server) }
            return .refused(error.reason)
        case .notFound: return .goneOnServer
        case .atomicError: return .notApplied
        case .validatingReferenceError: return .missingReference(error.reason)
        default: return .refused("\(error.serverErrorCode.rawValue): \(error.reason)")
        }
    }

    /// `full`: every zone the server lists (not a refresh of one before an edit), the only pull a first download's
    /// snapshot loads in.
    private func pull(_ client: SyncClient, zones names: Set<String>, full: Bool, report: inout SyncReport) async throws(ShopSyncError) {
        // Shared zones first, parents' zones before children's; then every site's own zone.
        let order = ["catalog", "people", "customers"].filter(names.contains) + names.filter { $0.hasPrefix("site-") }.sorted()
        if full, try await domain({ try await backoffice.syncEngine.beginSnapshot() }) {
            try await pullSnapshot(client, zones: order, report: &report)
        }
        // After a snapshot, from its tokens: what changed since, and the pictures its records wait for.
        for zone in order {
            var token = try await domain { try await backoffice.syncEngine.token(zone: zone) }
            while true {
                let page: Components.Schemas.ZoneChanges
                do throws(ShopSyncError) {
                    page = try await client.changes(zone: zone, token: token)
                } catch  where error.kind == .refused(.changeTokenExpired) {
                    // Deletions older than the token were purged: fetch the zone again from scratch; its last page
                    // removes what the server no longer has (and nobody changed here).
                    try await domain { try await backoffice.syncEngine.resetToken(zone: zone) }
                    token = nil
                    continue
                }
                report.fetched += page.records.count
                let assets = try await fetchAssets(client, for: page.records)
                let applied = try await domain {
                    try await backoffice.syncEngine.applyDownloaded(
                        zone: zone,
                        records: page.records,
                        token: page.syncToken,
                        assets: assets,
                        moreComing: page.moreComing,
                        checksum: page.checksum
                    )
                }
                report.downloaded += applied.saved + applied.deleted
                report.merged += applied.merged
                report.discarded += applied.discarded
                report.waiting = applied.waiting
                if applied.refetch {
                    // The zone's checksum differed from the server's: fetch it again from scratch, once.
                    token = nil
                    continue
                }
                if applied.checksumDiffers { report.zonesDiffering.append(zone) }
                token = page.syncToken
                if !page.moreComing { break }
            }
        }
    }

    /// A new shop's first download: every zone fetched from scratch into the store's staging, then loaded in one
    /// transaction once each matches its checksum (`SyncEngineSide.loadSnapshot`). When one does not (it changed
    /// while it was read), nothing is loaded and the ordinary download follows.
    private func pullSnapshot(_ client: SyncClient, zones: [String], report: inout SyncReport) async throws(ShopSyncError) {
        typealias Fetch = Task<Result<Components.Schemas.ZoneChanges, ShopSyncError>, Never>
        func fetch(_ zone: String, after token: String?) -> Fetch {
            Task {
                do throws(ShopSyncError) { return .success(try await client.changes(zone: zone, token: token)) } catch { return .failure(error) }
            }
        }
        for zone in zones {
            // The next page is asked for while this one is staged: the server reads and the store writes at once.
            var next = fetch(zone, after: nil)
            var first = true
            while true {
                let page: Components.Schemas.ZoneChanges
                do throws(ShopSyncError) {
                    page = try await next.value.get()
                } catch  where error.kind == .refused(.changeTokenExpired) {
                    // Deletions purged while the zone was read: read it again from the start.
                    next = fetch(zone, after: nil)
                    first = true
                    continue
                }
                if page.moreComing { next = fetch(zone, after: page.syncToken) }
                report.fetched += page.records.count
                do throws(ShopSyncError) {
                    try await domain {
                        try await backoffice.syncEngine.stageSnapshot(
                            zone: zone,
                            records: page.records,
                            first: first,
                            token: page.syncToken,
                            moreComing: page.moreComing,
                            checksum: page.checksum
                        )
                    }
                } catch {
                    next.cancel()
                    throw error
                }
                first = false
                if !page.moreComing { break }
            }
        }
        // The pictures staged records name (a category's, an employee's), so that they load with their rows.
        let assets = try await fetchAssets(client, for: [])
        if let loaded = try await domain({ try await backoffice.syncEngine.loadSnapshot(zones: zones, assets: assets) }) {
            report.downloaded += loaded.saved
            report.loadedFromSnapshot = loaded.saved
            report.discarded += loaded.discarded
        }
    }

    /// The bytes of the pictures these records (and those waiting in the store) name that the store lacks.
    private func fetchAssets(_ client: SyncClient, for records: [SyncRecord]) async throws(ShopSyncError) -> [String: Data] {
        var bytes: [String: Data] = [:]
        for asset in try await domain({ try await backoffice.syncEngine.assetsToFetch(for: records) }) {
            bytes[asset.sha256] = try await client.downloadAsset(asset)
        }
        return bytes
    }

    /// A domain call; its errors (the store is unavailable, a write failed) stop the sync with their message.
    func domain<T>(_ body: () async throws -> T) async throws(ShopSyncError) -> T {
        do {
            return try await body()
        } catch {
            throw ShopSyncError(.refused(.internalError), "The store could not record the sync: \(error)")
        }
    }
}
