import Foundation
import GRDB
import NorthwindLoading
import Testing

@testable import Northwind
@testable import NorthwindStore
@testable import NorthwindTestSupport

/// Microsoft's data, imported once from `../shared/northwind/mssql/instnwnd.sql` for the report tests.
enum Canonical {
    static let store: TemporaryStore? = {
        guard let directory = ClassicFixtures.directory, let store = try? TemporaryStore() else { return nil }
        let path = directory.appendingPathComponent(ClassicFixtures.mssql).path
        guard (try? ClassicImporter.importFile(atPath: path, into: store.store, replace: false)) != nil else { return nil }
        return store
    }()

    static func run(_ name: String, _ parameters: [String: String] = [:]) async throws -> ReportTable {
        try await #require(store).backoffice.reports.run(name, parameters: parameters)
    }

    /// One column of a report as plain text, e.g. money as "440.00".
    static func column(_ table: ReportTable, _ name: String) throws -> [String] {
        let index = try #require(table.columns.firstIndex(of: name))
        return table.rows.map { $0[index].description }
    }

    /// The row whose `key` column reads `value`, as column name → text.
    static func row(_ table: ReportTable, _ key: String, _ value: String) throws -> [String: String] {
        let index = try #require(table.columns.firstIndex(of: key))
        let row = try #require(table.rows.first { $0[index].description == value })
        return Dictionary(uniqueKeysWithValues: zip(table.columns, row.map(\.description)))
    }
}

