import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindWeb

/// What a numeric input takes, to tell the values it must refuse from those it may accept.
enum NumericKind: Sendable, CustomStringConvertible {
    case whole(ClosedRange<Int>)
    case money
    case number(ClosedRange<Double>)

    static let fraction = NumericKind.number(0...1)

    /// The values every input is tried with, as JSON: the edges of Int32 and Int64, beyond them, exponents, fractions,
    /// a decimal no integer holds, text and null.
    static let jsonValues = [
        "0", "-1", "1", "2147483648", "9223372036854775807", "9223372036854775808", "1e3", "1.5",
        "1e400", "99999999999999999999999.99", "\"\"", "\"abc\"", "\"12\"", "null",
    ]
    /// The same as a query string or form field would carry them.
    static let textValues = [
        "0", "-1", "1", "2147483648", "9223372036854775807", "9223372036854775808", "1e3", "1.5",
        "99999999999999999999999.99", "abc", "0x10",
    ]

    /// Whether the value is in range; money may also come as a string.
    func accepts(json literal: String) -> Bool {
        if literal.hasPrefix("\"") {
            guard case .money = self else { return false }
            return accepts(text: String(literal.dropFirst().dropLast()))
        }
        guard literal != "null", let number = Decimal(string: literal, locale: Locale(identifier: "en_US_POSIX")), number.isFinite
        else { return false }
        switch self {
        case let .whole(range):
            // Exactly, through the decimal's own digits: 1e3 is 1000, 1.5 is no whole number.
            guard let value = Int("\(number)") else { return false }
            return range.contains(value)
        case .money:
            return Money(parsing: "\(number)").map(Limits.money.contains) ?? false
        case let .number(range):
            return Double("\(number)").map(range.contains) ?? false
        }
    }

    func accepts(text: String) -> Bool {
        switch self {
        case let .whole(range): Int(text).map(range.contains) ?? false
        case .money: Money(parsing: text).map(Limits.money.contains) ?? false
        case let .number(range): Double(text).map(range.contains) ?? false
        }
    }

    var description: String {
        switch self {
        case let .whole(range): "\(range)"
        case .money: "money"
        case let .number(range): "\(range)"
        }
    }
}

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

let wholeID = NumericKind.whole(Int(Int64.min)...Int(Int64.max))
let units = NumericKind.whole(Limits.units)

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
        description: "POST products unitsOnOrder",
        kind: units,
        method: .post,
        path: { _ in "/api/v1/products" },
        body: { _ in #"{"name":"Probe","unitsOnOrder":VALUE}"# }
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
        description: "PATCH products unitsOnOrder",
        kind: units,
        method: .patch,
        path: { "/api/v1/products/\($0.world.chai.key)" },
        body: { _ in #"{"unitsOnOrder":VALUE,"version":1}"# }
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
            ("/products", "unitPrice", NumericKind.money), ("/products", "unitsOnOrder", units), ("/products", "reorderLevel", units),
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
                        ("name", "Probe"), ("unitPrice", "1.00"), ("unitsOnOrder", "0"), ("reorderLevel", "0"), ("unitsInStock", "0"),
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
                    let accepted = NumericKind.whole(1...(Limits.offset.upperBound / PageRoutes.pageSize + 1)).accepts(text: value)
                    #expect(response.status.code == (accepted ? 200 : 422), "\(list)?page=\(value): \(response.status)")
                }
            }
            let alive = try await client.execute(uri: "/", method: .get, headers: session.headers)
            #expect(alive.status == .ok)
        }
    }
}

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
        let order = try await b.createOrder(
            .init(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                lines: [.init(productID: w.chai.key, quantity: 1), .init(productID: w.cote.key, quantity: 2)]
            )
        )
        let amount = try #require(ReportFunctions.extendedPriceCents(unitPriceCents: 1_000_000_000_000, quantity: 1_000_000, discount: 0))
        try await fixture.store.store.pool.write { db in
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
            #expect(String(buffer: page.body).contains(PoisonedStore.maxText))
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
            let result = try CLI.run(arguments + ["--store", store])
            // Then each exits 0
            #expect(!result.crashed && result.status == 0, "\(arguments): \(result.status) \(result.stderr)")
        }
        let shown = try CLI.run(["orders", "show", poisoned.orderNumber, "--store", store])
        #expect(shown.stdout.contains("Freight \(PoisonedStore.maxText)"))
    }
}

