import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

@Suite("Other locations' stock, read-only")
struct StockByLocationTests {
    /// The fixture's store joined as head office "HQ", with 4 units of Chai received at location "LON" (by sync).
    static func joinedWithLondon() async throws -> (WebFixture, chai: Int64) {
        let fixture = try await WebFixture.make()
        let b = fixture.store.backoffice
        try await b.syncEngine.join(
            SyncMembership(server: "http://127.0.0.1:9", container: "acme", siteCode: "HQ", role: "hq", credential: "nws_x"),
            containerHasData: false
        )
        let chai = fixture.world.chai
        let received = SyncRecord(
            recordName: newRecordID(),
            recordType: "stock_movements",
            zoneID: ZoneID("site-LON"),
            fields: [
                "productID": .reference(RecordReference(recordName: chai.recordID, zoneName: "catalog")),
                "delta": .int64(4),
                "reason": .string("received"),
                "createdAt": .string("2026-11-24T10:00:00.000Z"),
                "location": .string("LON"),
            ]
        )
        _ = try await b.syncEngine.applyDownloaded(zone: "site-LON", records: [received], token: "l1")
        return (fixture, chai.key)
    }

    @Test func theAPIListsThisLocationFirstThenTheOthers() async throws {
        // Given head office, and Chai received in London
        let (fixture, chai) = try await Self.joinedWithLondon()
        let here = try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock
        try await fixture.test { client in
            // When a client asks for Chai's stock
            let response = try await client.execute(uri: "/api/v1/products/\(chai)/stock", method: .get, headers: bearer(fixture.repToken))
            // Then it lists head office's shelf, then London's
            #expect(response.status == .ok)
            let items = try #require(try json(response)["items"] as? [[String: Any]])
            #expect(items.map { $0["location"] as? String } == ["HQ", "LON"])
            #expect(items.map { $0["units"] as? Int } == [here, 4])
            #expect(items.map { $0["here"] as? Bool } == [true, false])
        }
    }

    @Test func theProductPageShowsStockByLocationOnceOthersShareTheCatalogue() async throws {
        // Given head office, and Chai received in London
        let (fixture, chai) = try await Self.joinedWithLondon()
        try await fixture.test { client in
            // When a signed-in employee opens Chai's page
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let page = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            // Then it shows every location's stock, London's read-only
            #expect(page.contains("id=\"stock-by-location\""))
            #expect(page.contains(#"<td data-label="Location">LON</td><td data-label="In stock" class="num">4</td>"#))
            #expect(page.contains(#"<td data-label="Location">HQ (here)</td>"#))
        }
    }

    @Test func theProductPageShowsATransferInTransit() async throws {
        // Given head office, which knows London, and 2 units of Chai sent there
        let (fixture, chai) = try await Self.joinedWithLondon()
        let sent = try await fixture.store.backoffice.stock.send(productID: chai, quantity: 2, to: "LON")
        try await fixture.test { client in
            // When a signed-in employee opens Chai's page
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let page = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            // Then the transfer is listed in transit, from here to London
            #expect(page.contains("id=\"in-transit\""))
            #expect(
                page.contains(
                    #"<td data-label="Transfer">#\#(sent.transfer.id ?? 0)</td><td data-label="Units" class="num">2</td><td data-label="From">HQ</td><td data-label="To">LON</td>"#
                )
            )
        }
    }

    @Test func aStoreOnItsOwnShowsNoLocations() async throws {
        // Given a store that never joined a company
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai.key
        try await fixture.test { client in
            // When Chai's page opens
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let page = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            // Then there is no table of locations, only this shelf's stock
            #expect(page.contains("id=\"current-stock\""))
            #expect(!page.contains("stock-by-location"))
        }
    }

    @Test func anUnknownProductHasNoStock() async throws {
        // Given the demo store
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client asks for the stock of a product that does not exist
            let response = try await client.execute(uri: "/api/v1/products/999999/stock", method: .get, headers: bearer(fixture.repToken))
            // Then it is told so
            #expect(response.status == .notFound)
        }
    }
}
