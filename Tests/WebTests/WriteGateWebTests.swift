import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// The hardening of the surfaces added since the last round, against a real HTTP server on loopback.
@Suite("Write gate on the web")
struct WriteGateWebTests {
    @Test func aRepsMegabyteTransferNoteIsRefusedWith422NamingTheFieldAndTheStoreDoesNotGrow() async throws {
        // Given head office, which knows London, and a sales rep's token
        let (fixture, chai) = try await StockByLocationTests.joinedWithLondon()
        let before = try fixture.store.count("SELECT count(*) FROM stock_transfers")
        let pages = try fixture.store.count("PRAGMA page_count")
        try await fixture.test(live: true) { client in
            // When the rep sends a transfer with a 1.5 MB note
            let note = String(repeating: "x", count: 1_500_000)
            let response = try await StockTransferWebTests.post(
                client,
                "/api/v1/transfers",
                #"{"productID":\#(chai),"quantity":1,"to":"LON","note":"\#(note)"}"#,
                token: fixture.repToken
            )
            // Then it is a 422 that names the note and its limit
            #expect(response.status == .unprocessableContent)
            let body = String(buffer: response.body)
            #expect(body.contains("note") && body.contains("must be at most 500 characters"), "\(body.prefix(300))")
        }
        // And nothing was written: no transfer, and the file did not grow
        #expect(try fixture.store.count("SELECT count(*) FROM stock_transfers") == before)
        #expect(try fixture.store.count("PRAGMA page_count") == pages)
    }

    static let malformed: [(String, String?, HTTPResponse.Status)] = [
        (#"{"productID":1,"productID":2,"quantity":1,"to":"LON"}"#, "application/json", .badRequest),
        (#"{"productID":1,"quantity":1,"to":"LON",}"#, "application/json", .badRequest),
        (#"{"productID":1,"quantity":1,"to":"LON"}"#, nil, .unsupportedMediaType),
    ]

    @Test(arguments: malformed)
    func theTransferOperationsTakeOnlyStrictJSON(_ body: String, _ type: String?, _ status: HTTPResponse.Status) async throws {
        // Given head office, which knows London
        let (fixture, _) = try await StockByLocationTests.joinedWithLondon()
        let before = try fixture.store.count("SELECT count(*) FROM stock_transfers")
        try await fixture.test(live: true) { client in
            for uri in ["/api/v1/transfers", "/api/v1/transfers/1/receive"] {
                // When a malformed body (duplicate keys, a trailing comma, no content type) is sent to either
                var headers = bearer(fixture.repToken)
                headers[.contentType] = type
                let response = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
                // Then it is refused as for every other operation with a body
                #expect(response.status == status, "\(uri): \(String(buffer: response.body))")
            }
        }
        #expect(try fixture.store.count("SELECT count(*) FROM stock_transfers") == before)
    }

    @Test func aNULInAnAPIBodyIsRefusedAndNothingIsCutShort() async throws {
        // Given a sales representative's token
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When she adds a customer whose name holds an escaped NUL
            let response = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(string: #"{"code": "NULCO", "companyName": "a\u0000b"}"#)
            )
            // Then it is refused saying why, and no customer named "a" was made of it
            #expect(response.status == .badRequest)
            #expect(String(buffer: response.body).contains("NUL"), "\(String(buffer: response.body))")
        }
        #expect(try fixture.store.count("SELECT count(*) FROM customers WHERE code = 'NULCO'") == 0)
    }

    @Test func whichOperationsTakeBodiesAndWhichAreManagersIsReadFromTheContract() throws {
        // Given the gate's tables, read from openapi.yaml
        // Then both transfer operations take bodies, and the catalogue's writes and the reports are managers'
        #expect(try OperationGate.takesBody.isSuperset(of: ["sendTransfer", "receiveTransfer", "createProduct", "createOrder"]))
        #expect(try OperationGate.managersOnly["deleteSupplier"] == "delete suppliers")
        #expect(try OperationGate.managersOnly["runReport"] == "read reports")
        #expect(try OperationGate.managersOnly["sendTransfer"] == nil)
    }

    @Test(arguments: ["", "   ", ";;;", "Nobody's title"])
    func managerTitlesThatNoOneHoldsAreRefusedAndManagersStayManagers(_ value: String) async throws {
        // Given a manager on the settings page
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When they save manager titles that no one who can sign in holds
            let response = try await manager.post(client, "/settings", [("key", "session.managerTitles"), ("value", value)])
            // Then it is refused saying why, nothing is stored, and they may still edit the catalogue
            #expect(response.status == .unprocessableContent)
            let rule =
                AccessPolicy.titles(value).isEmpty
                ? "must name at least one job title" : "must name at least one title held by an employee who can sign in"
            #expect(String(buffer: response.body).contains(rule))
            #expect(try await fixture.store.backoffice.settings.installation()["session.managerTitles"] == nil)
            let page = try await client.execute(uri: "/settings", method: .get, headers: manager.headers)
            #expect(page.status == .ok)
        }
    }

    @Test(arguments: ["", "bogus", "127.0.0.1\u{0}", "exa mple"])
    func aHostThatNameNoAddressIsRefusedOnTheSettingsPage(_ value: String) async throws {
        // Given a manager on the settings page
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When they save a listen address that is no address and does not resolve
            let response = try await manager.post(client, "/settings", [("key", "server.host"), ("value", value)])
            // Then it is refused, and the next start would listen where it did
            #expect(response.status == .unprocessableContent, "\(value)")
            #expect(try await fixture.store.backoffice.settings.installation()["server.host"] == nil)
        }
    }

    @Test(arguments: ["0.0.0.0", "::1", "localhost"])
    func aHostThatIsAnAddressOrResolvesIsStored(_ value: String) async throws {
        // Given the catalogue's rule for server.host
        let setting = try Setting.named("server.host")
        // When an address, or a name this machine resolves, is given
        // Then it is taken as it is
        #expect(try setting.canonical(value) == value)
    }

    @Test func aReadOnlyViewerSeesNoConvertAndCannotPostIt() async throws {
        // Given a quote that Nancy (a rep) holds open
        let fixture = try await WebFixture.make()
        let b = fixture.store.backoffice
        let quote = try await b.quotes.create(
            QuoteContent(
                customerCode: fixture.world.vinet.code,
                validUntil: .today,
                lines: [try b.quotes.newLine(productID: fixture.world.chai.id ?? 0, quantity: 2)]
            ),
            by: QuoteEditor(login: "nancy.davolio", name: "Nancy Davolio")
        )
        let nancy = QuoteEditor(login: "nancy.davolio", name: "Nancy Davolio")
        _ = try await b.quotes.open(number: quote.number, editor: nancy)
        try await fixture.test(live: true) { client in
            // When Andrew opens it, read-only, and posts the conversion anyway
            let andrew = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // (Nancy's page renews her 90-second lease; a loaded machine can take longer than that to sign Andrew in.)
            _ = try await b.quotes.open(number: quote.number, editor: nancy)
            let page = try await client.execute(uri: "/quotes/\(quote.number)", method: .get, headers: andrew.headers)
            let html = String(buffer: page.body)
            let response = try await andrew.post(client, "/quotes/\(quote.number)/convert", [])
            // Then the page has no Convert for him, the conversion is refused, and the quote is still a draft
            #expect(html.contains("data-readonly"))
            #expect(!html.contains(#"id="convert-button""#))
            #expect(response.status == .conflict, "\(response.status)")
            #expect(try await b.quotes.quote(number: quote.number).status == .draft)
        }
    }
}