@Suite("Hostile input: the command line", .serialized)
struct CommandLineBoundaryTests {
    /// Every numeric argument: out of range is a non-zero exit with a message; nothing ever ends in a signal.
    @Test(
        arguments: [
            (["products", "edit", "CHAI", "--price", "VALUE"], NumericKind.money),
            (["products", "edit", "CHAI", "--on-order", "VALUE"], units),
            (["products", "edit", "CHAI", "--reorder-level", "VALUE"], units),
            (["products", "receive", "CHAI", "VALUE"], .whole(1...Limits.units.upperBound)),
            (["products", "adjust", "CHAI", "VALUE"], units),
            (["products", "list", "--limit", "VALUE"], .whole(Limits.pageSize)),
            (["products", "list", "--offset", "VALUE"], .whole(Limits.offset)),
            (["orders", "new", "--customer", "VINET", "--line", "CHAI:VALUE"], .whole(Limits.lineQuantity)),
            (["orders", "new", "--customer", "VINET", "--line", "CHAI:1:VALUE"], .fraction),
            (["orders", "new", "--customer", "VINET", "--line", "CHAI:1", "--freight", "VALUE"], .money),
        ] as [([String], NumericKind)]
    )
    func aNumericArgumentAtItsBoundaries(arguments: [String], kind: NumericKind) async throws {
        // Given a store with a known world
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        for value in NumericKind.textValues {
            // When the command runs with the value
            let argv = arguments.map { $0.replacingOccurrences(of: "VALUE", with: value).replacingOccurrences(of: "CHAI", with: String(w.chai.key)) }
            let result = try CLI.run(argv + ["--store", store.path])
            // Then it never crashes, and an out-of-range value is refused with a message
            #expect(!result.crashed, "\(argv) crashed: \(result.stderr)")
            if !kind.accepts(text: value) {
                #expect(result.status != 0 && !result.stderr.isEmpty, "\(argv) was accepted: \(result.stdout)")
            }
        }
    }
}

@Suite("Hostile input: HTTP")
struct HTTPHardeningTests {
    @Test(arguments: [
        "/\t/evil.example/", "//evil.example/", "/\\evil.example/", "\\\\evil.example", "https://evil.example/",
        "/\n/evil.example", "/\r/evil.example", "/ /evil.example", "/\u{0}/evil.example", "javascript:alert(1)",
        "/\u{3000}/evil.example", "evil.example", "",
    ])
    func signInSendsNobodyToAnotherOrigin(next: String) {
        #expect(PageRoutes.safeNext(next) == "/")
    }

    @Test(arguments: ["/orders", "/products?q=chai&page=2", "/orders/7KQ2XM-831", "/%2F/evil.example"])
    func signInReturnsToAPathOnThisSite(next: String) {
        #expect(PageRoutes.safeNext(next) == next)
    }

