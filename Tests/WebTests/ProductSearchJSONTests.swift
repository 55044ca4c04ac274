import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindStore
import ServerOperations
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// Product search answers are written by `ProductSearchJSON`, not by the generated types: they must read back as
/// exactly what the generated handler answers, byte for byte where Foundation's encoder writes the same escapes.
struct ProductSearchJSONTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func row(_ name: String, quantity: String?, category: String?, supplier: String?, cents: Int, stock: Int) -> ProductRow {
        var product = Product(
            id: 7,
            name: name,
            supplierID: supplier == nil ? nil : 3,
            categoryID: category == nil ? nil : 2,
            quantityPerUnit: quantity,
            unitPrice: Money(cents: cents),
            unitsInStock: stock,
            unitsOnOrder: 40,
            reorderLevel: 10,
            discontinued: stock == 0
        )
        product.version = 12
        return ProductRow(product: product, categoryName: category, supplierName: supplier)
    }

    @Test func productsWithQuotesSlashesAndAccentsAreWrittenAsTheGeneratedEncoderWritesThem() throws {
        // Given products whose texts hold quotes, backslashes, slashes, accents and emoji, and one with no category,
        // supplier or quantity
        let rows = [
            Self.row(
                #"Chai "Masala" \ 1/2"#,
                quantity: "10 boxes x 20 bags",
                category: "Bev/erages",
                supplier: "Exotic Liquids",
                cents: 1800,
                stock: 39
            ),
            Self.row("Côte de Blaye 🍷", quantity: nil, category: nil, supplier: nil, cents: 26_350, stock: 0),
        ]
        // When the search answer is written
        let written = ProductSearchJSON.list(rows)
        // Then it is the bytes the generated handler's encoder writes for the same rows
        let typed = try Self.encoder.encode(NorthwindWeb.Components.Schemas.ProductList(items: rows.map(ProductBody.init)))
        #expect(Array(written.readableBytesView) == Array(typed))
    }

    @Test func controlCharactersInANameReadBackAsTheSameName() throws {
        // Given a product name with every control character (a hand edit or an old import could leave them)
        let name = "A" + String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }) + "Z"
        let rows = [Self.row(name, quantity: "1\t2", category: "C\r\n", supplier: nil, cents: -5, stock: 1)]
        // When the search answer is written and read back by the generated types
        let written = ProductSearchJSON.list(rows)
        let read = try JSONDecoder().decode(NorthwindWeb.Components.Schemas.ProductList.self, from: Data(written.readableBytesView))
        // Then it holds exactly the generated handler's answer
        #expect(read == NorthwindWeb.Components.Schemas.ProductList(items: rows.map(ProductBody.init)))
    }

    @Test func bytesSentOutsideTheRawAnswerMiddlewareAreRefusedNotReplacedByTheEmptyStandIn() {
        // Given no RawAnswer.Middleware around the caller
        // When a handler hands over its bytes
        // Then it is an error, so an empty stand-in never reaches a client as the answer
        #expect(throws: RawAnswerError.self) { try RawAnswer.send(Array("{}".utf8), standIn: 0) }
    }

    @Test func onlyPlainQueryStringsAreReadHereTheRestGoToTheGeneratedCode() {
        // Given search addresses of every shape
        // Then plain ones are read, unknown parameters ignored, and anything else left to the generated code
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=c%C3%B4te&limit=5")! == ("côte", 5))
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&nocache=17")! == ("chai", nil))
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai+tea") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=%E0") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&limit=five") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=%20") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&limit=+5") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&limit=%2B5") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&limit=-1") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&limit=5&limit=6") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?q=chai&q=tea") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search?limit=5") == nil)
        #expect(ProductSearchJSON.parameters("/api/v1/products/search") == nil)
    }

    @Test func aSearchAnswersWithTheProductsItFindsHoweverItsWordsAreEscaped() async throws {
        // Given the demo store and a sales representative's token
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When the same words are searched with the space escaped as %20 (read by the gate's shortcut) and as '+'
            // (read by the generated code)

            func items(_ query: String) async throws -> [Components.Schemas.Product] {
                let response = try await client.execute(uri: "/api/v1/products/search?\(query)", method: .get, headers: bearer(fixture.repToken))
                #expect(response.status == .ok)
                return try JSONDecoder().decode(Components.Schemas.ProductList.self, from: Data(response.body.readableBytesView)).items
            }
            let plain = try await items("q=de%20blaye&limit=3")
            let generated = try await items("q=de+blaye&limit=3")
            // Then both answers are the same products, field for field: the handler's own bytes, not the stand-in
            #expect(!plain.isEmpty)
            #expect(plain == generated)
        }
    }

    @Test func aLimitOutOfRangeIsRefusedOnThePlainPathToo() async throws {
        // Given the demo store
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a plain search asks for 0 results
            let response = try await client.execute(uri: "/api/v1/products/search?q=chai&limit=0", method: .get, headers: bearer(fixture.repToken))
            // Then it is refused as the generated handler refuses it, naming the parameter
            #expect(response.status == .unprocessableContent)
            #expect(String(buffer: response.body).contains("limit"))
        }
    }
}
