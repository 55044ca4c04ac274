import Foundation
import GRDB
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// A batch's answer moves a zone's token past the batch only when nothing can lie between: the store held the token
/// just before it, or held none of a zone that had never held a record, and is not fetching the zone again.
@Suite("Zone tokens moved by a batch's answer")
struct ZoneTokenAdvanceTests {
    /// The token `zone` holds after taking `advance` over `held`, with the zone being refetched or not.
    static func taking(_ advance: ZoneTokenAdvance, over held: String?, refetching: Bool = false) throws -> String? {
        let temporary = try TemporaryStore()
        return try temporary.store.pool.write { db in
            try ShopSync.setState(db, "token:catalog", held)
            try ShopSync.setState(db, "refetching:catalog", refetching ? "1" : nil)
            try ZoneTokenAdvance.apply([advance], db)
            return try ShopSync.state(db, "token:catalog")
        }
    }

    static let batch = ZoneTokenAdvance(zone: "catalog", previousToken: "t4", syncToken: "t5", firstChange: false)
    static let first = ZoneTokenAdvance(zone: "catalog", previousToken: "t1", syncToken: "t2", firstChange: true)

    @Test func theTokenJustBeforeTheBatchMovesPastIt() throws {
        // Given the store holds t4, When the batch between t4 and t5 is answered, Then it holds t5
        #expect(try Self.taking(Self.batch, over: "t4") == "t5")
    }

    @Test func anOlderTokenStaysSoTheFetchBringsWhatLiesBetween() throws {
        // Given the store holds t3, When the batch between t4 and t5 is answered, Then it still holds t3
        #expect(try Self.taking(Self.batch, over: "t3") == "t3")
    }

    @Test func noTokenMovesOnlyPastAZonesFirstBatch() throws {
        // Given a store that never fetched the zone, When a batch is answered, Then only a zone's first change moves it
        #expect(try Self.taking(Self.first, over: nil) == "t2")
        #expect(try Self.taking(Self.batch, over: nil) == nil)
    }

    @Test func aZoneBeingFetchedAgainFromScratchKeepsItsToken() throws {
        // Given the zone is being fetched again from scratch, halfway at t4 or not started
        // When the batch between t4 and t5 is answered, or a zone's first one
        // Then the token stays, so that the fetch sees the batch's records before it removes what it did not see
        #expect(try Self.taking(Self.batch, over: "t4", refetching: true) == "t4")
        #expect(try Self.taking(Self.first, over: nil, refetching: true) == nil)
    }
}
