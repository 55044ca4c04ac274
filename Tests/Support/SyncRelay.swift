import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

@_spi(SyncEngine) @testable import Northwind

/// Two stores' sync without a server: every pending change of one is applied to the other, zone by zone, as a
/// sync would carry it, and marked sent. (The real server is in the end-to-end tests; here the records themselves
/// are what is checked. The source keeps no base of what it sent, so a field the destination changes alone still
/// meets the source's pending change as a conflict: tests change the same field on both sides, or none.)
enum SyncRelay {
    static func membership(_ site: String, role: String = "shop") -> SyncMembership {
        SyncMembership(server: "http://127.0.0.1:1", container: "acme", siteCode: site, role: role, credential: "nws_test")
    }

    static func carry(from source: Backoffice, to destination: Backoffice) async throws {
        while let batch = try await source.syncEngine.nextOutboxBatch() {
            let zones = Dictionary(grouping: batch.operations.map(\.record), by: \.zoneID.zoneName)
            for zone in SyncTable.sharedZones + zones.keys.filter({ !SyncTable.sharedZones.contains($0) }).sorted() {
                guard let records = zones[zone] else { continue }
                _ = try await destination.syncEngine.applyDownloaded(zone: zone, records: records, token: "t\(batch.throughSeq)")
            }
            try await source.store.pool.write { db in
                // Sent, as an acknowledgement would record it.
                try ShopSync.setState(db, "uploadedThrough", String(batch.throughSeq))
                try ShopSync.setState(db, "pendingBatch", nil)
                try ShopSync.setState(db, "pendingBatchID", nil)
            }
        }
    }
}
