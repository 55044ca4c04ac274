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

extension WebFixture {
    /// Runs `body` against the app with `settings` over this fixture's store.
    func test(settings: SettingsSources, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let resolved = try await Settings(sources: settings, backoffice: store.backoffice)
        let app = try await WebApp.build(backoffice: store.backoffice, options: WebOptions(port: 0), settings: resolved)
        try await app.test(.router, body)
    }
}

/// The settings page through the real router: made from the catalogue, checked on every save, per person.
@Suite("Settings page")
struct SettingsPageTests {
    func page(_ client: any TestClientProtocol, _ session: BrowserSession) async throws -> String {
        let response = try await client.execute(uri: "/settings", method: .get, headers: session.headers)
        #expect(response.status == .ok)
        return String(buffer: response.body)
    }

    @Test func aBadValueIsRefusedBesideItsFieldNamingTheKeyAndTheRule() async throws {
        // Given a manager on the settings page
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When they save a negative low-stock margin
            let response = try await manager.post(client, "/settings", [("key", "stock.lowStockMargin"), ("value", "-3")])
            // Then the page says which key broke which rule, keeps what was typed, and stores nothing
            #expect(response.status == .unprocessableContent)
            let html = String(buffer: response.body)
            #expect(html.contains(#"id="stock-lowStockMargin-error" role="alert">stock.lowStockMargin must be at least 0<"#))
            #expect(html.contains(#"value="-3""#))
            #expect(try await fixture.store.backoffice.settings.installation().isEmpty)
        }
    }

    @Test func aSavedValueShowsAsThisInstallationsAndResetBringsBackTheDefault() async throws {
        // Given a manager who saves a page size
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let saved = try await manager.post(client, "/settings", [("key", "pages.pageSize"), ("value", "40")])
            #expect(saved.status == .ok)
            #expect(String(buffer: saved.body).contains(#"id="pages-pageSize-origin">This installation&#39;s value.<"#))
            #expect(try await fixture.store.backoffice.settings.installation()["pages.pageSize"]?.changedBy == "andrew.fuller")
            // When they reset it
            let reset = try await manager.post(client, "/settings/reset", [("key", "pages.pageSize")])
            // Then the factory default stands again, and nothing is stored
            let html = String(buffer: reset.body)
            #expect(html.contains("Rows per page: reset to its default, 25."))
            #expect(html.contains(#"id="pages-pageSize-origin">The factory default.<"#))
            #expect(try await fixture.store.backoffice.settings.installation()["pages.pageSize"] == nil)
        }
    }

    @Test func aValueSetAboveTheStoreShowsReadOnlyWithItsOrigin() async throws {
        // Given a server whose environment sets the page size
        let fixture = try await WebFixture.make()
        try await fixture.test(settings: SettingsSources(environment: ["NORTHWIND_PAGES_PAGE_SIZE": "40"])) { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When a manager opens the settings page
            let html = try await page(client, manager)
            // Then the page size shows without a form, saying where it is set
            let field = try #require(html.firstMatch(of: /<div class="setting" id="setting-pages-pageSize"[\s\S]*?<p class="hint">/)?.0)
            #expect(field.contains(#"id="pages-pageSize-value">40<"#))
            #expect(field.contains("Set by the environment (NORTHWIND_PAGES_PAGE_SIZE); change it there."))
            #expect(!field.contains("<form"))
        }
    }

    @Test func aRepresentativeKeepsTheirOwnSettingsButNotTheInstallations() async throws {
        // Given a sales representative, who is no manager
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When they open the page, change their own density and try the installation's page size
            let html = try await page(client, rep)
            let own = try await rep.post(client, "/settings", [("key", "display.density"), ("value", "compact")])
            let installation = try await rep.post(client, "/settings", [("key", "pages.pageSize"), ("value", "40")])
            // Then they see only their own group, their choice is theirs alone, and the installation's is refused
            #expect(html.contains(#"id="group-display""#) && !html.contains(#"id="group-server""#))
            #expect(own.status == .ok)
            #expect(String(buffer: own.body).contains(#"<body class="density-compact""#))
            #expect(try await fixture.store.backoffice.settings.user(login: "nancy.davolio")["display.density"]?.value == "compact")
            #expect(try await fixture.store.backoffice.settings.user(login: "andrew.fuller").isEmpty)
            #expect(installation.status == .forbidden)
            #expect(try await fixture.store.backoffice.settings.installation().isEmpty)
        }
    }

    @Test func thePageSizeSettingDecidesHowManyRowsAListShows() async throws {
        // Given twelve more customers and a page size of 10
        let fixture = try await WebFixture.make()
        for letter in "ABCDEFGHIJKL" {
            _ = try await fixture.store.backoffice.records.create(Customer(code: "ZZZZ\(letter)", companyName: "Customer \(letter)"))
        }
        try await fixture.store.backoffice.settings.set("pages.pageSize", "10")
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When the customer list opens
            let response = try await client.execute(uri: "/customers", method: .get, headers: rep.headers)
            // Then it shows ten rows and a next page
            let html = String(buffer: response.body)
            #expect(html.matches(of: /<a href="\/customers\/[A-Z]{5}">/).count == 10)
            #expect(html.contains("page=2"))
        }
    }

    @Test func theSessionLifetimeSettingDecidesHowLongASignInLasts() async throws {
        // Given sessions that last two hours
        let fixture = try await WebFixture.make()
        try await fixture.store.backoffice.settings.set("session.lifetimeHours", "2")
        try await fixture.test { client in
            // When someone signs in
            let response = try await BrowserSession.postSignIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // Then the cookie and the stored session both end in two hours
            let cookie = try #require(response.headers[values: .setCookie].first { $0.hasPrefix("northwind_session=") })
            #expect(cookie.contains("Max-Age=7200"))
            let expires = try await fixture.store.backoffice.read { db in
                try Timestamp.fetchOne(db, sql: "SELECT max(expiresAt) FROM access_tokens WHERE kind = 'session'")
            }
            let hours = Double(try #require(expires).milliseconds - Timestamp.now.milliseconds) / 3_600_000
            #expect((1.9...2.0).contains(hours), "\(hours) hours")
        }
    }

    @Test func theManagerTitlesSettingDecidesWhoIsAManagerWithoutARestart() async throws {
        // Given a running app where a representative may not read reports
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let before = try await client.execute(uri: "/reports", method: .get, headers: rep.headers)
            #expect(before.status == .forbidden)
            // When a manager adds the representatives' title on the settings page
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let saved = try await manager.post(
                client,
                "/settings",
                [("key", "session.managerTitles"), ("value", "Vice President, Sales; Sales Representative")]
            )
            #expect(saved.status == .ok)
            // Then the representative reads reports at once
            let after = try await client.execute(uri: "/reports", method: .get, headers: rep.headers)
            #expect(after.status == .ok)
        }
    }

    @Test func theManagerTitlesSettingAppliesToTheAPIWithoutARestart() async throws {
        // Given a representative's API token, refused the reports
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let before = try await client.execute(uri: "/api/v1/reports", method: .get, headers: bearer(fixture.repToken))
            #expect(before.status == .forbidden)
            // When a manager adds the representatives' title on the settings page
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let saved = try await manager.post(
                client,
                "/settings",
                [("key", "session.managerTitles"), ("value", "Vice President, Sales; Sales Representative")]
            )
            #expect(saved.status == .ok)
            // Then the same token reads them
            let after = try await client.execute(uri: "/api/v1/reports", method: .get, headers: bearer(fixture.repToken))
            #expect(after.status == .ok)
        }
    }

    @Test func signingInWithNowhereToGoBackToLandsOnTheChosenStartPage() async throws {
        // Given a representative who starts on the product list
        let fixture = try await WebFixture.make()
        try await fixture.store.backoffice.settings.set("display.startPage", "products", user: "nancy.davolio")
        try await fixture.test { client in
            // When they sign in from the bare sign-in page
            let response = try await BrowserSession.postSignIn(client, login: "nancy.davolio", password: "rep-secret-1", next: nil)
            // Then they land on the products
            #expect(response.status == .found)
            #expect(response.headers[.location] == "/products")
        }
    }

    @Test func aNewOrderStartsWithTheShopsDefaultShipperAndFreight() async throws {
        // Given a shop whose orders go with its one shipper and 12.50 freight by default
        let fixture = try await WebFixture.make()
        let shipper = try #require(fixture.world.shipper.id)
        try await fixture.store.backoffice.settings.set("orders.defaultShipper", String(shipper))
        try await fixture.store.backoffice.settings.set("orders.defaultFreight", "12.5")
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When a representative opens a new order
            let response = try await client.execute(uri: "/orders/new", method: .get, headers: rep.headers)
            // Then the shipper is chosen and the freight filled in
            let html = String(buffer: response.body)
            #expect(html.contains(#"<option value="\#(shipper)" selected>"#))
            #expect(html.contains(#"id="freight" name="freight" inputmode="decimal" value="12.50""#))
        }
    }
}

