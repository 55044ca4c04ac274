import Foundation
import OpenAPIRuntime
import SyncAPI
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// After a restore, the zone listing says which sites have sent again what the restore lost, so that the others
/// keep their newer copies of those sites' records until then.
@Suite("Sync server: owners catching up after a restore")
struct OwnerCatchUpTests {
    private func listed(_ client: Client, caughtUpEpoch: String? = nil) async throws -> Components.Schemas.ZonesResponse {
        try await client.listZones(path: .init(container: "acme", database: .shared), body: .json(.init(caughtUpEpoch: caughtUpEpoch)))
            .ok.body.json
    }

    private func ownerCaughtUp(_ answer: Components.Schemas.ZonesResponse, _ zone: String) -> Bool? {
        answer.zones.first { $0.zoneID.zoneName == zone }?.ownerCaughtUp
    }

    @Test(arguments: SyncEngine.all) func aServerNeverRestoredSaysNothingOfOwners(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's zone on a server never restored
            let (hq, _) = try await server.company()
            // When head office lists the zones
            let answer = try await listed(hq)
            // Then no zone is said to wait for its owner
            #expect(answer.zones.contains { $0.zoneID.zoneName == "site-OXF" })
            #expect(answer.zones.allSatisfy { $0.ownerCaughtUp == nil })
        }
    }

    @Test(arguments: SyncEngine.all) func aSitesZoneWaitsForItsOwnerAfterARestoreUntilTheOwnerSaysItCaughtUp(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's zone, and the data then restored (a new epoch)
            let (hq, shop) = try await server.company()
            try await server.service.startNewEpoch()
            let before = try await listed(hq)
            // When the shop says it caught up in the current epoch
            let epoch = try #require(before.epoch)
            _ = try await listed(shop, caughtUpEpoch: epoch)
            // Then head office was told the zone waited for its owner, and is now told it no longer does
            #expect(ownerCaughtUp(before, "site-OXF") == false)
            #expect(ownerCaughtUp(try await listed(hq), "site-OXF") == true)
        }
    }

    @Test(arguments: SyncEngine.all) func catchingUpInAnEarlierEpochCountsForNothing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop that caught up after one restore
            let (hq, shop) = try await server.company()
            try await server.service.startNewEpoch()
            let first = try #require(try await listed(shop).epoch)
            _ = try await listed(shop, caughtUpEpoch: first)
            // When the data is restored again, and the shop names the earlier epoch
            try await server.service.startNewEpoch()
            _ = try await listed(shop, caughtUpEpoch: first)
            // Then its zone still waits for it
            #expect(ownerCaughtUp(try await listed(hq), "site-OXF") == false)
        }
    }
}
