import Foundation
import NorthwindStore
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// The quote editor on the real `northwind serve`, in Chromium.
extension BrowserTests {
    /// Adds the first product whose name starts like `name`, through the editor's product field.
    func addProduct(_ browser: Browser, _ name: String) async throws {
        try await browser.find("#add-product").replace(with: String(name.prefix(4)))
        var option = ""
        try await waitFor("the product list to offer \(name)") {
            option = try await browser.execute("return document.querySelector('#product-options option')?.value || ''") as? String ?? ""
            return option.hasPrefix(name)
        }
        try await browser.find("#add-product").replace(with: option)
        try await browser.find("#add-line").click()
    }

    /// Selects what a field holds and types over it, then leaves it with Tab: one change, as a person makes it
    /// (WebDriver's clear would fire a change of its own, to empty).
    func overwrite(_ browser: Browser, _ css: String, with text: String) async throws {
        try await browser.find(css).type("\u{E009}a\u{E000}" + text + "\u{E004}")
    }

    /// The editor's line rows, as the browser shows them.
    func lineCount(_ browser: Browser) async throws -> Int {
        try await browser.execute("return document.querySelectorAll('#quote-lines tbody tr').length") as? Int ?? -1
    }

    @Test func aQuoteDraftedInTheBrowserSurvivesClosingTheTabUndoesTwiceAndBecomesAnOrder() async throws {
        // Given a representative drafting a new quote, with autosave far off so that nothing saves by itself
        try await withLiveBrowser(environment: ["NORTHWIND_DOCUMENTS_AUTOSAVE_SECONDS": "600"]) { server, driver in
            let backoffice = try server.backoffice()
            let customer = try #require(try await backoffice.records.list(Customer.self, limit: 1).items.first?.code)
            let names = try await backoffice.catalogue.list().items.filter { !$0.product.discontinued }.prefix(2).map(\.product.name)
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.rep, next: "/quotes")
            try await browser.find("#customer").replace(with: customer)
            try await browser.find("#new-quote button[type=submit]").click()
            try await waitFor("the editor to open") { try await browser.url.contains("/quotes/") }
            let number = try #require(URL(string: try await browser.url)?.lastPathComponent)
            try await addProduct(browser, names[0])
            try await addProduct(browser, names[1])
            try await overwrite(browser, "#quote-lines tbody tr:first-child input[type=number]", with: "7")
            try await browser.waitForText("#undo", "the last step") { $0 == "Undo Change quantity of \(names[0])" }
            #expect(try await browser.text("#save-state") == "Unsaved changes")

            // When the tab is closed without saving, and the quote opened again in a new one
            let opened = try await browser.command("POST", "window/new", ["type": "tab"]) as? [String: Any]
            let tab = try #require(opened?["handle"] as? String)
            try await browser.command("DELETE", "window")
            try await browser.command("POST", "window", ["handle": tab])
            try await waitFor("the closing page's save to reach the store") {
                let quote = try await backoffice.quotes.quote(number: number)
                return quote.content.lines.map(\.quantity) == [7, 1]
            }
            try await browser.go(server.url("/quotes/\(number)"))

            // Then the work is there, with its undo history: two undos take back the quantity and the second product
            #expect(try await lineCount(browser) == 2)
            try await browser.find("#undo").click()
            try await browser.waitForText("#undo", "the step before") { $0 == "Undo Add \(names[1])" }
            try await browser.find("#undo").click()
            try await waitFor("the second line to go") { try await lineCount(browser) == 1 }
            #expect(try await browser.text("#redo") == "Redo Add \(names[1])")
            #expect(try await browser.execute("return document.querySelector('#quote-lines tbody input[type=number]').value") as? String == "1")

            // And converting saves first, then makes an order at the quoted price
            try await browser.find("#convert-button").click()
            try await waitFor("the order page") { try await browser.url.contains("/orders/") }
            let quote = try await backoffice.quotes.quote(number: number)
            let order = try await backoffice.orders.order(number: try #require(quote.orderNumber))
            #expect(order.lines.map(\.line.quantity) == [1])
            #expect(order.lines.map(\.line.unitPrice) == quote.content.lines.map(\.unitPrice))
            #expect(try await browser.consoleErrors().isEmpty)
        }
    }

