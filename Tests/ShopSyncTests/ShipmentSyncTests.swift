import Foundation
import GRDB
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

@Suite("Shipments across sites", .serialized)
struct ShipmentSyncTests {
    /// A company with head office and the shop "oxf", whose shelf holds 3 of a product, and the shop's order for
    /// `quantity` of it.
    static func shopWithAnOrder(quantity: Int) async throws -> (Company, Backoffice, Product, String) {
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let shop = try company.open("oxf")
        let product = try #require(try await shop.catalogue.list().items.first { !$0.product.discontinued }?.product)
        _ = try await shop.stock.adjust(productID: product.key, countedQuantity: 3)
        let customer = try #require(try await shop.records.list(Customer.self, limit: 1).items.first?.code)
        let order = try await shop.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: product.key, quantity: quantity)])
        ).order.number
        return (company, shop, product, order)
    }

    @Test func aShopsShipmentsInPartsReachHeadOfficeAsTheShopHasThem() async throws {
        // Given a shop with an order for 5 units of a product of which it holds 3
        let (company, shop, product, order) = try await Self.shopWithAnOrder(quantity: 5)
        // When it ships the 3, syncs, receives 2 more, ships them, and syncs again
        _ = try await shop.orders.shipAvailable(number: order)
        try await company.sync("oxf")
        try await company.sync("hq")
        let hq = try company.open("hq")
        let midway = try await hq.orders.fulfilment(number: order)
        let queue = try await hq.orders.backorders()
        _ = try await shop.stock.receive(productID: product.key, quantity: 2)
        _ = try await shop.orders.shipAvailable(number: order)
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office saw the order partly shipped, then shipped in two parts, each line with one movement
        #expect(midway.status == .partlyShipped)
        #expect(midway.lines.map(\.shipped) == [3])
        // And head office's queue says the shop ships the rest, counting nothing on its own shelf as fillable
        let site = try await shop.store.pool.read { db in try StoreMetadata.siteCode(db) }
        #expect(queue.items.map(\.site) == [site])
        #expect(queue.items.map(\.line.fillable) == [0])
        #expect(try await hq.orders.backorderedOrdersFillableNow() == 0)
        let there = try await hq.orders.fulfilment(number: order)
        #expect(there.status == .shipped)
        #expect(there.shipments.map { $0.lines.map(\.quantity) } == [[3], [2]])
        let movements = try await hq.store.pool.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM stock_movements m JOIN shipment_lines l ON l.id = m.shipmentLineID
                    JOIN shipments s ON s.id = l.shipmentID JOIN orders o ON o.id = s.orderID WHERE o.number = ?
                    """,
                arguments: [order]
            )
        }
        #expect(movements == 2)
        // And head office may not ship the shop's order
        let refused = await northwindError { _ = try await hq.orders.shipAvailable(number: order) }
        #expect(refused != nil)
    }

    @Test func aShopsInvoicesAndCreditNotesReachHeadOfficeAsIssuedAndOnlyTheShopTakesItsReturns() async throws {
        // Given a shop that ships an order and takes 1 unit back
        let (company, shop, product, order) = try await Self.shopWithAnOrder(quantity: 3)
        let shipment = try await shop.orders.shipAvailable(number: order)
        let returned = try await shop.invoicing.takeReturn(
            orderNumber: order,
            shipmentSequence: 1,
            lines: [ShipLine(productID: product.key, quantity: 1)]
        )
        let invoice = try await shop.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        let credit = try await shop.invoicing.invoice(number: try #require(returned.creditNoteNumber))
        // When both sync
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office holds both as the shop issued them, byte for byte, numbered in the shop's series
        let hq = try company.open("hq")
        #expect(try await hq.invoicing.invoice(number: invoice.invoice.number) == invoice)
        #expect(try await hq.invoicing.invoice(number: credit.invoice.number) == credit)
        let site = try await shop.store.pool.read { db in try StoreMetadata.siteCode(db) }
        #expect(invoice.invoice.site == site)
        #expect(try await hq.invoicing.invoices().map(\.number).sorted() == [credit.invoice.number, invoice.invoice.number].sorted())
        // And head office may not take a return of the shop's shipment
        let refused = await northwindError {
            _ = try await hq.invoicing.takeReturn(orderNumber: order, shipmentSequence: 1, lines: [ShipLine(productID: product.key, quantity: 1)])
        }
        #expect(refused != nil)
        #expect(try await hq.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM returns") } == 1)
    }

    @Test func aSecondInvoiceArrivingUnderANumberHeldHereIsRefusedAndListed() async throws {
        // Given head office holding a shop's invoice, by sync
        let (company, shop, _, order) = try await Self.shopWithAnOrder(quantity: 3)
        let shipment = try await shop.orders.shipAvailable(number: order)
        try await company.sync("oxf")
        try await company.sync("hq")
        let hq = try company.open("hq")
        let held = try await hq.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        // When a forged copy of it (another record, the same number, another total) arrives in the shop's zone
        let zone = "site-\(held.invoice.site)"
        var forged = try #require(
            try await hq.store.pool.read { db -> SyncRecord? in
                guard let site = try hq.syncSite(db) else { return nil }
                return try RecordMapping.record(db, table: SyncTable.byName["invoices"]!, recordID: held.invoice.recordID, site: site, zoneName: zone)
            }
        )
        forged.recordName = newRecordID()
        forged.fields["grossCents"] = .int64(1)
        forged.fields["netCents"] = .int64(1)
        forged.fields["taxCents"] = .int64(0)
        let forgery = forged
        let applied = try await hq.syncEngine.applyDownloaded(zone: zone, records: [forgery], token: "forged-1")
        // Then the forgery is refused and listed in the inbox, and the invoice held here is unchanged
        #expect(applied.discarded == 1)
        #expect(try await hq.invoicing.invoice(number: held.invoice.number) == held)
        let listed = try await hq.store.pool.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM sync_conflicts WHERE tableName = 'invoices' AND recordID = ?",
                arguments: [forgery.recordName]
            )
        }
        #expect(listed == 1)
    }
}
