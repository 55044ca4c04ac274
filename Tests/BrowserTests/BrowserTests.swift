import Foundation
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// The shop floor in a real headless Chromium against the real `northwind serve` on a fresh demo store.
@Suite("End to end, in a browser", .serialized, .enabled(if: BrowserSupport.enabled, Comment(rawValue: BrowserSupport.skipMessage)))
struct BrowserTests {
    /// The number of the first order on the New tab whose badge says `badge` ("ok" or "low").
    func newOrder(_ browser: Browser, _ server: LiveServer, badge: String) async throws -> String {
        try await browser.go(server.url("/orders"))
        let link = try await browser.find("tr[data-order]:has(.badge.\(badge)) a")
        return try await link.text
    }

    @Test func executeASuppliableOrderAndSeeTheStockDrop() async throws {
        try await withLiveBrowser { server, driver in
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.rep, next: "/orders")
            let number = try await newOrder(browser, server, badge: "ok")
            try await browser.find("tr[data-order='\(number)'] a").click()
            try await browser.waitForText("h1", "the order's number") { $0.contains(number) }

            // Every line is in stock, so Execute is enabled.
            let availability = try await browser.findNow(".availability")
            #expect(!availability.isEmpty)
            for cell in availability {
                let text = try await cell.text
                #expect(text.hasPrefix("In stock"), "\(text)")
            }
            #expect(try await browser.find("#execute").isEnabled)

            // The first line's product, and how many of it the order takes across its lines.
            let productPath = try #require(try await browser.find(".lines tbody a").attribute("href"))
            var ordered = 0
            for row in try await browser.findNow(".lines tbody tr") {
                let links = try await browser.command(
                    "POST",
                    "element/\(row.id)/elements",
                    ["using": "css selector", "value": "a[href='\(productPath)']"]
                )
                guard (links as? [Any])?.isEmpty == false else { continue }
                let quantity = try await browser.command(
                    "POST",
                    "element/\(row.id)/element",
                    ["using": "css selector", "value": "td[data-label=Qty]"]
                )
                let cell = Element(browser: browser, id: try #require((quantity as? [String: Any])?[Element.key] as? String))
                ordered += try #require(Int(try await cell.text))
            }
            try await browser.go(server.url(productPath))
            let stockBefore = try #require(Int(try await browser.text("#current-stock")))

            try await browser.go(server.url("/orders/\(number)"))
            try await browser.find("#execute").click()
            try await browser.waitForText("#order-status", "Shipped") { $0 == "Shipped" }
            #expect(try await browser.findNow("#execute").isEmpty)

            try await browser.go(server.url("/orders?status=shipped&q=\(number)"))
            try await browser.find("tr[data-order='\(number)']")

            try await browser.go(server.url(productPath))
            #expect(Int(try await browser.text("#current-stock")) == stockBefore - ordered)
            #expect(try await browser.text("#movements").contains("order \(number)"))
        }
    }

