import Foundation
import SyncAPI
import SyncProtocol
import Testing

@testable import NorthwindTestSupport

/// `records/modify` answers each changed zone's tokens around the batch, so that a writer need not fetch its own
/// records back; the tokens must never let it skip another installation's change.
@Suite("A batch's zone tokens")
struct ModifyTokenTests {
    @Test(arguments: SyncEngine.all) func aZonesFirstBatchSaysSo(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given an empty zone
            let (hq, _) = try await server.company()
            // When head office writes its first batch
            let answer = try #require(try await hq.modify([(.create, record("p1")), (.create, record("p2"))]).value)
            // Then the answer names the zone once, as its first change, and nothing follows the new token
            let zone = try #require(answer.zones?.first)
            #expect(answer.zones?.count == 1)
            #expect(zone.zoneName == "catalog")
            #expect(zone.firstChange)
            let after = try await hq.changes("catalog", after: zone.syncToken)
            #expect(after.pages.flatMap(\.records).isEmpty)
        }
    }

    @Test(arguments: SyncEngine.all) func theTokensEncloseTheBatchExactly(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office holding the zone's token after p1
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            let held = try #require(try await hq.changes("catalog").pages.last?.syncToken)
            // When it writes p2 and p3 in one batch
            let answer = try #require(try await hq.modify([(.create, record("p2")), (.create, record("p3"))]).value)
            let zone = try #require(answer.zones?.first)
            // Then the batch starts at the token it held, and the changes between the two tokens are the batch's records
            #expect(zone.previousToken == held)
            #expect(!zone.firstChange)
            let between = try await hq.changes("catalog", after: held).pages.flatMap(\.records)
            #expect(Set(between.map(\.recordName)) == ["p2", "p3"])
            #expect(try await hq.changes("catalog", after: zone.syncToken).pages.flatMap(\.records).isEmpty)
        }
    }

    @Test(arguments: SyncEngine.all) func anotherInstallationsWriteBetweenIsNeverEnclosed(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office holding the zone's token after p1, and then a shop writing p2 into the same zone
            let (hq, shop) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            let held = try #require(try await hq.changes("catalog").pages.last?.syncToken)
            _ = try await shop.modify([(.create, record("p2"))])
            // When head office writes p3
            let answer = try #require(try await hq.modify([(.create, record("p3"))]).value)
            let zone = try #require(answer.zones?.first)
            // Then its batch does not start at the token it holds, so it fetches the shop's p2 with its own p3
            #expect(zone.previousToken != held)
            let fetched = try await hq.changes("catalog", after: held).pages.flatMap(\.records)
            #expect(Set(fetched.map(\.recordName)) == ["p2", "p3"])
        }
    }

    @Test(arguments: SyncEngine.all) func aReplayedAnswerKeepsItsTokens(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a batch applied, then a shop's write into the same zone
            let (hq, shop) = try await server.company()
            let first = try #require(try await hq.modify([(.create, record("p1"))], batchID: "b1").value)
            _ = try await shop.modify([(.create, record("p2"))])
            // When head office sends the same batch again (its answer was lost)
            let again = try #require(try await hq.modify([(.create, record("p1"))], batchID: "b1").value)
            // Then the replay carries the first answer's tokens, which enclose p1 alone, never the shop's later p2
            #expect(again.replayed)
            #expect(again.zones == first.zones)
            let zone = try #require(again.zones?.first)
            let tail = try await hq.changes("catalog", after: zone.syncToken).pages.flatMap(\.records)
            #expect(tail.map(\.recordName) == ["p2"])
        }
    }
}
