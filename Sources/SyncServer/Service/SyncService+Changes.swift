import Crypto
import Foundation
import Logging
import SyncAPI
import SyncProtocol

extension SyncService {
    // MARK: Changes

    func databaseChanges(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        token: String?
    ) async throws(SyncError)
        -> Components.Schemas.DatabaseChangesResponse
    {
        let epoch = try await guarded { try await storage.epoch() }
        var known: [String: Int64] = [:]
        if let token {
            guard let decoded = TokenCoding.decode(DatabaseToken.self, token) else {
                throw SyncError(.badRequest, "syncToken is not a database token this server gave; leave it out to start again")
            }
            guard decoded.epoch == epoch else {
                throw SyncError(.changeTokenExpired, "the database token is from before the server's data was restored; fetch again without it")
            }
            known = decoded.zones
        }
        let zones = try await guarded { try await storage.zones(container: container, scope: scope) }
        for zone in zones where (known[zone.zoneID.zoneName] ?? 0) > zone.seq {
            throw SyncError(
                .changeTokenExpired,
                "the database token is ahead of zone \(zone.zoneID.zoneName)'s changes (the server's data was restored); fetch again without it"
            )
        }
        let changed = zones.filter { zone in known[zone.zoneID.zoneName].map { $0 < zone.seq } ?? !zone.deleted }
        let next = DatabaseToken(epoch: epoch, zones: Dictionary(uniqueKeysWithValues: zones.map { ($0.zoneID.zoneName, $0.seq) }))
        return .init(
            zones: changed.map { .init(zoneID: $0.zoneID, deleted: $0.deleted) },
            syncToken: next.encoded,
            moreComing: false
        )
    }

    func zoneChanges(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        queries: [Components.Schemas.ZoneChangesQuery]
    ) async throws(SyncError)
        -> [ZoneChangesPage]
    {
        if queries.isEmpty || queries.count > 50 {
            throw SyncError(.badRequest, "ask for 1 to 50 zones per changes/zone request")
        }
        let epoch = try await guarded { try await storage.epoch() }
        var answers: [ZoneChangesPage] = []
        for query in queries {
            let zoneName = query.zoneID.zoneName
            let limit = query.resultsLimit ?? SyncLimits.recordsPerChangesPage
            guard (1...SyncLimits.recordsPerChangesPage).contains(limit) else {
                throw SyncError(.limitExceeded, "resultsLimit is \(limit). " + SyncLimits.summary)
            }
            let after = try query.syncToken.map { token throws(SyncError) in try ZoneToken.decode(token, zone: zoneName, epoch: epoch).seq }
            let page = try await guarded {
                try await storage.changes(
                    container: container,
                    scope: scope,
                    zoneName: zoneName,
                    after: after,
                    limit: limit,
                    recordTypes: query.desiredRecordTypes
                )
            }
            guard let zone = page.zone, !zone.deleted else {
                throw SyncError(.zoneNotFound, "zone \(zoneName) does not exist in this database; it may have been deleted")
            }
            if let after, after > max(zone.seq, page.through) {
                // The server's data is older than the client's token (restored from a backup without a new
                // epoch): answering from the token would skip every change made after the restore.
                throw SyncError(
                    .changeTokenExpired,
                    "the token of zone \(zoneName) is ahead of the server's changes (its data was restored); fetch the zone again without a token"
                )
            }
            if let after, after < zone.purgedThrough {
                throw SyncError(
                    .changeTokenExpired,
                    "the token of zone \(zoneName) is older than the deletions the server still keeps; fetch the zone again without a token"
                )
            }
            answers.append(
                ZoneChangesPage(
                    envelope: .init(
                        zoneID: zone.zoneID,
                        syncToken: ZoneToken(epoch: epoch, zone: zoneName, seq: page.through).encoded,
                        moreComing: page.moreComing,
                        records: [],
                        checksum: page.moreComing ? nil : ZoneChecksum.hex(zone.checksum)
                    ),
                    records: page.records
                )
            )
        }
        return answers
    }
}
