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

/// A known world behind the real router: Andrew is a manager, Nancy a sales representative.
struct WebFixture {
    let store: TemporaryStore
    let world: World
    let managerToken: String
    let repToken: String

    static func make() async throws -> WebFixture {
        let store = try TemporaryStore()
        let world = try await World.make(store.backoffice)
        let b = store.backoffice
        _ = try await b.accounts.setPassword(employeeID: world.andrew.id ?? 0, password: "manager-secret", cost: 4)
        _ = try await b.accounts.setPassword(employeeID: world.nancy.id ?? 0, password: "rep-secret-1", cost: 4)
        return WebFixture(
            store: store,
            world: world,
            managerToken: try await b.accounts.issueAPIToken(employeeID: world.andrew.id ?? 0),
            repToken: try await b.accounts.issueAPIToken(employeeID: world.nancy.id ?? 0)
        )
    }

    /// Runs `body` against the app: through the router, or `live` on a real HTTP server on loopback.
    func test(
        options: WebOptions = WebOptions(port: 0),
        live: Bool = false,
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await WebApp.build(backoffice: store.backoffice, options: options)
        try await app.test(live ? .live : .router, body)
    }
}

/// A browser session in tests: the cookie and the CSRF token that pages carry.
struct BrowserSession {
    var cookie: String
    var csrf: String

    /// Opens the sign-in page (reached from `next`, or from nowhere when nil) and posts its form, as a browser
    /// does: the page's token goes back in the form and in its cookie.
    static func postSignIn(
        _ client: any TestClientProtocol,
        login: String,
        password: String,
        token: String? = nil,
        next: String? = "/orders"
    ) async throws -> TestResponse {
        let next = next?.addingPercentEncoding(withAllowedCharacters: .alphanumerics)
        let page = try await client.execute(uri: "/signin" + (next.map { "?next=\($0)" } ?? ""), method: .get)
        let cookie = try #require(page.headers[values: .setCookie].first { $0.hasPrefix("northwind_signin=") })
        #expect(cookie.contains("SameSite=Strict"))
        #expect(cookie.contains("HttpOnly"))
        let formToken = try #require(String(buffer: page.body).firstMatch(of: /name="_csrf" value="([^"]+)"/)?.1)
        return try await client.execute(
            uri: "/signin",
            method: .post,
            headers: [
                .contentType: "application/x-www-form-urlencoded",
                .cookie: String(cookie.split(separator: ";")[0]),
            ],
            body: ByteBuffer(string: "_csrf=\(token ?? String(formToken))&login=\(login)&password=\(password)" + (next.map { "&next=\($0)" } ?? ""))
        )
    }

    static func signIn(_ client: any TestClientProtocol, login: String, password: String) async throws -> BrowserSession {
        let response = try await postSignIn(client, login: login, password: password)
        #expect(response.status == .found)
        #expect(response.headers[.location] == "/orders")
        let setCookie = try #require(response.headers[values: .setCookie].first { $0.hasPrefix("northwind_session=") })
        #expect(setCookie.contains("HttpOnly"))
        #expect(setCookie.contains("Secure"))
        #expect(setCookie.contains("SameSite=Lax"))
        let cookie = String(setCookie.split(separator: ";")[0])
        let home = try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie])
        let html = String(buffer: home.body)
        let csrf = try #require(html.firstMatch(of: /data-csrf="([^"]+)"/)?.1)
        return BrowserSession(cookie: cookie, csrf: String(csrf))
    }

    var headers: HTTPFields { [.cookie: cookie] }

    func post(_ client: any TestClientProtocol, _ uri: String, _ fields: [(String, String)]) async throws -> TestResponse {
        let body = ([("_csrf", csrf)] + fields).map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            .joined(separator: "&")
        return try await client.execute(
            uri: uri,
            method: .post,
            headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: body)
        )
    }
}

func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)", .contentType: "application/json"] }

func json(_ response: TestResponse) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
}