    @Test func aSecondEditorSeesTheQuoteReadOnlyTakesItOverAndTheFirstIsTold() async throws {
        // Given a representative editing a quote, with autosave after a second
        try await withLiveBrowser(environment: ["NORTHWIND_DOCUMENTS_AUTOSAVE_SECONDS": "1"]) { server, driver in
            let backoffice = try server.backoffice()
            let customer = try #require(try await backoffice.records.list(Customer.self, limit: 1).items.first?.code)
            let product = try #require(try await backoffice.catalogue.list().items.first { !$0.product.discontinued }?.product.id)
            let quote = try await backoffice.quotes.create(
                QuoteContent(
                    customerCode: customer,
                    validUntil: .today.adding(days: 30),
                    lines: [try backoffice.quotes.newLine(productID: product, quantity: 3)]
                ),
                by: QuoteEditor(login: "setup", name: "Setup")
            )
            let rep = try await driver.newBrowser()
            try await rep.signIn(server, as: server.rep, next: "/quotes/\(quote.number)")
            try await overwrite(rep, "#quote-notes", with: "First call")
            try await rep.waitForText("#save-state", "the autosave") { $0 == "Saved" }

            // When a manager opens it
            let manager = try await driver.newBrowser()
            try await manager.signIn(server, as: server.manager, next: "/quotes/\(quote.number)")
            // Then they see it read-only, with who is editing it
            let notice = try await manager.text("#quote-readonly p")
            #expect(notice.hasSuffix("is editing this quote: you see it read-only."))
            #expect(try await manager.find("#quote-notes").isEnabled == false)
            #expect(try await manager.find("#quote-editor").attribute("data-state") == "editingDisabled")

            // When they take it over, and the representative changes something
            try await manager.find("#take-over").click()
            // The take-over reloads the page: an element found on the old one goes stale, so look again.
            try await waitFor("the manager's editor to be enabled") { (try? await manager.find("#quote-notes").isEnabled) ?? false }
            try await overwrite(rep, "#quote-notes", with: "Second call")
            // Then the representative is told who took it, and their page turns read-only; the manager's notes stand
            let told = try await rep.waitForText("#quote-taken", "the take-over") { !$0.isEmpty }
            #expect(told.contains("took quote \(quote.number) over; it is read-only for you now"))
            #expect(try await rep.find("#quote-notes").isEnabled == false)
            #expect(try await backoffice.quotes.quote(number: quote.number).content.notes == "First call")
        }
    }