    @Test func searchAProductEditItAndTheChangeStays() async throws {
        try await withLiveBrowser { server, driver in
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.manager, next: "/products")
            let target = try await server.backoffice().catalogue.list(ProductQuery()).items[3].product
            // Part of the name, without its accents: the search ignores them.
            let folded = target.name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
            let fragment = String(folded.prefix(max(4, folded.count * 2 / 3)))

            // Search as you type: the results region updates without submitting the form.
            let before = try await browser.text("#results .count")
            try await browser.find("#q").type(fragment)
            try await browser.waitForText("#results .count", "fewer products than \(before)") { $0 != before }
            try await browser.find("#results a[href='/products/\(target.id ?? 0)']").click()
            try await browser.waitForText("h1", target.name) { $0.hasPrefix(target.name) }

            try await browser.find("#unitPrice").replace(with: "123.45")
            try await browser.find("#reorderLevel").replace(with: "37")
            try await browser.find("form.card button[type=submit]").click()
            try await browser.find("#saved")
            try await browser.refresh()
            #expect(try await browser.text("#current-price") == "123.45")
            #expect(try await browser.text("#current-reorder-level") == "37")
            #expect(try await browser.find("#unitPrice").value == "123.45")
            let stored = try server.backoffice().catalogue.product(id: target.id ?? 0).product
            #expect(stored.unitPrice == Money(cents: 12345))
            #expect(stored.reorderLevel == 37)
        }
    }

    @Test func anOrderThatCannotBeSuppliedSaysWhatIsShortAndStaysUnshipped() async throws {
        try await withLiveBrowser { server, driver in
            let browser = try await driver.newBrowser()
            try await browser.signIn(server, as: server.rep, next: "/orders")
            let number = try await newOrder(browser, server, badge: "low")
            try await browser.go(server.url("/orders/\(number)"))
            let detail = try await server.backoffice().orders.order(number: number)
            let short = try #require(detail.lines.first { $0.short > 0 })

            var badges: [String] = []
            for badge in try await browser.findNow(".availability .badge.low") { badges.append(try await badge.text) }
            #expect(badges.contains("Short by \(short.short)"), "\(badges)")
            #expect(try await !browser.find("#execute").isEnabled)
            #expect(try await browser.text("#execute-reason").contains(short.productName))

            // Even a request that gets past the disabled button is refused, and nothing ships.
            try await browser.execute("document.querySelector(\"form[action$='/execute']\").submit()")
            let error = try await browser.text("#action-error")
            #expect(error.contains(short.productName))
            #expect(try await browser.text("#order-status") == "New")
            #expect(try await server.backoffice().orders.order(number: number).order.shippedDate == nil)
        }
    }

    @Test func aProductFormErrorShowsBesideItsField() async throws {
        try await withLiveBrowser { server, driver in
            let browser = try await driver.newBrowser()
            let product = try await server.backoffice().catalogue.list(ProductQuery()).items[0].product
            try await browser.signIn(server, as: server.manager, next: "/products/\(product.id ?? 0)")
            try await browser.find("#unitPrice").replace(with: "twelve")
            try await browser.find("#reorderLevel").replace(with: "-3")
            try await browser.find("form.card button[type=submit]").click()

            let priceError = try await browser.text(".field.invalid #unitPrice-error")
            #expect(!priceError.isEmpty)
            #expect(try await browser.find("#unitPrice").attribute("aria-describedby") == "unitPrice-error")
            #expect(try await browser.find("#unitPrice").value == "twelve", "what was typed stays to be corrected")
            #expect(try await !browser.text(".field.invalid #reorderLevel-error").isEmpty)
            #expect(try await browser.findNow("#name-error").isEmpty)
            // The error sits with its own field, not elsewhere on the page.
            let sameField =
                try await browser.execute(
                    """
                    return document.getElementById('unitPrice-error').closest('.field') === document.getElementById('unitPrice').closest('.field')
                    """
                ) as? Bool
            #expect(sameField == true)
            #expect(try server.backoffice().catalogue.product(id: product.id ?? 0).product.unitPrice == product.unitPrice)
        }
    }

    @Test func takeAPhoneOrderFromStartToFinish() async throws {
        try await withLiveBrowser { server, driver in
            let browser = try await driver.newBrowser()
            let facts = try server.backoffice()
            var stocked = ProductQuery()
            stocked.discontinued = false
            let product = try #require(try await facts.catalogue.list(stocked).items.map(\.product).first { $0.unitsInStock >= 10 })
            try await browser.signIn(server, as: server.rep, next: "/orders/new")

            // A new customer, created without leaving the form.
            try await browser.find("#new-customer summary").click()
            try await browser.find("#new-customer-code").type("zztop")
            try await browser.find("#new-customer-company").type("Zed Top Trading")
            try await browser.find("#new-customer-phone").type("0123 456")
            try await browser.find("#create-customer").click()
            try await browser.waitForText("#new-customer-status", "the new customer") { $0 == "Created Zed Top Trading." }
            #expect(try await browser.find("#customer").value == "ZZTOP")
            try await browser.waitForText("#customer-name", "the company's name") { $0.hasPrefix("Zed Top Trading") }

            // The employee is whoever signed in.
            let me = try #require(try await facts.accounts.logins().first { $0.value == server.rep.login }?.key)
            #expect(try await browser.find("#employeeID").value == String(me))

            // Product lookup as you type, then pick the suggestion.
            let productInput = try await browser.find("#lines [name=product]")
            try await productInput.type(product.name)
            let suggestion = "\(product.name) (#\(product.id ?? 0))"
            try await waitFor("the product suggestion \(suggestion)") {
                try await browser.execute("return [...document.querySelectorAll('#product-options option')].map(o => o.value)")
                    .flatMap { $0 as? [String] }?.contains(suggestion) == true
            }
            try await productInput.replace(with: suggestion)
            try await browser.find("#lines [name=quantity]").replace(with: "3")
            try await browser.find("#lines [name=discount]").replace(with: "10")
            try await browser.find("#freight").replace(with: "12.50")
            let lineTotal = (product.unitPrice.cents * 3 * 90 + 50) / 100
            func money(_ cents: Int) -> String { String(format: "%d.%02d", cents / 100, cents % 100) }
            try await browser.waitForText("#lines .line-total", money(lineTotal)) { $0 == money(lineTotal) }
            #expect(try await browser.text("#lines .line-availability") == "In stock (\(product.unitsInStock))")
            #expect(try await browser.text("#order-total") == money(lineTotal + 1250))

            try await browser.find("#save-order").click()
            try await waitFor("the new order's page") {
                let url = try await browser.url
                return url.contains("/orders/") && !url.hasSuffix("/new")
            }
            let number = try await browser.url.components(separatedBy: "/orders/").last ?? ""
            #expect(try await browser.text("h1").contains(number))
            #expect(try await browser.text(".facts").contains("Zed Top Trading"))
            let created = try await facts.orders.order(number: number)
            #expect(created.customer.code == "ZZTOP")
            #expect(created.order.employeeID == me)
            #expect(created.lines.map(\.line.productID) == [product.id])
            #expect(created.lines.first?.line.quantity == 3)
            #expect(created.order.freight == Money(cents: 1250))
        }
    }

    @Test func anOpenPageFollowsChangesMadeElsewhereWithoutAReload() async throws {
        try await withLiveBrowser { server, driver in
            let watcher = try await driver.newBrowser()
            let editor = try await driver.newBrowser()
            let product = try await server.backoffice().catalogue.list(ProductQuery()).items[1].product
            let path = "/products/\(product.id ?? 0)"
            try await watcher.signIn(server, as: server.rep, next: path)
            try await editor.signIn(server, as: server.manager, next: path)
            // A reload would clear this; a live update keeps it.
            try await watcher.execute("window.northwindMarker = 'still here'")

            try await editor.find("#unitPrice").replace(with: "77.70")
            try await editor.find("form.card button[type=submit]").click()
            try await editor.find("#saved")
            try await watcher.waitForText("#current-price", "the editor's new price") { $0 == "77.70" }
            #expect(try await watcher.execute("return window.northwindMarker") as? String == "still here")

            // A change from another process (the CLI's way in) reaches the page too.
            let stock = try #require(Int(try await watcher.text("#current-stock")))
            _ = try await server.backoffice().stock.receive(productID: product.id ?? 0, quantity: 5)
            try await watcher.waitForText("#current-stock", "\(stock + 5)") { $0 == String(stock + 5) }

            // The home page's count of new orders follows an order taken elsewhere.
            try await watcher.go(server.url("/"))
            try await watcher.execute("window.northwindMarker = 'home'")
            let count = try #require(Int(try await watcher.text("#new-orders-count")))
            let customer = try await server.backoffice().records.list(Customer.self, limit: 1).items[0].code
            _ = try await server.backoffice().orders.create(
                OrderDraft(
                    customerCode: customer,
                    employeeID: nil,
                    lines: [OrderLineDraft(productID: product.id ?? 0, quantity: 1)]
                )
            )
            try await watcher.waitForText("#new-orders-count", "\(count + 1)") { $0 == String(count + 1) }
            #expect(try await watcher.execute("return window.northwindMarker") as? String == "home")
        }
    }

    /// Every page at phone and desktop width. `NORTHWIND_SCREENSHOTS=docs/screenshots swift test --filter Browser`
    /// refreshes the committed set; otherwise they go to a temporary directory.
    @Test func everyPageAtPhoneAndDesktopWidth() async throws {
        let directory =
            ProcessInfo.processInfo.environment["NORTHWIND_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("northwind-screenshots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let backups = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-screenshot-backups-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: backups) }
        try await withLiveBrowser(environment: ["NORTHWIND_BACKUP_DIRECTORY": backups.path]) { server, driver in
            let browser = try await driver.newBrowser()
            let facts = try server.backoffice()
            _ = try await facts.backups.create(in: BackupFolder(url: backups), kind: .manual)
            let quote = try await facts.quotes.create(
                QuoteContent(
                    customerCode: "BIANC",
                    validUntil: .today.adding(days: 30),
                    notes: "Second call: wants the coffee before the holidays",
                    lines: [
                        try facts.quotes.newLine(productID: 17, quantity: 4), try facts.quotes.newLine(productID: 11, quantity: 12, discount: 0.05),
                    ]
                ),
                by: QuoteEditor(login: "setup", name: "Setup")
            )
            let product = try await facts.catalogue.list(ProductQuery()).items[0].product
            let category = try await facts.records.list(NorthwindStore.Category.self, limit: 1).items[0]
            let customer = try await facts.records.list(Customer.self, limit: 1).items[0]
            let employee = try await facts.records.list(Employee.self, limit: 1).items[0]
            let short = try #require(try await facts.orders.list(OrderQuery(status: .new)).items.first { !$0.isSupplyable })
            let purchase = try #require(try await facts.purchasing.list().items.first)

            var pages = [("signin", "/signin")]
            pages += [
                ("home", "/"), ("products", "/products"), ("products-search", "/products?q=sir"),
                ("product", "/products/\(product.id ?? 0)"), ("product-new", "/products/new"),
                ("orders", "/orders"), ("orders-shipped", "/orders?status=shipped"), ("order", "/orders/\(short.order.number)"),
                ("order-new", "/orders/new"), ("categories", "/categories"), ("category", "/categories/\(category.id ?? 0)"),
                ("customers", "/customers"), ("customer", "/customers/\(customer.code)"), ("employees", "/employees"),
                ("employee", "/employees/\(employee.id ?? 0)"), ("reports", "/reports"),
                ("report-chart", "/reports/category-sales-for-1997?year=\(LocalDate.today.year - 1)"),
                ("report-form", "/reports/sales-by-year?from=\(LocalDate.today.year)-01-01&to=\(LocalDate.today)"),
                ("quotes", "/quotes"), ("quote", "/quotes/\(quote.number)"), ("documents-import", "/documents/import"),
                ("settings", "/settings"), ("backups", "/backups"), ("purchases", "/purchases"),
                ("purchase", "/purchases/\(purchase.order.number)"), ("purchase-new", "/purchases/new?supplier=\(purchase.order.supplierID)"),
                ("proposal", "/purchases/proposal"), ("suppliers", "/suppliers"), ("supplier", "/suppliers/\(purchase.order.supplierID)"),
                ("not-found", "/products/999999"),
            ]
            for (index, (name, path)) in pages.enumerated() {
                if index == 1 { try await browser.signIn(server, as: server.manager) }
                try await browser.go(server.url(path))
                try await browser.find("main")
                for (width, mobile) in [(1280, false), (360, true)] {
                    let shot = try await browser.screenshot(width: width, mobile: mobile)
                    #expect(shot.png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name) at \(width) px is not a PNG")
                    #expect(shot.scrollWidth <= width, "\(name) scrolls sideways at \(width) px (\(shot.scrollWidth) px wide)")
                    try shot.png.write(to: directory.appendingPathComponent("\(name)-\(width).png"))
                }
                let errors = try await browser.consoleErrors().filter { name != "not-found" || !$0.contains("404") }
                #expect(errors.isEmpty, "\(name) logged errors: \(errors)")
            }
        }
    }
}
