import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@testable import NorthwindTestSupport

@Suite("Stock transfers end to end", .serialized)
struct TransferEndToEndTests {
    @Test func aTransferSentWithTheCLIArrivesShortAndBothEndsSayHowMuch() async throws {
        // Given head office and a shop in sync, head office knowing the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        try await company.sync("hq")
        let shopCode = try await company.open("oxf").sync.siteCode()
        let product = try #require(try await company.open("hq").catalogue.list().items.first { $0.product.unitsInStock >= 3 }).product
        // When head office sends 3 units with `northwind transfers send`, and both sync
        let sent = try await company.northwind(["transfers", "send", String(product.id ?? 0), "3", "--to", shopCode.lowercased()], store: "hq")
        #expect(sent.contains("in transit to \(shopCode)"))
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the shop lists it in transit
        let inTransit = try await company.northwind(["transfers", "list", "--in-transit"], store: "oxf")
        #expect(inTransit.contains("in transit"))
        #expect(inTransit.contains(product.name))
        let id = try #require(try await company.open("oxf").stock.transfers(inTransitOnly: true).first?.transfer.id)
        // And when the shop receives the 2 that arrived, and both sync
        let received = try await company.northwind(["transfers", "receive", String(id), "2"], store: "oxf")
        #expect(received.contains("short by 1"))
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office lists the transfer as received short
        let atHQ = try await company.northwind(["transfers", "list"], store: "hq")
        #expect(atHQ.contains("received 2, short by 1"))
    }
}