@Suite("Web app and API") struct WebTests {
    @Test func pagesRedirectToSignInAndAPIAnswers401() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let page = try await client.execute(uri: "/products?q=chai", method: .get)
            #expect(page.status == .found)
            #expect(page.headers[.location] == "/signin?next=%2Fproducts%3Fq%3Dchai")
            let api = try await client.execute(uri: "/api/v1/products", method: .get)
            #expect(api.status == .unauthorized)
            #expect(api.headers[.contentType] == "application/problem+json")
            #expect(try json(api)["status"] as? Int == 401)
            let forged = try await client.execute(uri: "/api/v1/products", method: .get, headers: bearer("not-a-token"))
            #expect(forged.status == .unauthorized)
            // A session cookie is not an API token, and the other way round.
            let crossed = try await client.execute(uri: "/", method: .get, headers: [.cookie: "northwind_session=\(fixture.repToken)"])
            #expect(crossed.status == .found)
        }
    }

    @Test func signInRefusesWrongPasswordsAndSignOutEndsTheSession() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let wrong = try await BrowserSession.postSignIn(client, login: "nancy.davolio", password: "guess")
            #expect(wrong.status == .unauthorized)
            #expect(String(buffer: wrong.body).contains("That login and password do not match."))
            #expect(!wrong.headers[values: .setCookie].contains { $0.hasPrefix("northwind_session=") })

            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let home = try await client.execute(uri: "/", method: .get, headers: session.headers)
            #expect(home.status == .ok)
            #expect(String(buffer: home.body).contains("Good day, Nancy"))

            // Signing out without the page's token is refused; with it, the session ends.
            let forged = try await client.execute(
                uri: "/signout",
                method: .post,
                headers: [.cookie: session.cookie, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "_csrf=wrong")
            )
            #expect(forged.status == .forbidden)
            let out = try await session.post(client, "/signout", [])
            #expect(out.status == .found)
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            let after = try await client.execute(uri: "/", method: .get, headers: session.headers)
            #expect(after.status == .found)
        }
    }

    @Test func signInNeedsItsFormsTokenAndStopsGuessing() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // A post from another site carries no token (and cannot read or set the cookie).
            let bare = try await client.execute(
                uri: "/signin",
                method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "login=nancy.davolio&password=rep-secret-1")
            )
            #expect(bare.status == .forbidden)
            #expect(!bare.headers[values: .setCookie].contains { $0.hasPrefix("northwind_session=") })
            let forged = try await BrowserSession.postSignIn(client, login: "nancy.davolio", password: "rep-secret-1", token: "forged")
            #expect(forged.status == .forbidden)
            #expect(String(buffer: forged.body).contains("This sign-in form had expired."))

            let clock = ContinuousClock()
            let firstGuess = clock.now
            for _ in 0..<5 {
                #expect(try await BrowserSession.postSignIn(client, login: "Nancy.Davolio", password: "guess").status == .unauthorized)
            }
            // The sixth try is refused without checking, even with the right password; other logins are not held up.
            let held = try await BrowserSession.postSignIn(client, login: "nancy.davolio", password: "rep-secret-1")
            #expect(held.status == .tooManyRequests)
            // The fifteen minutes run from the first wrong guess; under load the guesses themselves can take a minute.
            let elapsed = Int((clock.now - firstGuess).components.seconds)
            let said = try #require(
                String(buffer: held.body).firstMatch(of: /Too many wrong passwords for nancy\.davolio\. Try again in (\d+) minutes/)
            )
            #expect((15 - (elapsed + 59) / 60...15).contains(Int(said.1) ?? 0), "said \(said.1) minutes after \(elapsed) s")
            _ = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
        }
    }

    @Test func signInThrottleForgetsOldFailuresAndSuccesses() {
        let throttle = SignInThrottle(limit: 2, window: .seconds(60))
        let start = ContinuousClock.now
        throttle.failed("ann", now: start)
        #expect(throttle.wait(for: "ann", now: start) == nil)
        throttle.failed("ANN", now: start + .seconds(10))
        #expect(throttle.wait(for: "ann", now: start + .seconds(10)) == .seconds(50))
        #expect(throttle.wait(for: "ann", now: start + .seconds(61)) == nil, "the first failure has left the window")
        throttle.failed("ann", now: start + .seconds(62))
        #expect(throttle.wait(for: "ann", now: start + .seconds(62)) != nil)
        throttle.succeeded("ann")
        #expect(throttle.wait(for: "ann", now: start + .seconds(62)) == nil)
    }

    @Test func managersReadReportsWithAChartAFormAndCSV() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let list = String(buffer: try await client.execute(uri: "/reports", method: .get, headers: manager.headers).body)
            #expect(list.contains("<a href=\"/reports/category-sales-for-1997\">Category Sales for 1997</a>"))
            #expect(list.contains("procedure &quot;Employee Sales by Country&quot;"))

            let dearest = try await client.execute(uri: "/reports/ten-most-expensive-products", method: .get, headers: manager.headers)
            #expect(dearest.status == .ok)
            let html = String(buffer: dearest.body)
            #expect(html.contains("<svg"))
            #expect(html.contains("<title>Côte de Blaye: 263.50</title>"))
            #expect(html.contains("<td data-label=\"UnitPrice\" class=\"num\">263.50</td>"))
            #expect(html.contains("href=\"/reports/ten-most-expensive-products/csv\""))

            let csv = try await client.execute(uri: "/reports/ten-most-expensive-products/csv", method: .get, headers: manager.headers)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(csv.headers[.contentDisposition] == "attachment; filename=\"ten-most-expensive-products.csv\"")
            #expect(String(buffer: csv.body).hasPrefix("TenMostExpensiveProducts,UnitPrice\r\nCôte de Blaye,263.50\r\n"))

            // Mistakes appear beside their fields, with what was typed kept.
            let bad = try await client.execute(
                uri: "/reports/sales-by-year?from=1997-02-30&to=1997-01-01",
                method: .get,
                headers: manager.headers
            )
            #expect(bad.status == .unprocessableContent)
            let form = String(buffer: bad.body)
            #expect(
                form.contains(
                    "<p class=\"field-error\" id=\"from-error\">Must be a date written yyyy-MM-dd, such as 1996-07-04, not &quot;1997-02-30&quot;</p>"
                )
            )
            #expect(form.contains("value=\"1997-02-30\""))
            let unknown = String(
                buffer: try await client.execute(
                    uri: "/reports/cust-order-hist?customer=NOPE",
                    method: .get,
                    headers: manager.headers
                ).body
            )
            #expect(unknown.contains("id=\"customer-error\">No customer NOPE exists.</p>"))

            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            #expect(try await client.execute(uri: "/reports/invoices", method: .get, headers: rep.headers).status == .forbidden)
            let home = String(buffer: try await client.execute(uri: "/", method: .get, headers: rep.headers).body)
            #expect(!home.contains("href=\"/reports\""))
            #expect(!home.contains("Sales this month"))
        }
    }

    /// The API pages JSON and streams every row as CSV; both agree with the report read whole.
    @Test func theReportAPIPagesJSONAndStreamsCSV() async throws {
        let fixture = try await WebFixture.make()
        let whole = try await fixture.store.backoffice.reports.run("current-product-list")
        #expect(whole.rows.count == 3)  // Chai, Côte de Blaye, Grandma's Mustard; Old Tea is discontinued
        try await fixture.test { client in
            let token = bearer(fixture.managerToken)
            var uri: String? = "/api/v1/reports/current-product-list?limit=2"
            var names: [String] = []
            var pages = 0
            while let next = uri {
                let response = try await client.execute(uri: next, method: .get, headers: token)
                #expect(response.status == .ok)
                let page = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any] ?? [:]
                names += (page["rows"] as? [[Any]] ?? []).compactMap { $0[1] as? String }
                #expect(page["complete"] as? Bool == (page["next"] == nil))
                uri = page["next"] as? String
                pages += 1
            }
            #expect(pages == 2)
            #expect(names == ["Chai", "Côte de Blaye", "Grandma's Mustard"])

            let csv = try await client.execute(uri: "/api/v1/reports/current-product-list?format=csv", method: .get, headers: token)
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            let ids = whole.rows.map { $0[0].description }
            #expect(
                String(buffer: csv.body) == "ProductID,ProductName\r\n\(ids[0]),Chai\r\n\(ids[1]),Côte de Blaye\r\n\(ids[2]),Grandma's Mustard\r\n"
            )

            // A mistake is found before the download starts, so it still gets its status and message.
            let bad = try await client.execute(
                uri: "/api/v1/reports/sales-by-year?from=1997-01-01&to=1996-01-01&format=csv",
                method: .get,
                headers: token
            )
            #expect(bad.status == .unprocessableContent)
            #expect(String(buffer: bad.body).contains("must not be before from"))
            for query in ["limit=0", "limit=10001", "offset=-1", "format=xml"] {
                let refused = try await client.execute(uri: "/api/v1/reports/current-product-list?\(query)", method: .get, headers: token)
                #expect(refused.status == .unprocessableContent, "\(query)")
            }
        }
    }

    /// Over a real connection, a download longer than the chunks the reader may run ahead arrives whole and in order.
    @Test func aLongCSVDownloadArrivesWhole() async throws {
        let store = try TemporaryStore(seed: .init(scale: 1))
        let manager = try store.count("SELECT id FROM employees WHERE title = 'Vice President, Sales' ORDER BY id LIMIT 1")
        let token = try await store.backoffice.accounts.issueAPIToken(employeeID: Int64(manager))
        let whole = try await store.backoffice.reports.run("invoices")
        let app = try await WebApp.build(backoffice: store.backoffice, options: WebOptions(port: 0))
        try await app.test(.live) { client in
            let csv = try await client.execute(uri: "/api/v1/reports/invoices?format=csv", method: .get, headers: bearer(token))
            #expect(csv.status == .ok)
            #expect(csv.body.readableBytes > 5 * 64 * 1024)
            // Expected text built here, by RFC 4180's rule, from the rows read whole.
            let expected = ([whole.columns] + whole.rows.map { $0.map(\.description) }).map { fields in
                fields.map { $0.contains(where: { ",\"\r\n".contains($0) }) ? "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : $0 }
                    .joined(separator: ",") + "\r\n"
            }.joined()
            #expect(String(buffer: csv.body) == expected)
        }
    }

    @Test func aManagersHomeIsTheDashboard() async throws {
        let fixture = try await WebFixture.make()
        let w = fixture.world
        // Today: 3 Chai at 18.00, in Beverages.
        _ = try await fixture.store.backoffice.orders.create(
            OrderDraft(
                customerCode: w.vinet.code,
                employeeID: w.nancy.id,
                lines: [.init(productID: w.chai.key, quantity: 3)]
            )
        )
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let home = String(buffer: try await client.execute(uri: "/", method: .get, headers: manager.headers).body)
            #expect(home.contains("<h2 id=\"dashboard-title\">Sales this month</h2>"))
            #expect(home.contains("<span class=\"figure\" id=\"month-sales\">54.00</span> from 1 order so far"))
            #expect(home.contains("<title>Beverages: 54.00</title>"))
            #expect(home.contains("id=\"new-orders-count\">1<"))
            #expect(!home.contains(">nil<"))
        }
    }

    @Test func picturesShowWhereTheyExistWhetherInTheRowOrInAFile() async throws {
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let small = BinaryContent(bytes: Data("GIF89a-small".utf8), contentType: "image/gif")
        let large = BinaryContent(bytes: Data(repeating: 7, count: 200 * 1024), contentType: "image/bmp")
        try await fixture.store.backoffice.catalogue.setPicture(categoryID: w.beverages.id ?? 0, small)
        try await fixture.store.backoffice.people.setPhoto(employeeID: w.nancy.id ?? 0, large)
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            func page(_ uri: String) async throws -> String {
                String(buffer: try await client.execute(uri: uri, method: .get, headers: session.headers).body)
            }
            let categories = try await page("/categories")
            #expect(categories.contains("<img src=\"/categories/\(w.beverages.id ?? 0)/picture\""))
            #expect(!categories.contains("/categories/\(w.condiments.id ?? 0)/picture"))
            #expect(try await page("/categories/\(w.beverages.id ?? 0)").contains("alt=\"Picture of Beverages\""))
            #expect(!(try await page("/categories/\(w.condiments.id ?? 0)").contains("Picture of")))
            let picture = try await client.execute(uri: "/categories/\(w.beverages.id ?? 0)/picture", method: .get, headers: session.headers)
            #expect(picture.headers[.contentType] == "image/gif")
            #expect(Data(picture.body.readableBytesView) == small.bytes)

            // Nancy's photo is large enough to live in a file beside the store.
            let employees = try await page("/employees")
            #expect(employees.contains("<img src=\"/employees/\(w.nancy.id ?? 0)/photo\""))
            #expect(!employees.contains("/employees/\(w.andrew.id ?? 0)/photo"))
            #expect(try await page("/employees/\(w.nancy.id ?? 0)").contains("alt=\"Photo of Nancy Davolio\""))
            let photo = try await client.execute(uri: "/employees/\(w.nancy.id ?? 0)/photo", method: .get, headers: session.headers)
            #expect(photo.body.readableBytes == large.bytes.count)
            #expect(try await client.execute(uri: "/employees/\(w.andrew.id ?? 0)/photo", method: .get, headers: session.headers).status == .notFound)
        }
    }

    @Test func everyPageRendersForASignedInEmployee() async throws {
        let fixture = try await WebFixture.make()
        let order = try await fixture.store.backoffice.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: fixture.world.nancy.id,
                lines: [OrderLineDraft(productID: fixture.world.chai.key, quantity: 2)]
            )
        )
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let pages: [(String, String)] = [
                ("/", "new orders"), ("/products", "Grandma&#39;s Mustard"), ("/products?q=cote", "Côte de Blaye"),
                ("/products?lowStock=1", "Low stock"), ("/products/\(fixture.world.chai.key)", "Recent stock movements"),
                ("/products/new", "New product"), ("/orders", order.order.number), ("/orders?status=shipped", "Shipped"),
                ("/orders?q=vins", order.order.number), ("/orders/\(order.order.number)", "Execute"), ("/orders/new", "Save order"),
                ("/categories", "Beverages"), ("/categories/\(fixture.world.beverages.id ?? 0)", "Chai"),
                ("/customers", "VINET"), ("/customers?q=alfreds", "ALFKI"), ("/customers/vinet", order.order.number),
                ("/employees", "Nancy Davolio"), ("/employees/\(fixture.world.nancy.id ?? 0)", "Andrew Fuller"),
                ("/reports", "/reports/ten-most-expensive-products"), ("/reports/ten-most-expensive-products", "Côte de Blaye"),
            ]
            for (uri, text) in pages {
                let response = try await client.execute(uri: uri, method: .get, headers: session.headers)
                #expect(response.status == .ok, "\(uri)")
                #expect(response.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
                let html = String(buffer: response.body)
                #expect(html.contains(text), "\(uri) should show \(text)")
                #expect(!html.contains(">nil<") && !html.contains("Optional("), "\(uri) printed an absent value")
                #expect(html.contains("Andrew Fuller"), "\(uri) should show who is signed in")
            }
            let missing = try await client.execute(uri: "/products/999999", method: .get, headers: session.headers)
            #expect(missing.status == .notFound)
            #expect(String(buffer: missing.body).contains("No product #999999 exists."))
        }
    }

    @Test func templatesEscapeWhatUsersTyped() async throws {
        let fixture = try await WebFixture.make()
        var product = fixture.world.chai
        product.name = "<script>alert('x')</script>"
        _ = try await fixture.store.backoffice.catalogue.update(product)
        var category = fixture.world.condiments
        category.name = "<b>Sauces</b>"
        _ = try await fixture.store.backoffice.records.update(category)
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let html = String(buffer: try await client.execute(uri: "/products", method: .get, headers: session.headers).body)
            #expect(!html.contains("<script>alert"))
            #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"))
            // The category filter's options are a cached fragment, rendered by a template that escapes too.
            #expect(!html.contains("<b>Sauces"))
            #expect(html.contains(">&lt;b&gt;Sauces&lt;/b&gt;</option>"))
        }
    }

    @Test func cachedAnswersFollowChangesMadeHereAndByOtherProcesses() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai
        try await fixture.test(options: WebOptions(port: 0, pollInterval: .milliseconds(20))) { client in
            func searchNames() async throws -> [String] {
                let response = try await client.execute(uri: "/api/v1/products/search?q=chai", method: .get, headers: bearer(fixture.repToken))
                #expect(response.status == .ok)
                return try #require(try json(response)["items"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            }
            #expect(try await searchNames() == ["Chai"])
            #expect(try await searchNames() == ["Chai"])

            // A change through this server is seen by the very next request.
            let patch = ByteBuffer(string: #"{"name": "Chai Masala", "version": 1}"#)
            let patched = try await client.execute(
                uri: "/api/v1/products/\(chai.key)",
                method: .patch,
                headers: bearer(fixture.managerToken),
                body: patch
            )
            #expect(patched.status == .ok)
            #expect(try await searchNames() == ["Chai Masala"])

            // Another process's change (another handle on the file) is seen once the feed polls.
            let other = try fixture.store.reopen()
            var renamed = try other.catalogue.product(id: chai.key).product
            renamed.name = "Chai Royal"
            _ = try await other.catalogue.update(renamed)
            var names = try await searchNames()
            for _ in 0..<100 where names != ["Chai Royal"] {
                try await Task.sleep(for: .milliseconds(20))
                names = try await searchNames()
            }
            #expect(names == ["Chai Royal"])

            // The category filter's cached options follow a rename the same way.
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            var beverages = fixture.world.beverages
            beverages.name = "Drinks"
            _ = try await fixture.store.backoffice.records.update(beverages)
            let html = String(buffer: try await client.execute(uri: "/products", method: .get, headers: session.headers).body)
            #expect(html.contains(">Drinks</option>"))
            #expect(!html.contains(">Beverages</option>"))
        }
    }
}
