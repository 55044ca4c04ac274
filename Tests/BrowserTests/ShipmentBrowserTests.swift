import Foundation
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// The packer's walk on the real `northwind serve`, in Chromium: ship what is on the shelf, watch the backorder
/// queue turn fillable when stock arrives elsewhere, and ship the rest.
extension BrowserTests {
    @Test func aPackerShipsWhatIsAvailableAndTheRestWhenStockArrives() async throws {
        try await withLiveBrowser { server, driver in
            // Given an order for 4 more units of a product than its shelf holds
            let backoffice = try server.backoffice()
            let product = try #require(
                try await backoffice.catalogue.list(ProductQuery()).items.first { !$0.product.discontinued && $0.product.unitsInStock > 0 }?.product
            )
            let productID = product.id ?? 0
            let customer = try #require(try await backoffice.records.list(Customer.self, limit: 1).items.first?.code)
            let number = try await backoffice.orders.create(
                OrderDraft(customerCode: customer, employeeID: nil, lines: [.init(productID: productID, quantity: product.unitsInStock + 4)])
            ).order.number
            let packer = try await driver.newBrowser()
            try await packer.signIn(server, as: server.rep, next: "/orders/\(number)")

            // When the packer ships what is available
            try await packer.find("#ship-available").click()

            // Then the packing slip lists the shelf's units and the order is partly shipped
            try await packer.waitForText("h1", "Packing slip") { $0.hasPrefix("Packing slip") }
            #expect(try await packer.text("tbody td.num") == "\(product.unitsInStock)")

            // When the packer watches the backorder queue and 4 units are received elsewhere
            try await packer.go(server.url("/backorders"))
            try await packer.execute("window.northwindMarker = 'still here'")
            _ = try await backoffice.stock.receive(productID: productID, quantity: 4)

            // Then the queue says so without a reload
            try await packer.waitForText("#fillable-orders", "1 order can now ship in full") { $0 == "1 order can now ship in full" }
            #expect(try await packer.execute("return window.northwindMarker") as? String == "still here")

            // When the packer opens the order and executes the rest
            try await packer.find("a[href='/orders/\(number)']").click()
            try await packer.find("#execute").click()

            // Then the order is shipped, in two shipments
            try await packer.waitForText("#order-status", "Shipped") { $0 == "Shipped" }
            #expect(try await packer.findNow("#shipments li").count == 2)
            let errors = try await packer.consoleErrors()
            #expect(errors.isEmpty, "\(errors)")
        }
    }
}