/// `display.numberFormat` on the pages its owner reads.
@Suite("Number format")
struct NumberFormatTests {
    @Test(arguments: [("en", "1,234.56"), ("de", "1.234,56"), ("fr", "1\u{202F}234,56"), ("ch", "1'234.56")])
    func eachFormatWritesAThousandsAmountItsWay(choice: String, expected: String) {
        // Given an amount over a thousand, when a format writes it, then it groups and marks decimals its way
        #expect(NumberFormat(choice).money(Money(cents: 123_456)) == expected)
    }

    @Test func smallAndNegativeAmountsKeepTheirSignAndCents() {
        #expect(NumberFormat("de").money(Money(cents: -5)) == "-0,05")
        #expect(NumberFormat("en").money(Money(cents: -123_456_789)) == "-1,234,567.89")
    }

    @Test func aRepresentativeReadsPricesInTheirOwnFormat() async throws {
        // Given a product at 1,234.56 and a representative who reads German numbers
        let fixture = try await WebFixture.make()
        var chai = fixture.world.chai
        chai.unitPrice = Money(cents: 123_456)
        _ = try await fixture.store.backoffice.catalogue.update(chai)
        try await fixture.store.backoffice.settings.set("display.numberFormat", "de", user: "nancy.davolio")
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When each opens the product list
            let theirs = String(buffer: try await client.execute(uri: "/products", method: .get, headers: rep.headers).body)
            let his = String(buffer: try await client.execute(uri: "/products", method: .get, headers: manager.headers).body)
            // Then each reads the price their way
            #expect(theirs.contains("1.234,56"))
            #expect(his.contains("1,234.56"))
        }
    }
}

extension SettingsPageTests {
    @Test func aSecretIsWriteOnly() async throws {
        // Given a manager who saves an enrolment token on the settings page
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let saved = try await manager.post(client, "/settings", [("key", "sync.enrolmentToken"), ("value", "s3cret-token-42")])
            // When the page is shown again, and its blank field is saved
            let page = try await page(client, manager)
            let blank = try await manager.post(client, "/settings", [("key", "sync.enrolmentToken"), ("value", "")])
            // Then the token is stored but never sent back, its field is a password field, and a blank save keeps it
            #expect(try await fixture.store.backoffice.settings.installation()["sync.enrolmentToken"]?.value == "s3cret-token-42")
            for html in [String(buffer: saved.body), page, String(buffer: blank.body)] { #expect(!html.contains("s3cret-token-42")) }
            #expect(page.contains(#"<input type="password" id="sync-enrolmentToken" name="value" autocomplete="new-password" placeholder="(set)">"#))
            #expect(String(buffer: blank.body).contains("Enrolment token: unchanged."))
            #expect(try await fixture.store.backoffice.settings.installation()["sync.enrolmentToken"]?.value == "s3cret-token-42")
        }
    }
}
