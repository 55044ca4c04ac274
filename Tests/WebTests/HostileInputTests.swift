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

/// One numeric input of the API: where it goes, and the request that carries a value in it.
struct APIInput: Sendable, CustomStringConvertible {
    var description: String
    var kind: NumericKind
    var method: HTTPRequest.Method
    /// The path and query, with `VALUE` standing for the value (query inputs), given the fixture.
    var path: @Sendable (WebFixture) -> String
    /// The JSON body, with `VALUE` standing for the value (body inputs).
    var body: (@Sendable (WebFixture) -> String)?

    static func query(_ path: String, _ parameter: String, _ kind: NumericKind) -> APIInput {
        APIInput(
            description: "GET \(path) \(parameter)",
            kind: kind,
            method: .get,
            path: { _ in "\(path)\(path.contains("?") ? "&" : "?")\(parameter)=VALUE" }
        )
    }
}

let apiInputs: [APIInput] = [
    APIInput(
        description: "POST products unitPrice",
        kind: .money,
        method: .post,
        path: { _ in "/api/v1/products" },
        body: { _ in #"{"name":"Probe","unitPrice":VALUE}"# }
    ),
    APIInput(
        description: "POST products unitsInStock",
        kind: units,
        method: .post,
        path: { _ in "/api/v1/products" },
        body: { _ in #"{"name":"Probe","unitsInStock":VALUE}"# }
    ),
    APIInput(
        description: "POST products reorderLevel",
        kind: units,
        method: .post,
        path: { _ in "/api/v1/products" },
        body: { _ in #"{"name":"Probe","reorderLevel":VALUE}"# }
    ),
    APIInput(
        description: "PATCH products unitPrice",
        kind: .money,
        method: .patch,
        path: { "/api/v1/products/\($0.world.chai.key)" },
        body: { _ in #"{"unitPrice":VALUE,"version":1}"# }
    ),
    APIInput(
        description: "PATCH products reorderLevel",
        kind: units,
        method: .patch,
        path: { "/api/v1/products/\($0.world.chai.key)" },
        body: { _ in #"{"reorderLevel":VALUE,"version":1}"# }
    ),
    APIInput(
        description: "PATCH products version",
        kind: .whole(1...Int.max),
        method: .patch,
        path: { "/api/v1/products/\($0.world.chai.key)" },
        body: { _ in #"{"version":VALUE}"# }
    ),
    APIInput(
        description: "PATCH categories version",
        kind: .whole(1...Int.max),
        method: .patch,
        path: { "/api/v1/categories/\($0.world.beverages.id ?? 0)" },
        body: { _ in #"{"version":VALUE}"# }
    ),
    APIInput(
        description: "POST orders freight",
        kind: .money,
        method: .post,
        path: { _ in "/api/v1/orders" },
        body: { #"{"customerCode":"VINET","lines":[{"productID":\#($0.world.chai.key),"quantity":1}],"freight":VALUE}"# }
    ),
    APIInput(
        description: "POST orders quantity",
        kind: .whole(Limits.lineQuantity),
        method: .post,
        path: { _ in "/api/v1/orders" },
        body: { #"{"customerCode":"VINET","lines":[{"productID":\#($0.world.chai.key),"quantity":VALUE}]}"# }
    ),
    APIInput(
        description: "POST orders discount",
        kind: .fraction,
        method: .post,
        path: { _ in "/api/v1/orders" },
        body: { #"{"customerCode":"VINET","lines":[{"productID":\#($0.world.chai.key),"quantity":1,"discount":VALUE}]}"# }
    ),
    APIInput(
        description: "POST orders productID",
        kind: wholeID,
        method: .post,
        path: { _ in "/api/v1/orders" },
        body: { _ in #"{"customerCode":"VINET","lines":[{"productID":VALUE,"quantity":1}]}"# }
    ),
    APIInput(
        description: "POST orders shipVia",
        kind: wholeID,
        method: .post,
        path: { _ in "/api/v1/orders" },
        body: { #"{"customerCode":"VINET","lines":[{"productID":\#($0.world.chai.key),"quantity":1}],"shipVia":VALUE}"# }
    ),
    .query("/api/v1/products", "limit", .whole(Limits.pageSize)),
    .query("/api/v1/products", "offset", .whole(Limits.offset)),
    .query("/api/v1/products", "cursor", .whole(Limits.offset)),
    .query("/api/v1/products", "categoryID", .whole(1...Int.max)),
    .query("/api/v1/products/search?q=cha&x=1", "limit", .whole(Limits.pageSize)),
    .query("/api/v1/orders", "limit", .whole(Limits.pageSize)),
    .query("/api/v1/orders", "offset", .whole(Limits.offset)),
    .query("/api/v1/customers", "cursor", .whole(Limits.offset)),
    .query("/api/v1/categories", "limit", .whole(Limits.pageSize)),
    .query("/api/v1/suppliers", "offset", .whole(Limits.offset)),
    .query("/api/v1/employees", "limit", .whole(Limits.pageSize)),
    .query("/api/v1/shippers", "cursor", .whole(Limits.offset)),
    .query("/api/v1/reports/ten-most-expensive-products", "limit", .whole(1...10_000)),
    .query("/api/v1/reports/ten-most-expensive-products", "offset", .whole(Limits.offset)),
    .query("/api/v1/reports/sales-by-year?from=1996-01-01&to=1998-12-31", "offset", .whole(Limits.offset)),
    .query("/api/v1/reports/quarterly-orders", "year", .whole(1753...9999)),
    .query("/api/v1/reports/top-customers", "top", .whole(1...10_000)),
    APIInput(description: "GET products/{id}", kind: wholeID, method: .get, path: { _ in "/api/v1/products/VALUE" }),
    APIInput(description: "GET products/{id}/movements", kind: wholeID, method: .get, path: { _ in "/api/v1/products/VALUE/movements" }),
    APIInput(description: "GET employees/{id}", kind: wholeID, method: .get, path: { _ in "/api/v1/employees/VALUE" }),
]

@Suite("Hostile input", .serialized)
struct HostileInputTests {
    /// Every value an input must refuse gets a 4xx, no value gets a 5xx, and the server answers afterwards.
    @Test(arguments: apiInputs)
    func anAPINumericInputAtItsBoundaries(input: APIInput) async throws {
        // Given a live server and a manager's token
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let values = input.body == nil ? NumericKind.textValues : NumericKind.jsonValues
            for value in values {
                // When the value is sent
                let path = input.path(fixture).replacingOccurrences(
                    of: "VALUE",
                    with: value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
                )
                let body = input.body.map { ByteBuffer(string: $0(fixture).replacingOccurrences(of: "VALUE", with: value)) }
                let response = try await client.execute(uri: path, method: input.method, headers: bearer(fixture.managerToken), body: body)
                // Then a value out of range is refused with a 4xx, and nothing is a server error
                let accepted = input.body == nil ? input.kind.accepts(text: value) : input.kind.accepts(json: value)
                #expect(response.status.code < 500, "\(input) = \(value): \(response.status) \(String(buffer: response.body))")
                if !accepted {
                    #expect(
                        (400..<500).contains(response.status.code),
                        "\(input) = \(value) (\(input.kind)) was accepted: \(response.status) \(String(buffer: response.body))"
                    )
                }
            }
            let alive = try await client.execute(uri: "/api/v1/me", method: .get, headers: bearer(fixture.managerToken))
            #expect(alive.status == .ok)
        }
    }

    /// The page forms and list pages: each numeric field's refusals are 4xx pages, and the server keeps answering.
    @Test(
        arguments: [
            ("/products", "unitPrice", NumericKind.money), ("/products", "reorderLevel", units),
            ("/products", "unitsInStock", units), ("/products/ID", "unitPrice", .money), ("/products/ID", "reorderLevel", units),
            ("/orders", "freight", .money), ("/orders", "quantity", .whole(Limits.lineQuantity)),
            ("/orders", "discount", .number(0...100)),
        ] as [(String, String, NumericKind)]
    )
    func aPageFormFieldAtItsBoundaries(path: String, field: String, kind: NumericKind) async throws {
        // Given a manager signed in to the pages of a live server
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let chai = fixture.world.chai
            for value in NumericKind.textValues {
                var fields: [(String, String)] =
                    path == "/orders"
                    ? [
                        ("customer", "VINET"), ("product", ""), ("productID", String(chai.key)), ("quantity", "1"), ("discount", "0"),
                        ("freight", "0.00"),
                    ]
                    : [
                        ("name", "Probe"), ("unitPrice", "1.00"), ("reorderLevel", "0"), ("unitsInStock", "0"),
                        ("version", "1"),
                    ]
                fields = fields.map { $0.0 == field ? ($0.0, value) : $0 }
                // When the form is posted with the value
                let response = try await session.post(client, path.replacingOccurrences(of: "ID", with: String(chai.key)), fields)
                // Then a refusal is a 4xx page, never a 5xx
                #expect(response.status.code < 500, "\(path) \(field) = \(value): \(response.status)")
                if !kind.accepts(text: value) {
                    #expect((400..<500).contains(response.status.code), "\(path) \(field) = \(value) was accepted: \(response.status)")
                }
            }
            for list in ["/products", "/orders", "/customers"] {
                for value in NumericKind.textValues {
                    let response = try await client.execute(uri: "\(list)?page=\(value)", method: .get, headers: session.headers)
                    let accepted = NumericKind.whole(1...(Limits.offset.upperBound / Int(Setting.factoryDefaults["pages.pageSize"]!)! + 1)).accepts(
                        text: value
                    )
                    #expect(response.status.code == (accepted ? 200 : 422), "\(list)?page=\(value): \(response.status)")
                }
            }
            let alive = try await client.execute(uri: "/", method: .get, headers: session.headers)
            #expect(alive.status == .ok)
        }
    }
}
