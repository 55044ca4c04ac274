import Foundation
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// The buyer's walk on the real `northwind serve`, in Chromium: write and send a purchase order, watch a delivery
/// booked elsewhere arrive on the open page, and book the rest from the keyboard.
extension BrowserTests {
    @Test func aBuyerSendsAPurchaseOrderAndTheShopFloorReceivesItInParts() async throws {
        try await withLiveBrowser { server, driver in
            // Given a manager at the new purchase order form, for the first product of a supplier
            let backoffice = try server.backoffice()
            let product = try #require(
                try await backoffice.catalogue.list(ProductQuery()).items.first { !$0.product.discontinued && $0.product.supplierID != nil }?.product
            )
            let productID = product.id ?? 0
            let stockBefore = product.unitsInStock
            let buyer = try await driver.newBrowser()
            try await buyer.signIn(server, as: server.manager, next: "/purchases/new?supplier=\(product.supplierID ?? 0)")

            // When 30 are ordered at 4.25 and saved and sent in one go
            try await buyer.find("#quantity-\(productID)").type("30")
            try await buyer.find("#cost-\(productID)").type("4.25")
            try await buyer.find("#save-and-send").click()

            // Then the order's page says it is sent, with 30 awaited
            try await buyer.waitForText("#purchase-status", "Sent") { $0 == "Sent" }
            #expect(try await buyer.text("#purchase-outstanding") == "30")
            let path = try #require(try await buyer.execute("return location.pathname") as? String)
            let number = String(path.dropFirst("/purchases/".count))

            // When the shop floor has the page open and 12 are booked elsewhere (the CLI's way in)
            let floor = try await driver.newBrowser()
            try await floor.signIn(server, as: server.rep, next: path)
            try await floor.execute("window.northwindMarker = 'still here'")
            _ = try await backoffice.purchasing.receive(
                number: number,
                lines: [ReceiptLine(productID: productID, quantity: 12)],
                requestKey: "dock-1"
            )

            // Then the open page follows without a reload
            try await floor.waitForText("#purchase-status", "Partly received") { $0 == "Partly received" }
            #expect(try await floor.text("#purchase-outstanding") == "18")
            #expect(try await floor.execute("return window.northwindMarker") as? String == "still here")

            // When the rest is counted in from the keyboard: type 18 and press Enter
            try await floor.find("#arrived-\(productID)").type("18\u{E007}")

            // Then the order is received, nothing is awaited, and the stock rose by 30 in all
            try await floor.waitForText("#purchase-status", "Received") { $0 == "Received" }
            #expect(try await floor.text("#purchase-outstanding") == "0")
            #expect(try await floor.findNow("#receive-form").isEmpty)
            #expect(try backoffice.catalogue.product(id: productID).product.unitsInStock == stockBefore + 30)
            let errors = try await floor.consoleErrors() + buyer.consoleErrors()
            #expect(errors.isEmpty, "\(errors)")
        }
    }
}
