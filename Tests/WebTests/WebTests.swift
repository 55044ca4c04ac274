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

            for _ in 0..<5 {
                #expect(try await BrowserSession.postSignIn(client, login: "Nancy.Davolio", password: "guess").status == .unauthorized)
            }
            // The sixth try is refused without checking, even with the right password; other logins are not held up.
            let held = try await BrowserSession.postSignIn(client, login: "nancy.davolio", password: "rep-secret-1")
            #expect(held.status == .tooManyRequests)
            #expect(String(buffer: held.body).contains("Too many wrong passwords for nancy.davolio. Try again in 15 minutes"))
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

    @Test func onlyManagersChangeTheCatalogue() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai.key
        try await fixture.test { client in
            let patch = ByteBuffer(string: #"{"unitPrice": "19.00", "version": 1}"#)
            let refused = try await client.execute(uri: "/api/v1/products/\(chai)", method: .patch, headers: bearer(fixture.repToken), body: patch)
            #expect(refused.status == .forbidden)
            #expect((try json(refused)["detail"] as? String)?.contains("Only managers") == true)
            let category = try await client.execute(
                uri: "/api/v1/categories",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(string: #"{"name": "Snacks"}"#)
            )
            #expect(category.status == .forbidden)

            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let page = try await session.post(client, "/products/\(chai)", [("version", "1"), ("name", "Chai"), ("unitPrice", "1.00")])
            #expect(page.status == .forbidden)
            let productPage = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            #expect(!productPage.contains("<h2>Edit</h2>"))

            let allowed = try await client.execute(
                uri: "/api/v1/products/\(chai)",
                method: .patch,
                headers: bearer(fixture.managerToken),
                body: patch
            )
            #expect(allowed.status == .ok)
            #expect(try json(allowed)["unitPrice"] as? String == "19.00")
            #expect(try json(allowed)["version"] as? Int == 2)
            let created = try await client.execute(
                uri: "/api/v1/categories",
                method: .post,
                headers: bearer(fixture.managerToken),
                body: ByteBuffer(string: #"{"name": "Snacks"}"#)
            )
            #expect(created.status == .created)
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitPrice == Money(cents: 1900))
    }

    @Test func productFormShowsErrorsBesideFieldsAndRefusesStaleSaves() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let fields: [(String, String)] = [
                ("version", "1"), ("name", "Chai"), ("unitPrice", "abc"), ("reorderLevel", "x"),
                ("categoryID", String(fixture.world.beverages.id ?? 0)),
            ]
            let invalid = try await session.post(client, "/products/\(chai.key)", fields)
            #expect(invalid.status == .unprocessableContent)
            let html = String(buffer: invalid.body)
            #expect(html.contains(#"<p class="field-error" id="unitPrice-error">Must be an amount such as 18.00, not &#39;abc&#39;</p>"#))
            #expect(html.contains(#"id="reorderLevel-error">Must be a whole number"#))
            #expect(html.contains(#"value="abc""#), "what was typed is kept")

            // Someone else saves first; this page's save is refused and shows their change.
            var theirs = chai
            theirs.unitPrice = Money(cents: 2100)
            _ = try await fixture.store.backoffice.catalogue.update(theirs)
            let stale = try await session.post(
                client,
                "/products/\(chai.key)",
                [("version", "1"), ("name", "Chai"), ("unitPrice", "19.50"), ("reorderLevel", "20")]
            )
            #expect(stale.status == .conflict)
            #expect(String(buffer: stale.body).contains("unit price is now 21.00"))

            let fresh = try await session.post(
                client,
                "/products/\(chai.key)",
                [
                    ("version", "2"), ("name", "Chai"), ("unitPrice", "19.50"), ("reorderLevel", "20"),
                    ("categoryID", String(fixture.world.beverages.id ?? 0)),
                ]
            )
            #expect(fresh.status == .ok)
            #expect(String(buffer: fresh.body).contains(#"id="current-price">19.50"#))
        }
        let saved = try fixture.store.backoffice.catalogue.product(id: chai.key).product
        #expect(saved.unitPrice == Money(cents: 1950))
        #expect(saved.reorderLevel == 20)
        #expect(saved.version == 3)
    }

    @Test func executingAnOrderFromItsPageShipsItAndDropsStock() async throws {
        let fixture = try await WebFixture.make()
        let b = fixture.store.backoffice
        let w = fixture.world
        let good = try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                lines: [OrderLineDraft(productID: w.chai.key, quantity: 12)]
            )
        )
        let short = try await b.orders.create(
            OrderDraft(
                customerCode: "ALFKI",
                employeeID: w.nancy.id,
                lines: [OrderLineDraft(productID: w.mustard.key, quantity: 8)]
            )
        )
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let shortPage = String(
                buffer: try await client.execute(uri: "/orders/\(short.order.number)", method: .get, headers: session.headers).body
            )
            #expect(shortPage.contains(#"id="execute" disabled"#))
            #expect(shortPage.contains("Cannot execute: Grandma&#39;s Mustard is short by 3."))
            let refused = try await session.post(client, "/orders/\(short.order.number)/execute", [])
            #expect(refused.status == .conflict)
            let api = try await client.execute(uri: "/api/v1/orders/\(short.order.number)/execute", method: .post, headers: bearer(fixture.repToken))
            #expect(api.status == .conflict)
            let shortages = try #require(try json(api)["shortages"] as? [[String: Any]])
            #expect(shortages.first?["short"] as? Int == 3)

            let executed = try await session.post(client, "/orders/\(good.order.number)/execute", [])
            #expect(executed.status == .seeOther)
            #expect(executed.headers[.location] == "/orders/\(good.order.number)")
            let page = String(buffer: try await client.execute(uri: "/orders/\(good.order.number)", method: .get, headers: session.headers).body)
            #expect(page.contains(#"id="order-status">Shipped"#))
            let product = String(buffer: try await client.execute(uri: "/products/\(w.chai.key)", method: .get, headers: session.headers).body)
            #expect(product.contains(#"id="current-stock">38"#))

            let cancelled = try await session.post(client, "/orders/\(short.order.number)/cancel", [])
            #expect(cancelled.status == .seeOther)
            let again = try await session.post(client, "/orders/\(short.order.number)/cancel", [])
            #expect(again.status == .conflict)
        }
        #expect(try await b.orders.order(number: good.order.number).order.status == .shipped)
        #expect(try await b.orders.order(number: short.order.number).order.status == .cancelled)
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 5)
    }

    @Test func thePhoneOrderFormCreatesAnOrderOrShowsWhatIsWrong() async throws {
        let fixture = try await WebFixture.make()
        let w = fixture.world
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let form = String(buffer: try await client.execute(uri: "/orders/new?customer=VINET", method: .get, headers: session.headers).body)
            #expect(form.contains(#"<option value="\#(w.nancy.id ?? 0)" selected>Nancy Davolio</option>"#), "defaults to whoever is signed in")

            let bad = try await session.post(
                client,
                "/orders",
                [
                    ("customer", "NOBODY"), ("employeeID", String(w.nancy.id ?? 0)),
                    ("product", ""), ("productID", String(w.chai.key)), ("quantity", "0"), ("discount", "0"),
                ]
            )
            #expect(bad.status == .unprocessableContent)
            #expect(String(buffer: bad.body).contains("The order was not saved"))

            let good = try await session.post(
                client,
                "/orders",
                [
                    ("customer", "VINET"), ("employeeID", String(w.nancy.id ?? 0)), ("requiredDate", "2030-01-31"),
                    ("shipVia", String(w.shipper.id ?? 0)), ("freight", "12.50"),
                    ("product", "Chai (#\(w.chai.key))"), ("productID", String(w.chai.key)), ("quantity", "3"), ("discount", "10"),
                    ("product", ""), ("productID", ""), ("quantity", "1"), ("discount", "0"),
                    ("product", String(w.cote.key)), ("productID", ""), ("quantity", "1"), ("discount", ""),
                ]
            )
            #expect(good.status == .seeOther)
            let location = try #require(good.headers[.location])
            let number = String(location.dropFirst("/orders/".count))
            let detail = try await fixture.store.backoffice.orders.order(number: number)
            #expect(detail.customer.code == "VINET")
            #expect(detail.order.employeeID == w.nancy.id)
            #expect(detail.order.freight == Money(cents: 1250))
            #expect(detail.lines.map(\.line.quantity) == [3, 1])
            // 3 × 18.00 × 0.9 = 48.60, plus 263.50
            #expect(detail.subtotal == Money(cents: 4860 + 26350))
        }
    }

    @Test func apiListsPageOnByCursor() async throws {
        // Given four products
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client reads them three at a time, by price
            let first = try json(
                try await client.execute(uri: "/api/v1/products?limit=3&sort=price", method: .get, headers: bearer(fixture.repToken))
            )
            let cursor = try #require(first["nextCursor"] as? String)
            let second = try json(
                try await client.execute(
                    uri: "/api/v1/products?limit=3&sort=price&cursor=\(cursor)",
                    method: .get,
                    headers: bearer(fixture.repToken)
                )
            )
            // Then the first page has three in price order and the total, and the second the last one and no cursor
            #expect(first["total"] as? Int == 4)
            #expect((first["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Old Tea", "Chai", "Grandma's Mustard"])
            #expect((second["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Côte de Blaye"])
            #expect(second["nextCursor"] == nil)
        }
    }

    @Test func apiSearchIgnoresCaseAndAccents() async throws {
        // Given "Côte de Blaye"
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client searches for "COTE"
            let search = try json(try await client.execute(uri: "/api/v1/products/search?q=COTE", method: .get, headers: bearer(fixture.repToken)))
            // Then it is found
            #expect((search["items"] as? [[String: Any]])?.first?["name"] as? String == "Côte de Blaye")
        }
    }

    @Test func apiOrderTakesTheSignedInEmployeeAndExactTotals() async throws {
        // Given Nancy's API token
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When she posts an order without naming an employee: 2 × 18.00 less 5%, freight 3.20
            let order = try await client.execute(
                uri: "/api/v1/orders",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(
                    string: """
                        {"customerCode": "alfki", "requiredDate": "2030-02-01", "freight": "3.20",
                         "lines": [{"productID": \(fixture.world.chai.key), "quantity": 2, "discount": 0.05}]}
                        """
                )
            )
            // Then it is created as hers, with the subtotal and total to the cent, as decimal strings
            #expect(order.status == .created)
            let body = try json(order)
            #expect(body["employeeID"] as? Int64 == fixture.world.nancy.id)
            #expect(body["subtotal"] as? String == "34.20")
            #expect(body["total"] as? String == "37.40")
        }
    }

    @Test func apiCustomerCreatedIsFoundByTheLookup() async throws {
        // Given a sales representative's token
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When she adds a customer
            let customer = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(string: #"{"code": "NEWCO", "companyName": "New Company"}"#)
            )
            // Then it is created, and the phone-order lookup finds it
            #expect(customer.status == .created)
            let found = try json(try await client.execute(uri: "/api/v1/customers?q=new", method: .get, headers: bearer(fixture.repToken)))
            #expect((found["items"] as? [[String: Any]])?.first?["code"] as? String == "NEWCO")
        }
    }

    @Test func badInputGetsProblemDetailsNeverA500() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai.key
        try await fixture.test { client in
            let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status)] = [
                (.get, "/api/v1/products/999999", nil, .notFound),
                (.get, "/api/v1/products/abc", nil, .notFound),
                (.get, "/api/v1/products?limit=0", nil, .unprocessableContent),
                (.get, "/api/v1/products?limit=ten", nil, .unprocessableContent),
                (.get, "/api/v1/products?sort=colour", nil, .unprocessableContent),
                (.get, "/api/v1/products?lowStock=maybe", nil, .unprocessableContent),
                (.get, "/api/v1/products/search", nil, .unprocessableContent),
                (.get, "/api/v1/orders?status=lost", nil, .unprocessableContent),
                (.get, "/api/v1/orders/NOPE-1", nil, .notFound),
                (.get, "/api/v1/customers/ZZZZZ", nil, .notFound),
                (.post, "/api/v1/orders", "{not json", .badRequest),
                (.post, "/api/v1/orders", #"{"customerCode": "VINET"}"#, .badRequest),
                (.post, "/api/v1/orders", #"{"customerCode": "VINET", "lines": []}"#, .unprocessableContent),
                (.post, "/api/v1/orders", #"{"customerCode": "NOBODY", "lines": [{"productID": 1, "quantity": 1}]}"#, .notFound),
                (
                    .post, "/api/v1/orders", #"{"customerCode": "VINET", "requiredDate": "2030-02-30", "lines": [{"productID": 1, "quantity": 1}]}"#,
                    .unprocessableContent
                ),
                (.patch, "/api/v1/products/\(chai)", #"{"unitPrice": "1.001", "version": 1}"#, .unprocessableContent),
                (.patch, "/api/v1/products/\(chai)", #"{"unitPrice": "2.00"}"#, .unprocessableContent),
                (.patch, "/api/v1/products/\(chai)", #"{"unitsInStock": 999, "version": 1}"#, .unprocessableContent),
                (.patch, "/api/v1/products/\(chai)", #"{"name": "Chai", "version": 7}"#, .conflict),
                (.patch, "/api/v1/categories/\(fixture.world.beverages.id ?? 0)", #"{"colour": "red", "version": 1}"#, .unprocessableContent),
                (.patch, "/api/v1/categories/\(fixture.world.beverages.id ?? 0)", "[1, 2]", .badRequest),
                (.delete, "/api/v1/categories/\(fixture.world.beverages.id ?? 0)", nil, .conflict),
                (.post, "/api/v1/orders/NOPE-1/execute", nil, .notFound),
            ]
            for (method, uri, body, status) in cases {
                let response = try await client.execute(
                    uri: uri,
                    method: method,
                    headers: bearer(fixture.managerToken),
                    body: body.map { ByteBuffer(string: $0) }
                )
                #expect(response.status == status, "\(method) \(uri) \(body ?? "")")
                #expect(response.headers[.contentType] == "application/problem+json", "\(method) \(uri)")
                let problem = try json(response)
                #expect(problem["status"] as? Int == Int(status.code))
                #expect((problem["detail"] as? String)?.isEmpty == false)
            }
        }
        let chaiNow = try fixture.store.backoffice.catalogue.product(id: chai).product
        #expect(chaiNow.version == 1, "no refused request changed anything")
        #expect(chaiNow.unitsInStock == 50)
    }

    @Test func sessionRequestsToTheAPINeedTheCSRFHeader() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let body = ByteBuffer(string: #"{"code": "CSRF1", "companyName": "Forged"}"#)
            let forged = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: [.cookie: session.cookie, .contentType: "application/json"],
                body: body
            )
            #expect(forged.status == .forbidden)
            let genuine = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: [
                    .cookie: session.cookie, .contentType: "application/json",
                    HTTPField.Name("X-CSRF-Token")!: session.csrf,
                ],
                body: body
            )
            #expect(genuine.status == .created)
            let me = try json(try await client.execute(uri: "/api/v1/me", method: .get, headers: session.headers))
            #expect(me["login"] as? String == "nancy.davolio")
            #expect(me["isManager"] as? Bool == false)
        }
    }

    @Test func managerTitlesAreConfigurable() async throws {
        let policy = AccessPolicy(managerTitles: ["Sales Representative"])
        let world = try await World.make(TemporaryStore().backoffice)
        #expect(policy.isManager(world.nancy))
        #expect(!policy.isManager(world.andrew))
        #expect(AccessPolicy().isManager(world.andrew))
    }
}

@Suite("Accounts") struct AccountTests {
    @Test func passwordsAreHashedAndLoginsUnique() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        #expect(
            await northwindError { _ = try await b.accounts.setPassword(employeeID: w.nancy.id ?? 0, password: "short", cost: 4) }
                == .invalid("password", "A password needs at least 8 characters.")
        )
        let login = try await b.accounts.setPassword(employeeID: w.nancy.id ?? 0, password: "a long secret", cost: 4)
        #expect(login == "nancy.davolio")
        let stored = try await store.store.pool.read { db in try String.fetchOne(db, sql: "SELECT passwordHash FROM credentials") }
        #expect(stored?.hasPrefix("$2b$04$") == true)
        #expect(stored?.contains("a long secret") == false)
        #expect(
            await northwindError {
                _ = try await b.accounts.setPassword(
                    employeeID: w.andrew.id ?? 0,
                    password: "another secret",
                    login: "NANCY.davolio",
                    cost: 4
                )
            }
                == .invalid("login", "The login NANCY.davolio belongs to employee \(w.nancy.id ?? 0).")
        )
        #expect(
            await northwindError { _ = try await b.accounts.signIn(login: "nancy.davolio", password: "wrong one") }
                == .invalid("password", "That login and password do not match.")
        )
        let (token, signedIn) = try await b.accounts.signIn(login: "Nancy.Davolio", password: "a long secret")
        #expect(signedIn.employee.id == w.nancy.id)
        #expect(try b.accounts.authenticate(token: token, kind: .session)?.employee.id == w.nancy.id)
        #expect(try b.accounts.authenticate(token: token, kind: .api) == nil)
        // A new password ends existing sessions.
        _ = try await b.accounts.setPassword(employeeID: w.nancy.id ?? 0, password: "a newer secret", cost: 4)
        #expect(try b.accounts.authenticate(token: token) == nil)
        let tokenCount = try store.count("SELECT count(*) FROM access_tokens WHERE tokenHash = ?", [token])
        #expect(tokenCount == 0, "only hashes of tokens are stored")
    }

    @Test func demoCredentialsAreMadeOnceForAManagerAndARep() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let demo = try await b.accounts.provisionDemoCredentials(cost: 4)
        #expect(demo.map(\.login) == ["andrew.fuller", "nancy.davolio"])
        _ = try await b.accounts.signIn(login: demo[0].login, password: demo[0].password)
        #expect(try await b.accounts.provisionDemoCredentials(cost: 4).isEmpty)
        #expect(w.andrew.title == "Vice President, Sales")
    }
}

@Suite("Change feed") struct ChangeFeedTests {
    @Test func reportsChangesFromThisProcessAndFromAnotherConnection() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let feed = try ChangeFeed(store: store.store, pollInterval: .milliseconds(50))
        var changes = feed.subscribe().makeAsyncIterator()
        #expect(feed.subscriberCount == 1)

        _ = try await store.backoffice.stock.receive(productID: w.chai.key, quantity: 5)
        let local = try #require(await changes.next())
        #expect(local.tables.contains("products"))
        #expect(local.tables.contains("stock_movements"))
        #expect(local.recordIDs.contains(w.chai.recordID))

        // Another handle on the file stands in for the CLI in another process: GRDB cannot see its commits.
        let other = try store.reopen()
        var customer = w.vinet
        customer.city = "Paris"
        _ = try await other.records.update(customer)
        let remote = try #require(await changes.next())
        #expect(remote.tables == ["customers"])
        #expect(remote.recordIDs == [w.vinet.recordID])
        #expect(remote.seq > local.seq)
        feed.close()
        #expect(await changes.next() == nil)
    }
}
