import Foundation
import Mustache
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// Renditions read their model once into dictionaries (`Renditions.readOnce`) rather than through Mustache's
/// reflection at every tag: the text must be the same either way.
@Suite("Renditions")
struct RenditionTests {
    static func template(_ name: String) throws -> MustacheTemplate {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/Northwind/Documents/Renditions/\(name).mustache").standardizedFileURL
        return try MustacheTemplate(string: String(contentsOf: url, encoding: .utf8))
    }

    @Test func anInvoiceReadOnceRendersAsReflectionRendersIt() async throws {
        // Given an invoice for a shipment with a discounted line and two tax rates, and its correction
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        try await b.invoicing.setTaxRate(categoryName: "Condiments", percent: "8")
        let draft = OrderDraft(
            customerCode: "VINET",
            employeeID: w.nancy.id,
            lines: [.init(productID: w.mustard.key, quantity: 2), .init(productID: w.chai.key, quantity: 3, discount: 0.15)]
        )
        let number = try await b.orders.create(draft).order.number
        let shipment = try await b.orders.shipAvailable(number: number, shippedDate: .today)
        let model = InvoiceRendition(try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber)))
        // When its template renders the model read once, and the model itself
        let template = try Self.template("invoice")
        let readOnce = template.render(Renditions.readOnce(model))
        // Then both texts are the same, and hold the lines
        #expect(readOnce == template.render(model))
        #expect(readOnce.contains("Chai") && readOnce.contains("15"))
    }

    @Test func aModelWithNilsAndNestedListsReadsOnceAsReflectionReadsIt() throws {
        // Given a model with an absent value, an empty list and a list of nested values
        struct Row {
            var name: String
            var note: String?
        }
        struct Model {
            var title: String
            var missing: String?
            var rows: [Row]
            var none: [Row]
            var flag: Bool
        }
        let model = Model(title: "T & <b>", missing: nil, rows: [Row(name: "a", note: nil), Row(name: "b", note: "n")], none: [], flag: true)
        let template = try MustacheTemplate(
            string:
                "{{title}}|{{#missing}}x{{/missing}}{{^missing}}none{{/missing}}|{{#rows}}{{name}}:{{note}}{{^note}}-{{/note}};{{/rows}}|{{^none}}empty{{/none}}|{{#flag}}yes{{/flag}}"
        )
        // When it renders read once and through reflection
        let readOnce = template.render(Renditions.readOnce(model))
        // Then the texts agree
        #expect(readOnce == template.render(model))
        #expect(readOnce == "T &amp; &lt;b&gt;|none|a:-;b:n;|empty|yes")
    }
}