/// Every expected value below comes from outside the code under test: figures Microsoft's own samples print for the
/// original on SQL Server, or `docs/research/reports/reference.py`, which parses the T-SQL script itself and
/// evaluates each view and procedure literally with decimal money and float32 `real` arithmetic.
@Suite("Classic reports on Microsoft's data", .enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"))
struct ClassicReportTests {
    @Test func everyViewAndProcedureOfTheScriptIsAReport() throws {
        let script = try ClassicFixtures.text(ClassicFixtures.mssql)
        let created = script.matches(of: /(?i)create\s+(view|procedure)\s+"?([^"\r\n]+?)"?\s+(as|@)/).map { match in
            "\(match.1.lowercased()) \"\(match.2)\""
        }
        #expect(created.count == 23)
        let classic = ReportDefinition.catalogue.filter { !$0.original.hasPrefix("Northwind report") }
        #expect(Set(created) == Set(classic.map(\.original)))
        #expect(Set(ReportDefinition.catalogue.map(\.name)).count == ReportDefinition.catalogue.count)
    }

    @Test func categorySalesFor1997MatchMicrosoftsPublishedFigures() async throws {
        let table = try await Canonical.run("category-sales-for-1997")
        let published = [
            "Beverages": "102074.31", "Condiments": "55277.60", "Confections": "80894.14", "Dairy Products": "114749.78",
            "Grains/Cereals": "55948.82", "Meat/Poultry": "81338.06", "Produce": "53019.98", "Seafood": "65544.18",
        ]
        let computed = Dictionary(
            uniqueKeysWithValues: zip(
                try Canonical.column(table, "CategoryName"),
                try Canonical.column(table, "CategorySales")
            )
        )
        #expect(computed == published)
        #expect(try Canonical.column(table, "CategoryName") == published.keys.sorted())
    }

    @Test func orderSubtotalsAndTheDearestProductsMatchPublishedFigures() async throws {
        let subtotals = try await Canonical.run("Order Subtotals")
        #expect(subtotals.rows.count == 830)
        for (order, amount) in ["10248": "440.00", "10249": "1863.40", "10250": "1552.60", "10251": "654.06", "10252": "3597.90"] {
            #expect(try Canonical.row(subtotals, "OrderID", order)["Subtotal"] == amount)
        }
        let dearest = try await Canonical.run("ten-most-expensive-products")
        #expect(
            try Canonical.column(dearest, "TenMostExpensiveProducts") == [
                "Côte de Blaye", "Thüringer Rostbratwurst", "Mishi Kobe Niku", "Sir Rodney's Marmalade", "Carnarvon Tigers",
                "Raclette Courdavault", "Manjimup Dried Apples", "Tarte au sucre", "Ipoh Coffee", "Rössle Sauerkraut",
            ]
        )
        #expect(try Canonical.column(dearest, "UnitPrice").first == "263.50")
        #expect(try Canonical.column(dearest, "UnitPrice").last == "45.60")
    }

    /// Row counts with each report's default parameters (and ALFKI, order 10248, the year 1997, Beverages).
    @Test(
        arguments: [
            ("alphabetical-list-of-products", [:], 69), ("current-product-list", [:], 69),
            ("products-above-average-price", [:], 25), ("products-by-category", [:], 69),
            ("customer-and-suppliers-by-city", [:], 120), ("invoices", [:], 2155), ("order-details-extended", [:], 2155),
            ("order-subtotals", [:], 830), ("orders-qry", [:], 830), ("quarterly-orders", [:], 86),
            ("quarterly-orders", ["year": "1996"], 67), ("product-sales-for-1997", [:], 77),
            ("category-sales-for-1997", [:], 8), ("sales-by-category", [:], 77), ("sales-totals-by-amount", [:], 66),
            ("sales-totals-by-amount", ["year": "1998"], 44), ("summary-of-sales-by-quarter", [:], 809),
            ("summary-of-sales-by-year", [:], 809), ("ten-most-expensive-products", [:], 10),
            ("cust-order-hist", ["customer": "ALFKI"], 11), ("cust-order-hist", ["customer": "FISSA"], 0),
            ("cust-orders-detail", ["order": "10248"], 3), ("cust-orders-orders", ["customer": "alfki"], 6),
            ("employee-sales-by-country", ["from": "1997-01-01", "to": "1997-12-31"], 398),
            ("sales-by-year", ["from": "1997-01-01", "to": "1997-12-31"], 398),
            ("sales-by-category", ["year": "1998"], 76), ("sales-by-category", ["year": "1996"], 74),
        ] as [(String, [String: String], Int)]
    )
    func rowCounts(report: String, parameters: [String: String], rows: Int) async throws {
        #expect(try await Canonical.run(report, parameters).rows.count == rows)
    }

    @Test func moneyIsRoundedPerLineAsSQLServerDoesIt() async throws {
        // The views and CustOrdersDetail round the same line differently, as on SQL Server.
        let extended = try await Canonical.run("order-details-extended")
        let lines = Array(zip(try Canonical.column(extended, "OrderID"), try Canonical.column(extended, "ProductID")))
        let amounts = try Canonical.column(extended, "ExtendedPrice")
        let amount = { (order: String, product: String) in amounts[lines.firstIndex { $0 == (order, product) } ?? 0] }
        #expect(amount("10351", "44") == "1133.82")
        #expect(amount("10954", "31") == "265.63")
        #expect(
            try await Canonical.row(Canonical.run("cust-orders-detail", ["order": "10351"]), "ProductName", "Gula Malacca")
                == ["ProductName": "Gula Malacca", "UnitPrice": "15.50", "Quantity": "77", "Discount": "5", "ExtendedPrice": "1133.83"]
        )
        #expect(try Canonical.column(extended, "ExtendedPrice").compactMap { Money(parsing: $0)?.cents }.reduce(0, +) == 126_579_306)
    }

    @Test func datesIncludeTheLastDayAndProceduresTakeTheirDefaults() async throws {
        let july = try await Canonical.run("sales-by-year", ["from": "1996-07-01", "to": "1996-07-31"])
        #expect(july.rows.count == 17)
        #expect(try Canonical.column(july, "OrderID").last == "10266")
        #expect(try Canonical.column(july, "Subtotal").last == "346.56")
        #expect(try Canonical.column(july, "Year").allSatisfy { $0 == "1996" })
        let lastDay = try await Canonical.run("sales-by-year", ["from": "1998-05-06", "to": "1998-05-06"])
        #expect(try Canonical.column(lastDay, "OrderID").contains("11069"))
        #expect(try Canonical.column(lastDay, "ShippedDate").allSatisfy { $0 == "1998-05-06" })

        let beverages = try await Canonical.run("SalesByCategory", ["category": "beverages"])
        #expect(beverages.parameters["year"] == "1998")
        #expect(beverages.rows.count == 12)
        #expect(try Canonical.row(beverages, "ProductName", "Chai")["TotalPurchase"] == "6296.00")
        let in1997 = try await Canonical.run("sales-by-category-proc", ["category": "Beverages", "year": "1997"])
        #expect(try Canonical.row(in1997, "ProductName", "Chai")["TotalPurchase"] == "4887.00")

        let staff = try await Canonical.run("employee-sales-by-country", ["from": "1997-01-01", "to": "1997-12-31"])
        var perEmployee: [String: Int] = [:]
        let amounts = try Canonical.column(staff, "SaleAmount").map { Money(parsing: $0)?.cents ?? 0 }
        for (name, cents) in zip(try Canonical.column(staff, "LastName"), amounts) { perEmployee[name, default: 0] += cents }
        #expect(perEmployee["Peacock"] == 12_465_557)
        #expect(perEmployee["Leverling"] == 10_371_908)
        #expect(perEmployee["Dodsworth"] == 2_441_289)
    }

    @Test func namesSortAsSQLServerSortsThem() async throws {
        let products = try await Canonical.column(Canonical.run("alphabetical-list-of-products"), "ProductName")
        #expect(products.first == "Aniseed Syrup")
        #expect(products.last == "Zaanse koeken")
        #expect(products.firstIndex(of: "Pâté chinois") == 42)
        #expect(products.firstIndex(of: "Pavlova") == 43)
        #expect(try #require(products.firstIndex(of: "Röd Kaviar")) < (try #require(products.firstIndex(of: "Rogede sild"))))
        let meat = try await Canonical.column(Canonical.run("SalesByCategory", ["category": "Meat/Poultry", "year": "1997"]), "ProductName")
        #expect(meat == ["Alice Mutton", "Mishi Kobe Niku", "Pâté chinois", "Perth Pasties", "Thüringer Rostbratwurst", "Tourtière"])
        let quarterly = try await Canonical.run("quarterly-orders")
        #expect(try Canonical.column(quarterly, "CompanyName").last == "Wolski  Zajazd")
    }
}

