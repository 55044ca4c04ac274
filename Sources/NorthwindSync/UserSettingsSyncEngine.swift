import Foundation
@_spi(SyncEngine) import Northwind
import NorthwindStore
import SyncAPI
import SyncProtocol

/// Users' own settings follow them between installations, through each user's private database on the sync server:
/// pull first (a later clock replaces the value here), then push what changed here (over the server's version when
/// ours is later). `NSUbiquitousKeyValueStore` is the model: one record per key, the last writer winning.
extension ShopSyncEngine {
    /// Whether the protocol can name `login` (no space, nothing beyond ASCII): one it cannot keeps its settings here.
    static func canSync(login: String) -> Bool { login.wholeMatch(of: /[a-z0-9][a-z0-9._@-]{0,63}/) != nil }

    /// Pulls every user's settings (when `pulling`), then pushes what changed here.
    func syncUserSettings(
        _ client: SyncClient,
        membership: SyncMembership,
        pulling: Bool,
        report: inout SyncReport
    ) async throws(ShopSyncError) {
        let logins = try await domain {
            pulling ? try await backoffice.userSettingsSync.syncedLogins() : try await backoffice.userSettingsSync.loginsWithPending()
        }
        for login in logins where Self.canSync(login: login) {
            if pulling { try await pullUserSettings(client, login: login, report: &report) }
            try await pushUserSettings(client, login: login, membership: membership, report: &report)
        }
    }

    private func pullUserSettings(_ client: SyncClient, login: String, report: inout SyncReport) async throws(ShopSyncError) {
        let zone = UserSettingsSyncSide.userSettingsZone
        var token = try await domain { try await backoffice.userSettingsSync.token(login: login) }
        // The first sync of this user here: their zone may not exist yet, and what comes is the initial sync.
        let reason: UserSettingChangeReason = token == nil ? .initialSync : .serverChange
        if token == nil { try await client.createZones([zone], user: login) }
        while true {
            let page: Components.Schemas.ZoneChanges
            do throws(ShopSyncError) {
                page = try await client.changes(zone: zone, token: token, user: login)
            } catch  where error.kind == .refused(.changeTokenExpired) {
                try await domain { try await backoffice.userSettingsSync.resetToken(login: login) }
                token = nil
                continue
            }
            let changed = try await domain {
                try await backoffice.userSettingsSync.apply(login: login, records: page.records, token: page.syncToken, reason: reason)
            }
            report.userSettingsDownloaded += changed.count
            token = page.syncToken
            if !page.moreComing { return }
        }
    }

    private func pushUserSettings(
        _ client: SyncClient,
        login: String,
        membership: SyncMembership,
        report: inout SyncReport
    ) async throws(ShopSyncError) {
        // A value answered by a newer one from elsewhere settles in a round or two; more means something is wrong.
        for _ in 0..<5 {
            let records = try await domain { try await backoffice.userSettingsSync.pending(login: login) }
            guard !records.isEmpty else { return }
            let results: [Components.Schemas.OperationResult]
            do throws(ShopSyncError) {
                results = try await client.modify(
                    clientID: "\(membership.siteCode)-settings",
                    batchID: UUID().uuidString,
                    operations: records.map { ($0.recordChangeTag == nil ? "create" : "update", $0) },
                    user: login
                ).records
            } catch  where error.kind == .refused(.quotaExceeded) {
                try await domain { try await backoffice.userSettingsSync.markOverQuota(login: login) }
                report.usersOverQuota.append(login)
                return
            }
            for (record, result) in zip(records, results) {
                switch Self.outcome(result) {
                case .saved(let saved):
                    try await domain { try await backoffice.userSettingsSync.acknowledge(login: login, saved: saved) }
                    report.userSettingsUploaded += 1
                case .changedOnServer(let server):
                    // Another installation wrote it since: the later clock wins here, and ours goes again if it is later.
                    let changed = try await domain {
                        try await backoffice.userSettingsSync.apply(login: login, records: [server], token: nil, reason: .serverChange)
                    }
                    report.userSettingsDownloaded += changed.count
                case .goneOnServer:
                    try await domain { try await backoffice.userSettingsSync.forgetTag(login: login, key: record.recordName) }
                case .refused(let reason), .missingReference(let reason):
                    throw ShopSyncError(.refused(.internalError), "The sync server did not take \(login)'s setting \(record.recordName): \(reason)")
                case .notApplied:
                    throw ShopSyncError(.refused(.internalError), "The sync server did not apply \(login)'s setting \(record.recordName).")
                }
            }
        }
    }
}
