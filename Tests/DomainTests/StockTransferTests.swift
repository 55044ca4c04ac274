import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// Stock transfers between two installations, head office and a London shop, whose changes travel as the sync
/// engine carries them: each one's outbox, applied to the other as a download. (The real server is in the end-to-end
/// tests; here the records themselves are what is checked.)
@Suite("Stock transfers")
struct StockTransferTests {
    /// Head office with demo data and an empty London shop, both joined, London holding everything head office sent,
    /// and head office knowing London by its stock of the first product.
    struct Pair {
        let office: TemporaryStore
        let london: TemporaryStore
        let productID: Int64

        static func make() async throws -> Pair {
            let office = try TemporaryStore(seed: DemoData.Options(scale: 1))
            try await office.backoffice.syncEngine.join(ShopSyncTests.membership("HQ", role: "hq"), containerHasData: false)
            let london = try TemporaryStore()
            try await london.backoffice.syncEngine.join(ShopSyncTests.membership("LON"), containerHasData: true)
            let pair = Pair(office: office, london: london, productID: try Self.firstProduct(office))
            try await relay(from: office, to: london)
            _ = try await london.backoffice.stock.receive(productID: try Self.firstProduct(london), quantity: 3)
            try await relay(from: london, to: office)
            return pair
        }

        static func firstProduct(_ store: TemporaryStore) throws -> Int64 {
            try store.store.pool.read { db in try #require(try Int64.fetchOne(db, sql: "SELECT id FROM products ORDER BY name, id LIMIT 1")) }
        }

        /// The same product at London (local ids differ between stores; record ids do not).
        func londonProductID() throws -> Int64 { try Self.firstProduct(london) }

        /// Carries every pending change of `source` to `destination` (`SyncRelay`).
        static func relay(from source: TemporaryStore, to destination: TemporaryStore) async throws {
            try await SyncRelay.carry(from: source.backoffice, to: destination.backoffice)
        }
    }

    @Test func sendingTakesTheUnitsOffThisShelfAndShowsThemInTransit() async throws {
        // Given head office and a London shop it knows
        let pair = try await Pair.make()
        let office = pair.office.backoffice
        let before = try office.catalogue.product(id: pair.productID).product.unitsInStock

        // When head office sends 5 units to London
        let sent = try await office.stock.send(productID: pair.productID, quantity: 5, to: "lon")

        // Then its shelf holds 5 fewer, and the transfer is in transit from HQ to LON
        #expect(try office.catalogue.product(id: pair.productID).product.unitsInStock == before - 5)
        #expect(sent.isInTransit)
        #expect((sent.transfer.fromLocation, sent.transfer.toLocation) == ("HQ", "LON"))
        #expect(try await office.stock.transfers(inTransitOnly: true).map(\.transfer.id) == [sent.transfer.id])
        let movement = try #require(try await office.stock.movements(productID: pair.productID, limit: 1).first)
        #expect((movement.reason, movement.delta, movement.transferID) == (.transferOut, -5, sent.transfer.id))
    }

    @Test func theDestinationSeesItInTransitAndAShortDeliveryIsRecordedAtBothEnds() async throws {
        // Given 10 units sent from head office to London, and carried there
        let pair = try await Pair.make()
        _ = try await pair.office.backoffice.stock.send(productID: pair.productID, quantity: 10, to: "LON")
        try await Pair.relay(from: pair.office, to: pair.london)
        let london = pair.london.backoffice
        let waiting = try #require(try await london.stock.transfers(inTransitOnly: true).first)
        #expect(waiting.transfer.fromLocation == "HQ")
        let shelf = try london.catalogue.product(id: try pair.londonProductID()).product.unitsInStock

        // When London books in the 8 that arrived, and that travels back
        let received = try await london.stock.receiveTransfer(id: try #require(waiting.transfer.id), units: 8)
        try await Pair.relay(from: pair.london, to: pair.office)

        // Then London's shelf holds 8 more, and both ends see the transfer received, short by 2
        #expect(try london.catalogue.product(id: try pair.londonProductID()).product.unitsInStock == shelf + 8)
        #expect((received.received, received.shortBy) == (8, 2))
        let atOffice = try #require(try await pair.office.backoffice.stock.transfers().first)
        #expect((atOffice.received, atOffice.shortBy, atOffice.isInTransit) == (8, 2, false))
        #expect(try await pair.office.backoffice.stock.transfers(inTransitOnly: true).isEmpty)
    }

    @Test func sendingMoreThanTheShelfHoldsIsRefusedAndChangesNothing() async throws {
        // Given head office's stock of a product
        let pair = try await Pair.make()
        let office = pair.office.backoffice
        let stock = try office.catalogue.product(id: pair.productID).product.unitsInStock

        // When it tries to send one unit more than it holds
        let error = await northwindError { _ = try await office.stock.send(productID: pair.productID, quantity: stock + 1, to: "LON") }

        // Then it is told how many units are here, and nothing was written
        #expect(error?.description.contains("only \(stock) units") == true)
        #expect(try office.catalogue.product(id: pair.productID).product.unitsInStock == stock)
        #expect(try await office.stock.transfers().isEmpty)
    }

    @Test func aLocationThisStoreHasNeverHeardOfIsRefused() async throws {
        // Given head office, which knows London only
        let pair = try await Pair.make()

        // When it sends to a code no installation has
        let error = await northwindError { _ = try await pair.office.backoffice.stock.send(productID: pair.productID, quantity: 1, to: "LNO") }

        // Then the message names the locations it knows
        #expect(error == .invalid([.init("to", "no location 'LNO' is known here (known: LON)")]))
    }

    @Test func onlyTheDestinationReceivesAndOnlyOnce() async throws {
        // Given a transfer from head office to London, carried there and received once
        let pair = try await Pair.make()
        let sent = try await pair.office.backoffice.stock.send(productID: pair.productID, quantity: 4, to: "LON")
        let id = try #require(sent.transfer.id)
        let officeError = await northwindError { _ = try await pair.office.backoffice.stock.receiveTransfer(id: id, units: 4) }
        try await Pair.relay(from: pair.office, to: pair.london)
        let londonID = try #require(try await pair.london.backoffice.stock.transfers().first?.transfer.id)
        _ = try await pair.london.backoffice.stock.receiveTransfer(id: londonID, units: 4)
        let shelf = try pair.london.backoffice.catalogue.product(id: try pair.londonProductID()).product.unitsInStock

        // When London tries to receive it again
        let again = await northwindError { _ = try await pair.london.backoffice.stock.receiveTransfer(id: londonID, units: 4) }

        // Then the sender could not receive it, the second receipt is refused, and the shelf is as it was
        #expect(officeError?.description.contains("only that location can receive it") == true)
        #expect(again?.description.contains("was already received: 4 of 4 units") == true)
        #expect(try pair.london.backoffice.catalogue.product(id: try pair.londonProductID()).product.unitsInStock == shelf)
    }
}