@Suite("Report parameters")
struct ReportParameterTests {
    @Test func mistakesGetMessagesThatNameTheParameter() async throws {
        let store = try TemporaryStore()
        _ = try await World.make(store.backoffice)
        let b = store.backoffice
        func message(_ name: String, _ parameters: [String: String]) async -> String {
            do {
                _ = try await b.reports.run(name, parameters: parameters)
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(await message("no-such-report", [:]) == "No report no-such-report exists.")
        #expect(await message("cust-order-hist", [:]).contains("customer: is required (the customer's code, e.g. ALFKI)"))
        #expect(await message("cust-order-hist", ["customer": "ZZZZZ"]) == "No customer ZZZZZ exists.")
        #expect(await message("cust-orders-detail", ["order": "99999"]) == "No order 99999 exists.")
        #expect(await message("sales-by-category-proc", ["category": "Snacks"]) == "No category Snacks exists.")
        #expect(await message("sales-by-year", ["from": "1997-12-31", "to": "1997-01-01"]).contains("to: must not be before from (1997-12-31)"))
        #expect(await message("sales-by-year", ["from": "1997-02-30", "to": "1997-03-01"]).contains("from: must be a date written yyyy-MM-dd"))
        #expect(await message("category-sales-for-1997", ["year": "nineteen"]).contains("year: must be a year such as 1997, not \"nineteen\""))
        #expect(await message("current-product-list", ["year": "1997"]).contains("year: is not a parameter of current-product-list (it takes none)"))
        // A year with no sales is an empty report, not an error.
        #expect(try await b.reports.run("category-sales-for-1997", parameters: ["year": "1990"]).rows.isEmpty)
    }

    @Test func reportsNameTheirOriginalsAndFindThemByEitherName() throws {
        // The 23 views and procedures of instnwnd.sql, then the manager's six, purchasing's four and fulfilment's four.
        #expect(ReportDefinition.catalogue.count == 37)
        #expect(
            ReportDefinition.catalogue.suffix(14).map(\.name) == [
                "reorder-list", "order-backlog", "top-customers", "top-products", "sales-per-employee", "stock-movements",
                "stock-valuation", "open-purchase-orders", "supplier-performance", "gross-margin", "sales-by-invoice-date",
                "tax-by-rate-and-month", "backorder-ageing", "fill-rate",
            ]
        )
        #expect(ReportDefinition.named("Category Sales for 1997")?.name == "category-sales-for-1997")
        #expect(ReportDefinition.named("CustOrderHist")?.original == "procedure \"CustOrderHist\"")
        #expect(ReportDefinition.named("employee-sales-by-country")?.parameters.map(\.name) == ["from", "to"])
        for report in ReportDefinition.catalogue {
            #expect(ReportQueries.all[report.query] != nil, "\(report.name) has no query")
        }
    }
}

@Suite("Stored line amounts")
struct LineAmountTests {
    @Test func theStoreKeepsEachLinesExtendedPriceAndRefusesAWrongOne() async throws {
        let store = try TemporaryStore()
        let world = try await World.make(store.backoffice)
        #expect(ReportFunctions.extendedPriceCents(unitPriceCents: 1800, quantity: 3, discount: 0) == 5400)
        #expect(ReportFunctions.extendedPriceCents(unitPriceCents: 1400, quantity: 12, discount: 0.25) == 12600)
        let order = try await store.backoffice.orders.create(
            OrderDraft(
                customerCode: world.vinet.code,
                employeeID: world.nancy.id,
                lines: [.init(productID: world.chai.id!, quantity: 3, discount: 0.15)]
            )
        )
        let stored = try store.count("SELECT extendedPriceCents FROM order_lines WHERE orderID = ?", [order.order.id])
        // 18.00 × 3 × 0.85 = 45.90, and binary32 keeps it within a ten-thousandth.
        #expect(stored == 4590)
        // A writer that gets the amount wrong is refused by the CHECK, and nothing changes.
        #expect(throws: DatabaseError.self) {
            try store.store.pool.write { db in
                try db.execute(
                    sql: "UPDATE order_lines SET extendedPriceCents = extendedPriceCents + 1 WHERE orderID = ?",
                    arguments: [order.order.id]
                )
            }
        }
        #expect(try store.count("SELECT extendedPriceCents FROM order_lines WHERE orderID = ?", [order.order.id]) == 4590)
    }

