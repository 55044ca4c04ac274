import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// Purchasing's reports on a real store, against figures worked out by hand.
@Suite("Purchasing reports")
struct PurchasingReportTests {
    typealias Buyer = PurchasingTests.Buyer

    /// The report's rows as column name → value.
    static func rows(_ table: ReportTable) -> [[String: ReportValue]] {
        table.rows.map { Dictionary(uniqueKeysWithValues: zip(table.columns, $0)) }
    }

    @Test func stockValuationValuesReceivedUnitsAtTheirAverageAndCountsTheRestApart() async throws {
        // Given an empty shelf of one product, which then receives 10 at 4.00 and 5 at 7.00 (average 5.00)
        let buyer = try await Buyer.make()
        _ = try await buyer.receive(try await buyer.sentOrder(quantity: 10, cost: "4.00"), 10)
        _ = try await buyer.receive(try await buyer.sentOrder(quantity: 5, cost: "7.00"), 5)
        let category = try await buyer.store.store.pool.read { db in
            try String.fetchOne(
                db,
                sql: "SELECT c.name FROM products p JOIN categories c ON c.id = p.categoryID WHERE p.id = ?",
                arguments: [buyer.productID]
            )
        }

        // When stock is valued
        let table = try await buyer.store.backoffice.reports.run("stock-valuation", parameters: [:])
        let row = try #require(Self.rows(table).first { $0["CategoryName"] == .text(category ?? "") })

        // Then the category is worth 15 × 5.00 = 75.00, and its other units (never costed) are counted apart
        #expect(row["Value"] == .money(Money(cents: 7_500)))
        guard case .integer(let units) = row["Units"], case .integer(let uncosted) = row["UnitsWithoutCost"] else {
            Issue.record("units are whole numbers: \(row)")
            return
        }
        #expect(units - uncosted == 15)
    }

    @Test func grossMarginSetsSalesAgainstTheCostAtTheTimeOfSale() async throws {
        // Given 10 received at 4.00, and an order of 3 at the product's price, shipped today
        let buyer = try await Buyer.make()
        _ = try await buyer.receive(try await buyer.sentOrder(quantity: 10, cost: "4.00"), 10)
        let backoffice = buyer.store.backoffice
        let customer = try await backoffice.records.list(Customer.self, limit: 1).items[0].code
        let order = try await backoffice.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: buyer.productID, quantity: 3)])
        )
        _ = try await backoffice.orders.execute(number: order.order.number)
        let sales = try #require(order.lines.first).line.extendedPrice

        // When the gross margin of today is read
        let today = LocalDate.today.description
        let table = try await backoffice.reports.run("gross-margin", parameters: ["from": today, "to": today])
        let rows = Self.rows(table)

        // Then the one product shipped shows its sales, 3 × 4.00 = 12.00 of cost, and the difference
        #expect(rows.count == 1)
        #expect(rows.first?["Sales"] == .money(sales))
        #expect(rows.first?["Cost"] == .money(Money(cents: 1_200)))
        #expect(rows.first?["Margin"] == .money(Money(cents: sales.cents - 1_200)))
    }

    @Test func aSaleOfStockThatHasNoCostSaysSoRatherThanZero() async throws {
        // Given a product with stock but never received at a cost, sold today
        let buyer = try await Buyer.make(stock: 5)
        let backoffice = buyer.store.backoffice
        let customer = try await backoffice.records.list(Customer.self, limit: 1).items[0].code
        let order = try await backoffice.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: buyer.productID, quantity: 2)])
        )
        _ = try await backoffice.orders.execute(number: order.order.number)

        // When the gross margin of today is read
        let today = LocalDate.today.description
        let rows = Self.rows(try await backoffice.reports.run("gross-margin", parameters: ["from": today, "to": today]))

        // Then its cost and margin say "no cost"
        #expect(rows.first?["Cost"] == .text("no cost"))
        #expect(rows.first?["Margin"] == .text("no cost"))
    }

    @Test func openPurchaseOrdersSayWhatIsLate() async throws {
        // Given a purchase order expected on the first of January, still awaiting all of its 10 units at 2.00
        let buyer = try await Buyer.make()
        let written = try await buyer.purchasing.create(
            PurchaseOrderDraft(
                supplierID: buyer.supplierID,
                expectedDate: LocalDate("2026-01-01"),
                lines: [PurchaseLineDraft(productID: buyer.productID, quantity: 10, unitCost: Money(cents: 200))]
            )
        )
        _ = try await buyer.purchasing.send(number: written.order.number)

        // When the open purchase orders are listed
        let rows = Self.rows(try await buyer.store.backoffice.reports.run("open-purchase-orders", parameters: [:]))
        let row = try #require(rows.first { $0["PurchaseOrder"] == .text(written.order.number) })

        // Then it is late by the days since then, and awaits 10 worth 20.00
        let late = Calendar(identifier: .gregorian).dateComponents([.day], from: try #require(LocalDate("2026-01-01")).date, to: LocalDate.today.date)
            .day
        #expect(row["DaysLate"] == .integer(Int64(try #require(late))))
        #expect(row["Outstanding"] == .integer(10))
        #expect(row["OutstandingValue"] == .money(Money(cents: 2_000)))
    }
}
