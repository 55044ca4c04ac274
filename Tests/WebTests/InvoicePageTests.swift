import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// Invoices, returns and credit notes through the app's router: what the packer and the accountant see.
extension WebTests {
    @Test func aReturnTakenOnThePackingSlipIssuesACreditNoteAndBadQuantitiesAreRefused() async throws {
        // Given 4 chai shipped whole, with its invoice
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let backoffice = fixture.store.backoffice
        let number = try await backoffice.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 4)])
        ).order.number
        let shipment = try await backoffice.orders.shipAvailable(number: number)
        let invoice = try await backoffice.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When the packer sends a return of 5 (more than shipped), then of "two", then of 1
            let slip = "/orders/\(number)/shipments/1"
            let tooMany = try await rep.post(client, "\(slip)/returns", [("quantity-\(w.chai.key)", "5"), ("requestKey", "k1")])
            let words = try await rep.post(client, "\(slip)/returns", [("quantity-\(w.chai.key)", "two"), ("requestKey", "k2")])
            let taken = try await rep.post(client, "\(slip)/returns", [("quantity-\(w.chai.key)", "1"), ("reason", "Dented"), ("requestKey", "k3")])
            // Then the first two are refused on the slip, naming what is wrong, and the third issues a credit note
            #expect(tooMany.status == .unprocessableContent)
            #expect(String(buffer: tooMany.body).contains("must not exceed the 4 unit(s)"))
            #expect(words.status == .unprocessableContent)
            #expect(taken.status == .seeOther)
            let page = try await Self.page(client, rep, slip)
            #expect(page.contains("Return 1,"))
            let path = InvoicePaths.path(kind: .invoice, site: invoice.invoice.site, year: invoice.invoice.year, counter: invoice.invoice.counter)
            #expect(page.contains(#"href="\#(path)""#))
            // And the invoice's page names its credit note, and its printable copy is the rendition stored at issue
            let invoicePage = try await Self.page(client, rep, path)
            #expect(invoicePage.contains("Corrected by"))
            #expect(invoicePage.contains(#"href="\#(path)/print""#) && invoicePage.contains(#"href="\#(path)/package""#))
            let creditPath = try #require(invoicePage.firstMatch(of: /href="(\/invoices\/credit-note\/[^"]+)"/).map { String($0.1) })
            let creditPage = try await Self.page(client, rep, creditPath)
            #expect(creditPage.contains(#"id="corrects"><a href="\#(path)">\#(invoice.invoice.number)</a>"#))
            let printed = try await client.execute(uri: "\(path)/print", method: .get, headers: rep.headers)
            #expect(String(buffer: printed.body) == invoice.invoice.rendition)
            #expect(printed.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none'") == true)
            // And the customer's invoices list both documents
            let listed = try await Self.page(client, rep, "/customers/VINET/invoices")
            #expect(listed.contains(invoice.invoice.number) && listed.contains("/CN/"))
            #expect(try await backoffice.invoicing.returns(orderNumber: number).count == 1)
        }
    }

    @Test func anInvoiceAddressThatNamesNoDocumentIsNotFound() async throws {
        // Given a signed-in employee and no invoice issued
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When addresses of no document are asked for
            let statuses = try await [
                "/invoices/invoice/KRK/2026/1", "/invoices/receipt/KRK/2026/1", "/invoices/invoice/KRK/year/1",
                "/invoices/credit-note/KRK/2026/1/print",
            ].asyncMap { try await client.execute(uri: $0, method: .get, headers: rep.headers).status }
            // Then each is not found, never a server error
            #expect(statuses == Array(repeating: .notFound, count: 4))
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
