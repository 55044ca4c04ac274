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

/// Stock transfers in the JSON API and on the product page, at head office "HQ", which knows London ("LON").
@Suite("Stock transfers on the web")
struct StockTransferWebTests {
    /// A transfer of `units` of Chai from London to here, as sync brings it: the transfer and its movement out.
    static func incomingFromLondon(_ fixture: WebFixture, units: Int) async throws -> Int64 {
        let chai = RecordReference(recordName: fixture.world.chai.recordID, zoneName: "catalog")
        let transferID = newRecordID()
        let transfer = SyncRecord(
            recordName: transferID,
            recordType: "stock_transfers",
            zoneID: ZoneID("site-LON"),
            fields: [
                "productID": .reference(chai), "quantity": .int64(Int64(units)), "fromLocation": .string("LON"),
                "toLocation": .string("HQ"), "sentAt": .string("2026-11-24T11:00:00.000Z"),
            ]
        )
        let out = SyncRecord(
            recordName: newRecordID(),
            recordType: "stock_movements",
            zoneID: ZoneID("site-LON"),
            fields: [
                "productID": .reference(chai), "delta": .int64(Int64(-units)), "reason": .string("transferOut"),
                "createdAt": .string("2026-11-24T11:00:00.000Z"), "location": .string("LON"),
                "transferID": .reference(RecordReference(recordName: transferID)),
            ]
        )
        _ = try await fixture.store.backoffice.syncEngine.applyDownloaded(zone: "site-LON", records: [transfer, out], token: "l2")
        return try #require(
            try await fixture.store.store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT id FROM stock_transfers WHERE recordID = ?", arguments: [transferID])
            }
        )
    }

    static func post(_ client: some TestClientProtocol, _ uri: String, _ body: String, token: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .post, headers: bearer(token), body: ByteBuffer(string: body))
    }

    @Test func aClientSendsATransferAndFindsItInTransit() async throws {
        // Given head office, which knows London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        let before = try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock
        try await fixture.test { client in
            // When a client sends 2 units of Chai to London
            let sent = try await Self.post(client, "/api/v1/transfers", #"{"productID":\#(chai),"quantity":2,"to":"lon"}"#, token: fixture.repToken)
            // Then the transfer is created in transit from here to London, and listed as such
            #expect(sent.status == .created, "\(String(buffer: sent.body))")
            let body = try json(sent)
            #expect(body["from"] as? String == "HQ")
            #expect(body["to"] as? String == "LON")
            #expect(body["inTransit"] as? Bool == true)
            let list = try await client.execute(
                uri: "/api/v1/transfers?inTransit=true&productID=\(chai)",
                method: .get,
                headers: bearer(fixture.repToken)
            )
            let items = try #require(try json(list)["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? Int } == [body["id"] as? Int])
        }
        // And the units have left this shelf
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock == before - 2)
    }

    @Test func aTransferToAnUnknownLocationIsRefusedAndNothingMoves() async throws {
        // Given head office, which knows only London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        let before = try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock
        try await fixture.test { client in
            // When a client sends Chai to Paris
            let refused = try await Self.post(
                client,
                "/api/v1/transfers",
                #"{"productID":\#(chai),"quantity":2,"to":"PAR"}"#,
                token: fixture.repToken
            )
            // Then it is told which locations exist
            #expect(refused.status == .unprocessableContent)
            #expect(String(buffer: refused.body).contains("known: LON"))
        }
        // And nothing left the shelf, and no transfer exists
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock == before)
        #expect(try await fixture.store.backoffice.stock.transfers().isEmpty)
    }

    @Test func aTransferSentHereIsReceivedShortThroughTheAPI() async throws {
        // Given 5 units of Chai on their way from London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        let transfer = try await Self.incomingFromLondon(fixture, units: 5)
        let before = try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock
        try await fixture.test { client in
            // When a client books in the 3 that arrived
            let received = try await Self.post(client, "/api/v1/transfers/\(transfer)/receive", #"{"units":3}"#, token: fixture.repToken)
            // Then the transfer says 3 received, short by 2
            #expect(received.status == .ok, "\(String(buffer: received.body))")
            let body = try json(received)
            #expect(body["received"] as? Int == 3)
            #expect(body["shortBy"] as? Int == 2)
            #expect(body["inTransit"] as? Bool == false)
        }
        // And the 3 units are on this shelf
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock == before + 3)
    }

    @Test func receivingMoreUnitsThanWereSentIsRefusedAndNothingMoves() async throws {
        // Given 5 units of Chai on their way from London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        let transfer = try await Self.incomingFromLondon(fixture, units: 5)
        let before = try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock
        try await fixture.test { client in
            // When a client books in 6
            let refused = try await Self.post(client, "/api/v1/transfers/\(transfer)/receive", #"{"units":6}"#, token: fixture.repToken)
            // Then it is refused, naming the units field
            #expect(refused.status == .unprocessableContent)
            #expect(String(buffer: refused.body).contains("units"))
        }
        // And the transfer is still in transit and the shelf unchanged
        #expect(try await fixture.store.backoffice.stock.transfer(id: transfer).isInTransit)
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock == before)
    }

    @Test func theProductPageSendsATransfer() async throws {
        // Given head office, which knows London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When an employee sends 2 units of Chai to London from its page
            let form = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            #expect(form.contains(#"<option value="LON">LON</option>"#))
            let response = try await session.post(
                client,
                "/products/\(chai)/transfers",
                [("to", "LON"), ("quantity", "2"), ("note", "for the window")]
            )
            // Then the page says so and lists the transfer in transit
            let page = String(buffer: response.body)
            #expect(response.status == .ok)
            #expect(page.contains("Sent 2 units to LON"))
            #expect(page.contains(#"<td data-label="From">HQ</td><td data-label="To">LON</td>"#))
        }
    }

    @Test func theProductPageSaysWhyATransferWasRefused() async throws {
        // Given head office, which knows London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When an employee sends "two" units
            let response = try await session.post(client, "/products/\(chai)/transfers", [("to", "LON"), ("quantity", "two")])
            // Then the page says what is wrong, and nothing is in transit
            #expect(response.status == .unprocessableContent)
            #expect(String(buffer: response.body).contains(#"id="transfer-error""#))
            #expect(try await fixture.store.backoffice.stock.transfers().isEmpty)
        }
    }

    @Test func theProductPageReceivesATransferSentHere() async throws {
        // Given 5 units of Chai on their way from London
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        let transfer = try await Self.incomingFromLondon(fixture, units: 5)
        let before = try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When an employee opens Chai's page and books in all 5
            let form = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            #expect(form.contains(#"id="receive-\#(transfer)""#))
            let response = try await session.post(client, "/transfers/\(transfer)/receive", [("units", "5")])
            // Then the page says so, and the transfer is no longer in transit
            let page = String(buffer: response.body)
            #expect(response.status == .ok)
            #expect(page.contains("Received 5 units from LON"))
            #expect(!page.contains(#"id="in-transit""#))
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitsInStock == before + 5)
    }
}