    @Test func aTabbedNextLandsOnTheHomePage() async throws {
        // Given the sign-in page reached through a crafted link
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let page = try await client.execute(uri: "/signin?next=/%09/evil.example/", method: .get)
            let cookie = try #require(page.headers[values: .setCookie].first { $0.hasPrefix("northwind_signin=") })
            let token = try #require(String(buffer: page.body).firstMatch(of: /name="_csrf" value="([^"]+)"/)?.1)
            // When the user signs in from it
            let response = try await client.execute(
                uri: "/signin",
                method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .cookie: String(cookie.split(separator: ";")[0])],
                body: ByteBuffer(string: "_csrf=\(token)&login=nancy.davolio&password=rep-secret-1&next=%2F%09%2Fevil.example%2F")
            )
            // Then they land on this site's home page
            #expect(response.status == .found)
            #expect(response.headers[.location] == "/")
        }
    }

    @Test(arguments: ["/static/nope.js", "/no/such/page", "/api/v1/no-such-thing", "/api/nothing"])
    func anUnknownAddressIsA404WithTheSecurityHeaders(path: String) async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .notFound)
            #expect(
                response.headers[.contentSecurityPolicy]
                    == "default-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'"
            )
            #expect(response.headers[.referrerPolicy] == "same-origin")
            #expect(response.headers[.xContentTypeOptions] == "nosniff")
        }
    }

    @Test func headAnswersWhereGetDoes() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let get = try await client.execute(uri: "/api/v1/products/\(fixture.world.chai.key)", method: .get, headers: bearer(fixture.managerToken))
            let head = try await client.execute(
                uri: "/api/v1/products/\(fixture.world.chai.key)",
                method: .head,
                headers: bearer(fixture.managerToken)
            )
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            #expect(head.headers[.contentType] == get.headers[.contentType])
            let page = try await client.execute(uri: "/signin", method: .head)
            #expect(page.status == .ok)
        }
    }

    @Test(arguments: [
        (HTTPRequest.Method.put, "/api/v1/products/1", "GET, HEAD, PATCH, DELETE"),
        (.delete, "/api/v1/orders", "GET, HEAD, POST"), (.trace, "/api/v1/me", "GET, HEAD"),
        (.post, "/static/app.css", "GET, HEAD"), (.patch, "/orders/10248", "GET, HEAD"),
    ])
    func anUndeclaredMethodIsA405ThatSaysWhatIsAllowed(method: HTTPRequest.Method, path: String, allow: String) async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let response = try await client.execute(uri: path, method: method, headers: bearer(fixture.managerToken))
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers[.allow] == allow)
            #expect(response.headers[.xContentTypeOptions] == "nosniff")
        }
    }

    @Test(arguments: [
        (#"{"name":"Tea",}"#, 400), (#"{"name":"Tea","name":"Coffee"}"#, 400), (#"{"name":"Tea","n\u0061me":"Coffee"}"#, 400),
        (#"{"name":"Tea","colour":"green"}"#, 422), (#"{"name":"Tea","id":5}"#, 422), (#"{"name":"Tea"} x"#, 400),
        (#"[{"name":"Tea"}]"#, 400), (#"{"name":"Tea","description":"a",}"#, 400), (#"{"name":01}"#, 400),
        (String(repeating: "[", count: 100) + String(repeating: "]", count: 100), 400),
    ])
    func aBodyOutsideTheDocumentIsRefused(body: String, status: Int) async throws {
        // Given a manager
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            // When a category is posted with a body the API document does not allow
            let response = try await client.execute(
                uri: "/api/v1/categories",
                method: .post,
                headers: bearer(fixture.managerToken),
                body: ByteBuffer(string: body)
            )
            // Then it is refused, and nothing is added
            #expect(Int(response.status.code) == status, "\(body): \(String(buffer: response.body))")
        }
        #expect(try fixture.store.count("SELECT count(*) FROM categories") == 2)
    }

    @Test(arguments: [
        #"{"unitsOnOrder":5,"version":1,"colour":"red"}"#, #"{"unitsOnOrder":5,"version":1,}"#,
        #"{"unitsOnOrder":5,"unitsOnOrder":6,"version":1}"#, #"{"name":null,"version":1}"#,
    ])
    func aProductPatchOutsideTheDocumentIsRefused(body: String) async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let response = try await client.execute(
                uri: "/api/v1/products/\(fixture.world.chai.key)",
                method: .patch,
                headers: bearer(fixture.managerToken),
                body: ByteBuffer(string: body)
            )
            #expect((400..<500).contains(response.status.code), "\(body): \(String(buffer: response.body))")
        }
        #expect(try fixture.store.backoffice.product(id: fixture.world.chai.key).product.version == 1)
    }

    @Test func patchSetsAndClearsAnOptionalFieldThatWasEmpty() async throws {
        // Given a category without a description
        let fixture = try await WebFixture.make()
        let condiments = fixture.world.condiments.id ?? 0
        try await fixture.test(live: true) { client in
            // When a manager sets it, then clears it
            let set = try await client.execute(
                uri: "/api/v1/categories/\(condiments)",
                method: .patch,
                headers: bearer(fixture.managerToken),
                body: ByteBuffer(string: #"{"description":"now set","version":1}"#)
            )
            #expect(set.status == .ok, "\(String(buffer: set.body))")
            #expect(try json(set)["description"] as? String == "now set")
            let cleared = try await client.execute(
                uri: "/api/v1/categories/\(condiments)",
                method: .patch,
                headers: bearer(fixture.managerToken),
                body: ByteBuffer(string: #"{"description":null,"version":2}"#)
            )
            // Then both saves take
            #expect(cleared.status == .ok)
        }
        #expect(try fixture.store.backoffice.find(NorthwindStore.Category.self, id: condiments).description == nil)
    }

    @Test(arguments: [
        "/api/v1/products?limit=5&limit=abc", "/api/v1/products?limit=", "/api/v1/products?sort=",
        "/api/v1/products?lowStock=", "/api/v1/products?categoryID=", "/api/v1/categories?offset=",
        "/api/v1/orders?status=", "/api/v1/customers?q=a&offset=5", "/api/v1/products/search?q=a&q=b",
        "/api/v1/reports/ten-most-expensive-products?format=", "/api/v1/reports/invoices?format=csv&offset=-17464835778",
    ])
    func aParameterBlankOrGivenTwiceIsRefused(path: String) async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let response = try await client.execute(uri: path, method: .get, headers: bearer(fixture.managerToken))
            #expect(response.status == .unprocessableContent, "\(path): \(String(buffer: response.body))")
        }
    }

    @Test func aBodyThatIsNotSentAsJSONIsA415() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let response = try await client.execute(
                uri: "/api/v1/categories",
                method: .post,
                headers: [.authorization: "Bearer \(fixture.managerToken)", .contentType: "text/plain"],
                body: ByteBuffer(string: #"{"name":"Tea"}"#)
            )
            #expect(response.status == .unsupportedMediaType)
        }
        #expect(try fixture.store.count("SELECT count(*) FROM categories") == 2)
    }

    @Test func anOversizedBodyIsA413() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let big = ByteBuffer(repeating: UInt8(ascii: " "), count: 5 * 1024 * 1024)
            var headers = bearer(fixture.managerToken)
            headers[.expect] = "100-continue"
            let response = try await client.execute(uri: "/api/v1/products", method: .post, headers: headers, body: big)
            #expect(response.status == .contentTooLarge)
        }
    }
}

