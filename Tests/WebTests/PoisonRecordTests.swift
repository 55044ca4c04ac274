import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// Records no input can make any more, written straight into a store as an older version or a hand edit could
/// have left them: stock, units on order and reorder level at Int64's end, a price and a freight at Int64's end,
/// and a line whose amount the old total's arithmetic overflowed.
struct PoisonedStore {
    let fixture: WebFixture
    let orderNumber: String
    static let maxText = "92233720368547758.07"

    static func make() async throws -> PoisonedStore {
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let b = fixture.store.backoffice
        let order = try await b.orders.create(
            .init(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                lines: [.init(productID: w.chai.key, quantity: 1), .init(productID: w.cote.key, quantity: 2)]
            )
        )
        let amount = try #require(ReportFunctions.extendedPriceCents(unitPriceCents: 1_000_000_000_000, quantity: 1_000_000, discount: 0))
        try await fixture.store.writePastTheGate { db in
            try db.execute(sql: "UPDATE orders SET freightCents = 9223372036854775807 WHERE id = ?", arguments: [order.order.id])
            try db.execute(
                sql: """
                    UPDATE order_lines SET unitPriceCents = 1000000000000, quantity = 1000000, extendedPriceCents = ?
                    WHERE orderID = ? AND productID = ?
                    """,
                arguments: [amount, order.order.id, w.chai.key]
            )
            try db.execute(
                sql: """
                    UPDATE products SET unitsInStock = 9223372036854775807, unitsOnOrder = 9223372036854775807,
                      reorderLevel = 9223372036854775807 WHERE id = ?
                    """,
                arguments: [w.cote.key]
            )
            try db.execute(sql: "UPDATE products SET unitPriceCents = 9223372036854775807 WHERE id = ?", arguments: [w.mustard.key])
        }
        return PoisonedStore(fixture: fixture, orderNumber: order.order.number)
    }
}

@Suite("Poison records", .serialized)
struct PoisonRecordTests {
    @Test func everyAPIRouteThatReadsThemAnswers() async throws {
        // Given a store holding poison records
        let poisoned = try await PoisonedStore.make()
        let w = poisoned.fixture.world
        try await poisoned.fixture.test(live: true) { client in
            // When every route that reads them is asked
            for path in [
                "/api/v1/orders/\(poisoned.orderNumber)", "/api/v1/orders?limit=1000", "/api/v1/orders?customer=VINET",
                "/api/v1/products/\(w.cote.key)", "/api/v1/products/\(w.mustard.key)", "/api/v1/products?sort=stock&desc=true",
                "/api/v1/products?sort=price", "/api/v1/products?lowStock=true", "/api/v1/products/search?q=c",
                "/api/v1/summary", "/api/v1/customers/VINET", "/api/v1/reports/order-subtotals",
                "/api/v1/reports/invoices?format=csv", "/api/v1/reports/ten-most-expensive-products",
                "/api/v1/reports/reorder-list", "/api/v1/reports/order-backlog",
            ] {
                let response = try await client.execute(uri: path, method: .get, headers: bearer(poisoned.fixture.managerToken))
                // Then each answers, showing the values as they are
                #expect(response.status == .ok, "\(path): \(response.status) \(String(buffer: response.body).prefix(300))")
            }
            let order = try await client.execute(
                uri: "/api/v1/orders/\(poisoned.orderNumber)",
                method: .get,
                headers: bearer(poisoned.fixture.managerToken)
            )
            #expect(try json(order)["freight"] as? String == PoisonedStore.maxText)
        }
    }

    @Test func everyPageThatReadsThemAnswers() async throws {
        // Given a store holding poison records and a manager signed in
        let poisoned = try await PoisonedStore.make()
        let w = poisoned.fixture.world
        try await poisoned.fixture.test(live: true) { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When every page that shows them is opened
            for path in [
                "/", "/orders/\(poisoned.orderNumber)", "/orders", "/orders?status=new", "/customers/VINET", "/products",
                "/products?sort=stock&desc=1", "/products?lowStock=1", "/products?q=c", "/products/\(w.cote.key)",
                "/products/\(w.mustard.key)", "/categories/\(w.beverages.id ?? 0)", "/reports/order-subtotals",
                "/reports/sales-by-category?from=2000-01-01&to=2100-01-01", "/reports/reorder-list",
            ] {
                let response = try await client.execute(uri: path, method: .get, headers: session.headers)
                // Then each answers
                #expect(response.status == .ok, "\(path): \(response.status)")
            }
            let page = try await client.execute(uri: "/orders/\(poisoned.orderNumber)", method: .get, headers: session.headers)
            // The page writes amounts in thousands (display.numberFormat's default).
            #expect(String(buffer: page.body).contains("92,233,720,368,547,758.07"))
        }
    }

    @Test func everyCommandThatReadsThemAnswers() async throws {
        // Given a store holding poison records
        let poisoned = try await PoisonedStore.make()
        let store = poisoned.fixture.store.path
        let w = poisoned.fixture.world
        // When every command that reads them runs
        for arguments in [
            ["orders", "show", poisoned.orderNumber], ["orders", "list", "--customer", "VINET"],
            ["orders", "list", "--customer", "VINET", "--json"], ["products", "list"],
            ["products", "list", "--low-stock", "--sort", "stock"], ["products", "show", String(w.cote.key)],
            ["products", "show", String(w.mustard.key), "--json"], ["products", "search", "c"],
            ["report", "order-subtotals"], ["report", "invoices", "--format", "csv"],
        ] {
            let result = try await CLI.run(arguments + ["--store", store])
            // Then each exits 0
            #expect(!result.crashed && result.status == 0, "\(arguments): \(result.status) \(result.stderr)")
        }
        let shown = try await CLI.run(["orders", "show", poisoned.orderNumber, "--store", store])
        #expect(shown.stdout.contains("Freight \(PoisonedStore.maxText)"))
    }
}