    @Test func theASCIISortKeyIsTheUnicodeOne() {
        for name in ["Perth Pasties", "Sir Rodney's Scones", "Chef Anton's Gumbo Mix", "Jack's New-England Clam Chowder", "ALFKI"] {
            #expect(ReportFunctions.fold(name) == name.lowercased().filter { $0 != "'" && $0 != "-" })
        }
        #expect(ReportFunctions.fold("Pâté chinois") == "pate chinois")
        #expect(ReportFunctions.fold("Côte de Blaye") < ReportFunctions.fold("Perth Pasties"))
    }

    @Test func theSQLSortKeyIsFoldsKey() throws {
        // Given a store's connection, and ASCII, accented, empty, NUL-free and non-Latin text, a blob, a number and NULL
        let store = try TemporaryStore()
        let texts = [
            "Perth Pasties", "Sir Rodney's Scones", "Jack's New-England Clam Chowder", "ALFKI", "", "'-'", "Pâté chinois", "Straße-Müller", "東京",
        ]
        try store.store.pool.read { db in
            // When SQL computes each key
            for text in texts {
                let key = try String.fetchOne(db, sql: "SELECT sqlserver_key(?)", arguments: [text])
                // Then it is the key `fold` makes, as the reports' sorts assume
                #expect(key == ReportFunctions.fold(text), "\(text)")
            }
            #expect(try String.fetchOne(db, sql: "SELECT sqlserver_key(CAST('Côte-A' AS BLOB))") == "cotea")
            #expect(try String.fetchOne(db, sql: "SELECT sqlserver_key(x'ff')") == nil)
            #expect(try String.fetchOne(db, sql: "SELECT sqlserver_key(42)") == nil)
            #expect(try String.fetchOne(db, sql: "SELECT sqlserver_key(NULL)") == nil)
        }
    }

