import Foundation
import GRDB
import GRDBSQLite
import NorthwindLoading
import Testing

@testable import Northwind
@testable import NorthwindStore
@testable import NorthwindTestSupport

@Suite("Hardening: domain limits")
struct LimitTests {
    @Test(arguments: [
        (Product(name: "A", unitPrice: Money(cents: 1_000_000_000)), "unitPrice"),
        (Product(name: "A", unitPrice: Money(cents: -1)), "unitPrice"),
        (Product(name: "A", unitsInStock: 1_000_000_001), "unitsInStock"),
        (Product(name: "A", reorderLevel: -1), "reorderLevel"),
    ])
    func aProductOutOfRangeIsRefusedNamingTheField(product: Product, field: String) async throws {
        // Given an empty store
        let store = try TemporaryStore()
        // When a product out of range is added
        let error = await northwindError { _ = try await store.backoffice.catalogue.create(product) }
        // Then it is refused, naming the field, and nothing is saved
        guard case let .invalid(fields) = error else {
            Issue.record("not refused: \(String(describing: error))")
            return
        }
        #expect(fields.map(\.field) == [field])
        #expect(try store.count("SELECT count(*) FROM products") == 0)
    }

    @Test func receivingCannotPushStockPastTheLimit() async throws {
        // Given a product with 50 in stock
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        // When more arrives than the limit leaves room for
        let error = await northwindError { _ = try await store.backoffice.stock.receive(productID: w.chai.key, quantity: 999_999_990) }
        // Then it is refused and the stock stays
        #expect(error == .invalid([.init("quantity", "would bring the stock of 'Chai' above 1,000,000,000 units")]))
        #expect(try store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 50)
    }

    @Test func freightOutOfRangeIsRefused() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        var draft = OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 1)])
        draft.freight = Money(cents: 9_223_372_036_854_775_800)
        let error = await northwindError { _ = try await store.backoffice.orders.create(draft) }
        #expect(error == .invalid([.init("freight", "must be from 0.00 to 9,999,999.99")]))
        #expect(try store.count("SELECT count(*) FROM orders") == 0)
    }

    @Test func aProductWhosePriceIsOutOfRangeCannotBeOrdered() async throws {
        // Given a product whose price was written out of range by hand
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        try await store.writePastTheGate { db in
            try db.execute(sql: "UPDATE products SET unitPriceCents = 9000000000000000000 WHERE id = ?", arguments: [w.chai.key])
        }
        // When it is ordered
        let error = await northwindError {
            _ = try await store.backoffice.orders.create(
                .init(
                    customerCode: "VINET",
                    employeeID: w.nancy.id,
                    lines: [.init(productID: w.chai.key, quantity: 1)]
                )
            )
        }
        // Then the order is refused with what to do, and nothing is saved
        #expect(error == .invalid([.init("lines[0].productID", "'Chai' has a price out of range (90000000000000000.00); correct the product first")]))
        #expect(try store.count("SELECT count(*) FROM orders") == 0)
    }

    @Test(arguments: [(0, 0), (1001, 0), (50, -1), (50, 100_000_001), (50, Int.max)])
    func pagingIsBounded(limit: Int, offset: Int) async throws {
        let store = try TemporaryStore()
        var query = ProductQuery()
        (query.limit, query.offset) = (limit, offset)
        let error = await northwindError { _ = try await store.backoffice.catalogue.list(query) }
        guard case .invalid = error else {
            Issue.record("accepted limit \(limit), offset \(offset)")
            return
        }
    }
}

@Suite("Hardening: CSV")
struct CSVTests {
    func csv(_ values: [ReportValue]) -> String {
        var bytes: [UInt8] = []
        ReportTable.appendCSV(values, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(arguments: [
        ("=HYPERLINK(\"http://x.example\",\"click\")", "\"'=HYPERLINK(\"\"http://x.example\"\",\"\"click\"\")\""),
        ("@SUM(1+1)", "\"'@SUM(1+1)\""), ("+1+1", "\"'+1+1\""), ("-2+3", "\"'-2+3\""), ("\tcmd", "\"'\tcmd\""),
        ("\rcmd", "\"'\rcmd\""),
    ])
    func aFormulaIsNeutralised(text: String, written: String) {
        #expect(csv([.text(text)]) == written + "\r\n")
    }

    @Test func numbersStayNumbers() {
        #expect(csv([.text("-12.5"), .money(Money(cents: -300)), .integer(-4), .real(-0.5), .text("+7")]) == "-12.5,-3.00,-4,-0.5,+7\r\n")
    }

    @Test func plainTextIsUnchanged() {
        #expect(csv([.text("Chai"), .text("a,b"), .text("say \"hi\"")]) == "Chai,\"a,b\",\"say \"\"hi\"\"\"\r\n")
    }
}

@Suite("One rule for low stock")
struct LowStockRuleTests {
    @Test func theListTheSummaryAndEachProductAgree() async throws {
        // Given a low product, a discontinued product below its reorder level, and products with plenty
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        var old = try b.catalogue.product(id: w.oldTea.key).product
        old.reorderLevel = 100
        _ = try await b.catalogue.update(old)
        // When low stock is asked of the list, the summary and each product
        var query = ProductQuery()
        query.lowStock = true
        let listed = Set(try await b.catalogue.list(query).items.map(\.product.name))
        let each = Set(try await b.catalogue.list().items.filter(\.product.isLowStock).map(\.product.name))
        // Then all three give the same products: the low one, never the discontinued one
        #expect(listed == ["Grandma's Mustard"])
        #expect(each == listed)
        #expect(try await b.reports.summary().lowStockProducts == listed.count)
    }
}
