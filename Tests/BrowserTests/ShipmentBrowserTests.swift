import Foundation
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// The packer's walk on the real `northwind serve`, in Chromium: ship what is on the shelf, watch the backorder
/// queue turn fillable when stock arrives elsewhere, ship the rest, open its invoice, take a return and read the
/// credit note that corrects the invoice.
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

            // When the packer opens the second shipment's invoice
            try await packer.find("#shipments li:nth-child(2) a[href^='/invoices/invoice/']").click()

            // Then it is the invoice of the 4 units, issued with the shipment
            try await packer.waitForText("#invoice-heading", "the invoice") { $0.hasPrefix("Invoice ") }
            #expect(try await packer.text("#invoice-lines tbody td[data-label='Quantity']") == "4")

            // When 1 unit of the second shipment comes back
            try await packer.find(".crumbs a[href='/orders/\(number)/shipments/2']").click()
            try await packer.find("#returned-\(productID)").type("1")
            try await packer.find("#return-reason").type("Dented tin")
            try await packer.find("#take-return").click()

            // Then the slip lists the return with its credit note, which corrects the invoice by that unit
            try await packer.waitForText("#returns li", "the return") { $0.contains("1 × ") && $0.contains("credit note") }
            try await packer.find("#returns li a[href^='/invoices/credit-note/']").click()
            try await packer.waitForText("#invoice-heading", "the credit note") { $0.hasPrefix("Credit note ") }
            #expect(try await packer.text("#invoice-lines tbody td[data-label='Quantity']") == "1")
            #expect(try await packer.findNow("#corrects a").count == 1)
            let errors = try await packer.consoleErrors()
            #expect(errors.isEmpty, "\(errors)")
        }
    }
}