    @Test func theLatinSortKeyIsTheUnicodeOne() {
        // Given every Latin letter, alone and inside names, with marks, ligatures and the Turkish dotted I
        let names = ["Pâté chinois", "Côte de Blaye", "Gudbrandsdalsost Ærø", "İstanbul Çay", "Straße-Müller", "Œufs d'Ȿ"]
        let letters = (0..<0x250).compactMap(Unicode.Scalar.init).map { String(Character($0)) }
        // When each is folded a scalar at a time, Then the key is the one Foundation's decomposition of the whole text gives
        for text in names + letters {
            #expect(ReportFunctions.fold(text) == ReportFunctions.foldUnicode(text), "\(text.unicodeScalars.map(\.value))")
        }
    }
}

/// The manager's reports and the dashboard on a small world whose figures are worked out by hand below.
@Suite("Manager's reports")
struct ManagersReportTests {
    /// O1 VINET/Nancy 11-05: Chai 3 × 18.00 = 54.00, open. O2 ALFKI/Andrew 11-10, due 11-20: Mustard 8 × 25.00 =
    /// 200.00, open, 3 short. O3 VINET/Nancy 10-03: Côte 2 × 263.50 = 527.00, shipped. O4 ALFKI/Nancy 10-20:
    /// Chai 10 × 18.00 less 10% = 162.00, open. O5 VINET/Andrew 11-12: Chai 1, cancelled.
    static func world() async throws -> (TemporaryStore, World) {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        func order(
            _ customer: Customer,
            _ employee: Employee,
            _ date: String,
            due: String? = nil,
            _ product: Product,
            _ quantity: Int,
            discount: Double = 0
        ) async throws -> String {
            try await b.orders.create(
                OrderDraft(
                    customerCode: customer.code,
                    employeeID: employee.id,
                    orderDate: LocalDate(date),
                    requiredDate: due.flatMap(LocalDate.init),
                    lines: [.init(productID: product.key, quantity: quantity, discount: discount)]
                )
            )
            .order.number
        }
        _ = try await order(w.vinet, w.nancy, "2026-11-05", w.chai, 3)
        _ = try await order(w.alfki, w.andrew, "2026-11-10", due: "2026-11-20", w.mustard, 8)
        _ = try await b.orders.execute(number: try await order(w.vinet, w.nancy, "2026-10-03", w.cote, 2))
        _ = try await order(w.alfki, w.nancy, "2026-10-20", w.chai, 10, discount: 0.1)
        _ = try await b.orders.cancel(number: try await order(w.vinet, w.andrew, "2026-11-12", w.chai, 1))
        return (store, w)
    }

    static func column(_ table: ReportTable, _ name: String) -> [String] {
        let index = table.columns.firstIndex(of: name)!
        return table.rows.map { $0[index].description }
    }

    @Test func reorderListAndBacklog() async throws {
        let (store, _) = try await Self.world()
        let b = store.backoffice
        let reorder = try await b.reports.run("reorder-list")
        #expect(Self.column(reorder, "ProductName") == ["Grandma's Mustard"])
        #expect(Self.column(reorder, "Supplier") == ["Exotic Liquids"])
        // Twice the reorder level (10) less stock (5) and units on order (0).
        #expect(Self.column(reorder, "SuggestedQuantity") == ["15"])

        let backlog = try await b.reports.run("order-backlog")
        #expect(Self.column(backlog, "CustomerID") == ["ALFKI", "VINET", "ALFKI"])  // due 11-20 first; no due date last
        #expect(Self.column(backlog, "Status") == ["blocked", "supplyable", "supplyable"])
        #expect(Self.column(backlog, "BlockedBy") == ["Grandma's Mustard (short by 3)", "", ""])
        #expect(Self.column(backlog, "Amount") == ["200.00", "54.00", "162.00"])
    }

