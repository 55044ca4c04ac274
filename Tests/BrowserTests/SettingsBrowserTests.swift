import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// The settings page and live settings, on the real `northwind serve` (in the same serialized suite as the other
/// browser tests, so that one Chromium runs at a time).
extension BrowserTests {
    /// The value of the form control with `id`, as the browser holds it.
    func value(_ browser: Browser, _ id: String) async throws -> String {
        try await browser.execute("return document.getElementById(arguments[0]).value;", [id]) as? String ?? ""
    }

    @Test func theSettingsPageShowsAnOverriddenValueWithItsOriginAndAChangeAppearsInASecondBrowser() async throws {
        // Given a server whose environment sets the page size, and two managers on the settings page
        try await withLiveBrowser(environment: ["NORTHWIND_PAGES_PAGE_SIZE": "40"]) { server, driver in
            let first = try await driver.newBrowser()
            let second = try await driver.newBrowser()
            try await first.signIn(server, as: server.manager, next: "/settings")
            try await second.signIn(server, as: server.manager, next: "/settings")
            // Then the overridden value shows read-only, with where it is set
            #expect(try await first.text("#pages-pageSize-value") == "40")
            #expect(
                try await first.text("#pages-pageSize-origin") == "Set by the environment (NORTHWIND_PAGES_PAGE_SIZE); change it there."
            )
            #expect(try await first.findNow("#pages-pageSize-save").isEmpty)

            // When the first saves a low-stock margin
            try await first.find("#stock-lowStockMargin").replace(with: "5")
            try await first.find("#stock-lowStockMargin-save").click()
            try await first.waitForText("#settings-saved", "the save") { $0 == "Low-stock margin: saved." }
            // Then the second sees it without reloading
            try await waitFor("the second browser to show the new margin") { try await value(second, "stock-lowStockMargin") == "5" }
            #expect(try await second.text("#stock-lowStockMargin-origin") == "This installation's value.")

            // When the CLI changes another setting in the same store
            let cli = try await CLI.run(["settings", "set", "sync.interval", "120", "--store", server.storePath])
            #expect(cli.status == 0, "\(cli.stderr)")
            // Then both browsers show it without reloading
            for browser in [first, second] {
                try await waitFor("a browser to show the CLI's change") { try await value(browser, "sync-interval") == "120" }
            }
        }
    }

    @Test func aBadValueOnTheSettingsPageIsRefusedBesideItsField() async throws {
        // Given a manager on the settings page
        try await withLiveBrowser { server, driver in
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.manager, next: "/settings")
            // When they type a default freight with three decimals and save
            try await browser.find("#orders-defaultFreight").replace(with: "12.345")
            try await browser.find("#orders-defaultFreight-save").click()
            // Then the page names the key and the rule beside the field, and nothing is stored
            let message = try await browser.waitForText("#orders-defaultFreight-error", "the refusal") { !$0.isEmpty }
            #expect(message.hasPrefix("orders.defaultFreight must be a number with at most two decimals"))
            #expect(try await value(browser, "orders-defaultFreight") == "12.345")
            #expect(try await server.backoffice().settings.installation()["orders.defaultFreight"] == nil)
        }
    }

    @Test func raisingTheLogLevelWhileTheServerRunsChangesWhatItLogsWithinASecond() async throws {
        // Given the real server at its default log level, which does not log each request
        try await withLiveBrowser { server, _ in
            _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.url("/signin?probe=before")), timeout: .seconds(10))
            // When an operator raises the level with the CLI
            let cli = try await CLI.run(["settings", "set", "log.level", "debug", "--store", server.storePath])
            #expect(cli.status == 0, "\(cli.stderr)")
            let changed = ContinuousClock.now
            // Then a request is logged within a second
            var probe = 0
            try await waitFor("the server to log a request at debug level", timeout: .seconds(5)) {
                probe += 1
                _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.url("/signin?probe=\(probe)")), timeout: .seconds(10))
                try await Task.sleep(for: .milliseconds(50))
                return server.log.contains("probe=\(probe)")
            }
            let elapsed = ContinuousClock.now - changed
            print("log.level took effect \(elapsed) after the CLI changed it")
            #expect(elapsed < .seconds(1))
            #expect(!server.log.contains("probe=before"))
        }
    }
}