    @Test func aSaveThatFailsKeepsTheDraftSaysWhyAndTriesAgain() async throws {
        // Given a representative editing a quote, with autosave after a second
        try await withLiveBrowser(environment: ["NORTHWIND_DOCUMENTS_AUTOSAVE_SECONDS": "1"]) { server, driver in
            let backoffice = try server.backoffice()
            let customer = try #require(try await backoffice.records.list(Customer.self, limit: 1).items.first?.code)
            let quote = try await backoffice.quotes.create(
                QuoteContent(customerCode: customer, validUntil: .today.adding(days: 30), lines: []),
                by: QuoteEditor(login: "setup", name: "Setup")
            )
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.rep, next: "/quotes/\(quote.number)")
            try await browser.find("#quote-notes")
            // When the server dies (kill -9) and they go on typing
            server.process.signal(SIGKILL)
            await server.process.exit()
            try await overwrite(browser, "#quote-notes", with: "Written while the server was gone")
            // Then the page says the save failed and that it will try again, and the draft is kept in the browser
            let said = try await browser.waitForText("#save-state", "the failed save") { $0.hasPrefix("Not saved:") }
            #expect(said.contains("Trying again in"), "\(said)")
            let state = try await browser.find("#quote-editor").attribute("data-state") ?? ""
            #expect(state.split(separator: " ").contains("savingError"), "\(state)")
            let kept = try await browser.execute("return localStorage.getItem(arguments[0]) || ''", ["quote-draft:" + quote.number]) as? String ?? ""
            #expect(kept.contains("Written while the server was gone"))
        }
    }

    @Test func aVersionSavedOnThePageCanBeRestoredAfterLaterChanges() async throws {
        // Given a representative editing a quote, with autosave after a second
        try await withLiveBrowser(environment: ["NORTHWIND_DOCUMENTS_AUTOSAVE_SECONDS": "1"]) { server, driver in
            let backoffice = try server.backoffice()
            let customer = try #require(try await backoffice.records.list(Customer.self, limit: 1).items.first?.code)
            let quote = try await backoffice.quotes.create(
                QuoteContent(customerCode: customer, validUntil: .today.adding(days: 30), notes: "As sent", lines: []),
                by: QuoteEditor(login: "setup", name: "Setup")
            )
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.rep, next: "/quotes/\(quote.number)")
            // When they save a version named "Sent", change the notes, then restore "Sent"
            try await browser.find("#version-label").type("Sent")
            try await browser.find("#save-version button[type=submit]").click()
            try await browser.waitForText("#versions tbody tr:first-child td:nth-child(2)", "the new version") { $0 == "Sent" }
            try await overwrite(browser, "#quote-notes", with: "Changed since")
            try await browser.waitForText("#save-state", "the autosave") { $0 == "Saved" }
            try await browser.find("#versions tbody tr:first-child button").click()
            // Then the notes are as sent again, and the restore is a version of its own, after "Sent" and "Created"
            try await browser.waitForText("#versions tbody tr:first-child td:nth-child(2)", "the restore") { $0.hasPrefix("Restored “Sent”") }
            #expect(try await value(browser, "quote-notes") == "As sent")
            let labels =
                try await browser.execute("return [...document.querySelectorAll('#versions tbody tr td:nth-child(2)')].map(c => c.textContent)")
                as? [String]
            #expect(labels?.dropFirst() == ["Sent", "Created"])
        }
    }

    @Test func aFieldChangedAtTwoInstallationsShowsBothSidesAndEitherCanBeChosen() async throws {
        // Given the server's store as head office, and a London shop that has its quote
        try await withLiveBrowser { server, driver in
            let office = try server.backoffice()
            try await office.syncEngine.join(SyncRelay.membership("HQ", role: "hq"), containerHasData: false)
            let customer = try #require(try await office.records.list(Customer.self, limit: 1).items.first?.code)
            let quote = try await office.quotes.create(
                QuoteContent(customerCode: customer, validUntil: .today.adding(days: 30), notes: "Draft", lines: []),
                by: QuoteEditor(login: "setup", name: "Setup")
            )
            let london = try TemporaryStore()
            try await london.backoffice.syncEngine.join(SyncRelay.membership("LON"), containerHasData: true)
            try await SyncRelay.carry(from: office, to: london.backoffice)
            // When both change the notes, head office first, and London's change arrives
            let hq = QuoteEditor(login: "hq.editor", name: "HQ editor")
            _ = try await office.quotes.open(number: quote.number, editor: hq)
            var here = quote.content
            here.notes = "Deliver on Monday"
            _ = try await office.quotes.saveDraft(number: quote.number, base: quote.content, content: here, history: QuoteHistory(), editor: hq)
            try await office.quotes.close(number: quote.number, editor: hq)
            try await Task.sleep(for: .milliseconds(20))
            let lon = QuoteEditor(login: "lon.editor", name: "London editor")
            let there = try await london.backoffice.quotes.open(number: quote.number, editor: lon).quote
            var away = there.content
            away.notes = "Deliver on Friday"
            _ = try await london.backoffice.quotes.saveDraft(
                number: quote.number,
                base: there.content,
                content: away,
                history: QuoteHistory(),
                editor: lon
            )
            try await SyncRelay.carry(from: london.backoffice, to: office)
            // Then the page shows the quote in conflict with both values
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.rep, next: "/quotes/\(quote.number)")
            let conflict = try await browser.text("#quote-conflicts form.conflict p")
            #expect(conflict.contains("Deliver on Monday") && conflict.contains("Deliver on Friday"), "\(conflict)")
            let standing = try await value(browser, "quote-notes")
            // When they choose the value that was set aside
            try await browser.find("#quote-conflicts .use-other").click()
            // Then it stands, and the quote is no longer in conflict
            try await waitFor("the conflict to be resolved") { try await browser.findNow("#quote-conflicts").isEmpty }
            let chosen = try await value(browser, "quote-notes")
            #expect(chosen != standing && ["Deliver on Monday", "Deliver on Friday"].contains(chosen), "\(chosen)")
        }
    }
}