    @Test func topCustomersProductsAndEmployees() async throws {
        let (store, _) = try await Self.world()
        let b = store.backoffice
        let customers = try await b.reports.run("top-customers", parameters: ["from": "2026-10-01", "to": "2026-11-30"])
        #expect(Self.column(customers, "CustomerID") == ["VINET", "ALFKI"])
        #expect(Self.column(customers, "Sales") == ["581.00", "362.00"])
        #expect(Self.column(customers, "AverageOrder") == ["290.50", "181.00"])
        // The period includes its last day and leaves out what came before it.
        let november = try await b.reports.run("top-customers", parameters: ["from": "2026-11-01", "to": "2026-11-10"])
        #expect(Self.column(november, "Sales") == ["200.00", "54.00"])

        let products = try await b.reports.run("top-products", parameters: ["top": "2"])
        #expect(Self.column(products, "ProductName") == ["Côte de Blaye", "Chai"])
        #expect(Self.column(products, "Quantity") == ["2", "13"])
        #expect(Self.column(products, "Sales") == ["527.00", "216.00"])

        let employees = try await b.reports.run("sales-per-employee")
        #expect(Self.column(employees, "Employee") == ["Nancy Davolio", "Andrew Fuller"])
        #expect(Self.column(employees, "Orders") == ["3", "1"])
        #expect(Self.column(employees, "Sales") == ["743.00", "200.00"])

        await #expect(throws: NorthwindError.self) { try await b.reports.run("top-products", parameters: ["top": "0"]) }

        // A limit stops reading and says so; a limit the rows fit in does not.
        let first = try await b.reports.run("top-customers", limit: 1)
        #expect(Self.column(first, "CustomerID") == ["VINET"])
        #expect(!first.isComplete)
        #expect(try await b.reports.run("top-customers", limit: 2).isComplete)
    }

    /// A period's whole years come from the year summaries and its other days from the orders: every way a period
    /// can fall across years' edges must count each order once, as a plain sum over the orders does.
    @Test func periodsAcrossYearsCountEachOrderOnce() async throws {
        // Given orders on both sides of two New Years, one cancelled, and the world's orders of 2026
        let (store, w) = try await Self.world()
        let b = store.backoffice
        for (date, customer, quantity) in [
            ("2024-12-31", w.alfki, 1), ("2025-01-01", w.vinet, 2), ("2025-07-01", w.alfki, 3), ("2025-12-31", w.vinet, 4),
            ("2026-01-01", w.alfki, 5),
        ] {
            _ = try await b.orders.create(
                OrderDraft(
                    customerCode: customer.code,
                    employeeID: w.nancy.id,
                    orderDate: LocalDate(date),
                    lines: [.init(productID: w.chai.key, quantity: quantity)]
                )
            )
        }
        _ = try await b.orders.cancel(
            number: try await b.orders.create(
                OrderDraft(
                    customerCode: w.vinet.code,
                    employeeID: nil,
                    orderDate: LocalDate("2025-03-03"),
                    lines: [.init(productID: w.cote.key, quantity: 1)]
                )
            ).order.number
        )
        let periods: [(String?, String?)] = [
            (nil, nil), ("2025-01-01", "2025-12-31"), ("2024-12-31", "2026-01-01"), ("2025-01-02", "2025-12-30"),
            ("2025-07-01", "2025-07-01"), (nil, "2025-06-30"), ("2025-07-01", nil), ("2025-06-30", "2026-06-30"),
            ("2024-01-01", "2026-12-31"), ("2025-12-31", "2026-01-01"),
        ]
        for (from, to) in periods {
            var parameters = ["top": "100"]
            parameters["from"] = from
            parameters["to"] = to
            let inPeriod = "o.status <> 'cancelled' AND o.orderDate BETWEEN ifnull(?, '0000') AND ifnull(?, '9999')"
            // When each report runs over the period
            let customers = try await b.reports.run("top-customers", parameters: parameters)
            let products = try await b.reports.run("top-products", parameters: parameters)
            let employees = try await b.reports.run("sales-per-employee", parameters: parameters.filter { $0.key != "top" })
            // Then each agrees with a plain sum over the orders placed in it
            let expected = try await store.store.pool.read { db in
                try [
                    "SELECT c.code, sum(ol.extendedPriceCents) FROM orders o JOIN customers c ON c.id = o.customerID",
                    "SELECT p.name, sum(ol.extendedPriceCents) FROM orders o JOIN products p ON p.id = ol.productID",
                    "SELECT e.firstName || ' ' || e.lastName, sum(ol.extendedPriceCents) FROM orders o JOIN employees e ON e.id = o.employeeID",
                ].map { select in
                    try Row.fetchAll(
                        db,
                        sql: select.replacingOccurrences(of: " FROM orders o", with: " FROM order_lines ol JOIN orders o ON o.id = ol.orderID")
                            + " WHERE \(inPeriod) GROUP BY 1 ORDER BY 1",
                        arguments: [from, to]
                    ).map { "\($0[0] as String) \(Money(cents: $0[1] as Int))" }
                }
            }
            let trace: Comment = "period \(from ?? "open") to \(to ?? "open")"
            for (table, name, expected) in [
                (customers, "CustomerID", expected[0]), (products, "ProductName", expected[1]), (employees, "Employee", expected[2]),
            ] {
                let got = zip(Self.column(table, name), Self.column(table, "Sales")).map { "\($0) \($1)" }.sorted()
                #expect(got == expected, trace)
            }
        }
    }