@Suite("CSRF on every page that changes something")
struct CSRFCoverageTests {
    /// Every POST, PUT, PATCH and DELETE route of the pages, as the router has them, with real values for its parameters.
    static func changingPageRoutes(_ fixture: WebFixture, order: String) async throws -> [(HTTPRequest.Method, String)] {
        let environment = try await WebApp.environment(backoffice: fixture.store.backoffice, options: WebOptions(port: 0))
        let router = Router(context: WebContext.self)
        PageRoutes(environment).register(on: router)
        return router.routes.filter { ![.get, .head].contains($0.method) }.map { route in
            let path = route.path.description.replacingOccurrences(of: "{id}", with: String(fixture.world.chai.key))
                .replacingOccurrences(of: "{number}", with: order).replacingOccurrences(of: "{name}", with: "invoices")
            return (route.method, path)
        }
    }

    @Test(arguments: [nil, "wrong"] as [String?])
    func everyChangingPageRouteRefusesAMissingOrWrongToken(token: String?) async throws {
        // Given a signed-in manager, an open order, and every page route that changes something
        let fixture = try await WebFixture.make()
        let order = try await fixture.store.backoffice.createOrder(
            .init(customerCode: "VINET", employeeID: fixture.world.nancy.id, lines: [.init(productID: fixture.world.chai.key, quantity: 1)])
        )
        let routes = try await Self.changingPageRoutes(fixture, order: order.order.number)
        #expect(routes.count >= 7 && routes.contains { $0.1 == "/signout" }, "\(routes)")
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            for (method, path) in routes {
                // When each is sent without the page's token, or with a wrong one, as a form and as a script would
                let form = "name=Forged&unitPrice=1.00&customer=VINET&productID=1&quantity=1" + (token.map { "&_csrf=\($0)" } ?? "")
                let asForm = try await client.execute(
                    uri: path,
                    method: method,
                    headers: [.cookie: session.cookie, .contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: form)
                )
                var headers: HTTPFields = [.cookie: session.cookie, .contentType: "application/json"]
                if let token { headers[.csrfToken] = token }
                let asScript = try await client.execute(uri: path, method: method, headers: headers, body: ByteBuffer(string: "{}"))
                // Then each is refused
                #expect(asForm.status == .forbidden, "\(method) \(path) as a form: \(asForm.status)")
                #expect(asScript.status == .forbidden, "\(method) \(path) as a script: \(asScript.status)")
            }
        }
        // And nothing changed
        #expect(try fixture.store.count("SELECT count(*) FROM products WHERE name = 'Forged'") == 0)
        #expect(try fixture.store.backoffice.order(number: order.order.number).order.status == .new)
    }
}
