import Foundation
import GRDB
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Fulfilment reports")
struct FulfilmentReportTests {
    static func rows(_ table: ReportTable) -> [[String: ReportValue]] {
        table.rows.map { Dictionary(uniqueKeysWithValues: zip(table.columns, $0)) }
    }

    /// An order for 8 Grandma's Mustard (25.00, 5 on the shelf) and 12 Chai (18.00 less 15 %), taken on `date`.
    func shortOrder(_ w: World, _ b: Backoffice, date: String) async throws -> String {
        try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                orderDate: LocalDate(date),
                lines: [.init(productID: w.mustard.key, quantity: 8), .init(productID: w.chai.key, quantity: 12, discount: 0.15)]
            )
        ).order.number
    }

    @Test func taxByRateAndMonthDeductsCreditNotesAndKeepsEachDocumentsRounding() async throws {
        // Given condiments at 8 %: a shipment invoiced in October (mustard 125.00 + 10.00, chai 183.60 + 42.23) and
        // 2 chai returned in November (30.60 + 7.04)
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        try await b.invoicing.setTaxRate(categoryName: "Condiments", percent: "8")
        let number = try await shortOrder(w, b, date: "2026-10-20")
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-10-21"))
        _ = try await b.invoicing.takeReturn(
            orderNumber: number,
            shipmentSequence: 1,
            lines: [ShipLine(productID: w.chai.key, quantity: 2)],
            returnedDate: LocalDate("2026-11-02")
        )
        // When the tax report is read
        let rows = Self.rows(try await b.reports.run("tax-by-rate-and-month", parameters: [:]))
        // Then each month and rate has its net and tax, November's negative
        #expect(rows.map { $0["Month"] } == [.text("2026-10"), .text("2026-10"), .text("2026-11")])
        #expect(rows.map { $0["Rate"] } == [.text("Standard 23 %"), .text("Reduced 8 %"), .text("Standard 23 %")])
        #expect(rows.map { $0["Net"] } == [.money(Money(cents: 18360)), .money(Money(cents: 12500)), .money(Money(cents: -3060))])
        #expect(rows.map { $0["Tax"] } == [.money(Money(cents: 4223)), .money(Money(cents: 1000)), .money(Money(cents: -704))])
        // And sales by invoice date says the same per day
        let sales = Self.rows(try await b.reports.run("sales-by-invoice-date", parameters: [:]))
        #expect(sales.map { $0["Gross"] } == [.money(Money(cents: 36083)), .money(Money(cents: -3764))])
    }

    @Test func theFillRateCountsWhatACancellationTookOffAsNotShipped() async throws {
        // Given an order of 20 units taken on 2026-01-05: 17 shipped the next day, the other 3 cancelled
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b, date: "2026-01-05")
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-01-06"))
        _ = try await b.orders.cancel(number: number)
        // When the fill rate within 7 days is read
        let rows = Self.rows(try await b.reports.run("fill-rate", parameters: ["days": "7"]))
        // Then 17 of the 20 ordered units shipped in time: 85 %
        #expect(rows.count == 1)
        #expect(rows.first?["Month"] == .text("2026-01"))
        #expect(rows.first?["OrderedUnits"] == .integer(20))
        #expect(rows.first?["ShippedInTime"] == .integer(17))
        #expect(rows.first?["FillRatePercent"] == .real(85.0))
    }

    @Test func backorderAgeingCountsTheOpenUnitsByHowLongTheirOrderHasWaited() async throws {
        // Given an order taken 40 days ago, shipped in part: 3 mustards wait
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let taken = Calendar(identifier: .gregorian).date(byAdding: .day, value: -40, to: Date()) ?? Date()
        let number = try await shortOrder(w, b, date: LocalDate(taken).description)
        _ = try await b.orders.shipAvailable(number: number)
        // When the ageing is read
        let rows = Self.rows(try await b.reports.run("backorder-ageing", parameters: [:]))
        // Then one line of 3 units, worth 75.00, is in the 31-60 days bucket
        #expect(rows.count == 1)
        #expect(rows.first?["Age"] == .text("31-60 days"))
        #expect(rows.first?["Units"] == .integer(3))
        #expect(rows.first?["Value"] == .money(Money(cents: 7500)))
    }

    @Test func grossMarginCountsALineShippedInPartsOnce() async throws {
        // Given an order for 8 mustards shipped in two parts, and complete
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await b.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.mustard.key, quantity: 8)])
        ).order.number
        _ = try await b.orders.shipAvailable(number: number)
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 3)
        _ = try await b.orders.shipAvailable(number: number)
        // When the gross margin is read
        let rows = Self.rows(try await b.reports.run("gross-margin", parameters: [:]))
        // Then the line counts once: 8 units, 200.00 of sales
        let mustard = try #require(rows.first { $0["ProductName"] == .text("Grandma's Mustard") })
        #expect(mustard["Units"] == .integer(8))
        #expect(mustard["Sales"] == .money(Money(cents: 20000)))
    }
}
