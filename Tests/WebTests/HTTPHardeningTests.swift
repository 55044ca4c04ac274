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
            // When the user signs in from it
            let response = try await BrowserSession.postSignIn(
                client,
                login: "nancy.davolio",
                password: "rep-secret-1",
                next: "/\t/evil.example/"
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
        #expect(try fixture.store.backoffice.catalogue.product(id: fixture.world.chai.key).product.version == 1)
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
        #expect(try fixture.store.backoffice.records.find(NorthwindStore.Category.self, id: condiments).description == nil)
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