    @Test func stockMovementsForAProductByIdOrName() async throws {
        let (store, w) = try await Self.world()
        let b = store.backoffice
        for product in [String(w.cote.key), "côte de blaye"] {
            let moves = try await b.reports.run("stock-movements", parameters: ["product": product])
            #expect(Self.column(moves, "Change") == ["10", "-2"])
            #expect(Self.column(moves, "Reason") == ["initial", "shipped"])
        }
        let error = try #require(await northwindError { _ = try await b.reports.run("stock-movements", parameters: ["product": "Nothing"]) })
        #expect(error.description == "No product Nothing exists.")
        #expect(try await b.reports.run("stock-movements", parameters: ["from": "2000-01-01", "to": "2000-12-31"]).rows.isEmpty)
    }

    @Test func dashboardComparesThisMonthWithLastMonth() async throws {
        let (store, _) = try await Self.world()
        let board = try await store.backoffice.reports.dashboard(today: LocalDate("2026-11-22")!)
        #expect(board.monthToDate == Money(cents: 25_400))  // O1 + O2; O5 is cancelled
        #expect(board.ordersMonthToDate == 2)
        #expect(board.lastMonth == Money(cents: 68_900))  // O3 + O4
        #expect(board.lastMonthToDate == Money(cents: 68_900))
        #expect(board.changePercent == -63)  // 254.00 against 689.00
        #expect(board.categories.map(\.name) == ["Condiments", "Beverages"])
        #expect(board.newOrders == 3)
        #expect(board.lowStockProducts == 1)
        // On the 15th, last month's comparison stops at October 15th: only O3.
        #expect(try await store.backoffice.reports.dashboard(today: LocalDate("2026-11-15")!).lastMonthToDate == Money(cents: 52_700))
        // In December, November is last month: on the 31st its comparison stops at November 30th, its last day.
        let december = try await store.backoffice.reports.dashboard(today: LocalDate("2026-12-31")!)
        #expect(december.lastMonth == Money(cents: 25_400))
        #expect(december.lastMonthToDate == Money(cents: 25_400))
        #expect(december.monthToDate == .zero)
        #expect(december.changePercent == -100)
        #expect(december.categories.isEmpty)
    }
}
