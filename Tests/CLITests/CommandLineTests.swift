import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import Testing

@testable import NorthwindTestSupport
@testable import northwind

@Suite("Command line", .serialized)
struct CommandLineTests {
    @Test func parsesSubcommandsAndRejectsBadArguments() throws {
        #expect(try NorthwindCommand.parseAsRoot(["products", "list", "--low-stock", "--sort", "price"]) is ProductsCommand.List)
        #expect(try NorthwindCommand.parseAsRoot(["orders", "new", "--customer", "VINET", "--line", "11:12:0.15"]) is OrdersCommand.New)
        #expect(throws: (any Error).self) { try NorthwindCommand.parseAsRoot(["products", "list", "--sort", "colour"]) }
        #expect(throws: (any Error).self) { try NorthwindCommand.parseAsRoot(["orders", "new", "--customer", "VINET", "--line", "eleven"]) }
        #expect(throws: (any Error).self) { try NorthwindCommand.parseAsRoot(["products", "list", "--active", "--discontinued"]) }
    }

    @Test func transfersListsAsTheAPIDoesWithJSON() async throws {
        // Given a store that has sent and received no transfers
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        // When its transfers are listed with --json
        let listed = try await CLI.run(["transfers", "list", "--store", path, "--json"])
        // Then the answer is the API's transfer list, empty
        #expect(listed.status == 0, "\(listed.stderr)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any], "\(listed.stdout)")
        #expect(body.keys.sorted() == ["items"])
        #expect((body["items"] as? [Any])?.isEmpty == true)
    }

    @Test func aSessionFromFirstUseToAShippedOrder() async throws {
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path

        // First use creates and seeds the store.
        let list = try await CLI.run(["products", "list", "--store", path, "--json", "--limit", "5"])
        #expect(list.status == 0, "\(list.stderr)")
        let page = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
        #expect(page?["total"] as? Int == 77)
        #expect((page?["items"] as? [Any])?.count == 5)

        let search = try await CLI.run(["products", "search", "cote", "--store", path])
        #expect(search.stdout.contains("Côte du Rhône Villages"))

        // Take an order for a product with plenty of stock, check it and ship it.
        let customers = try await CLI.run(["customers", "list", "--store", path, "--json", "--limit", "1"])
        let customerItems = try #require(
            (try JSONSerialization.jsonObject(with: Data(customers.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]]
        )
        let code = try #require(customerItems.first?["code"] as? String)
        _ = try await CLI.run(["products", "receive", "3", "500", "--store", path])
        let created = try await CLI.run(["orders", "new", "--customer", code, "--employee", "1", "--line", "3:12", "--store", path, "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let number = try #require(
            (try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["number"] as? String
        )
        let check = try await CLI.run(["orders", "check", number, "--store", path])
        #expect(check.stdout.contains("Every line can be supplied."))
        let executed = try await CLI.run(["orders", "execute", number, "--store", path])
        #expect(executed.status == 0, "\(executed.stderr)")
        #expect(executed.stdout.contains("Order \(number) — shipped"))

        // Doing it again is a domain error: one clear line on stderr, a non-zero exit, no stack trace.
        let again = try await CLI.run(["orders", "execute", number, "--store", path])
        #expect(again.status != 0)
        #expect(
            again.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
                == "Error: Order \(number) is already shipped; only an open order can be executed or shipped."
        )
        #expect(again.stdout.isEmpty)
    }

    @Test func jsonOutputHasTheAPIsShapes() async throws {
        // Given a demo store
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        // When a product list and a category are printed as JSON
        let products = try await CLI.run(["products", "list", "--store", path, "--json", "--limit", "1"])
        let category = try await CLI.run(["categories", "show", "1", "--store", path, "--json"])
        // Then money is a decimal string, as the API sends it, and no column name of the store shows through
        let page = try #require(try JSONSerialization.jsonObject(with: Data(products.stdout.utf8)) as? [String: Any])
        let product = try #require((page["items"] as? [[String: Any]])?.first)
        #expect((product["unitPrice"] as? String)?.contains(/^[0-9]+\.[0-9]{2}$/) == true)
        #expect(product["unitPriceCents"] == nil)
        #expect(page["nextCursor"] as? String == "1")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(category.stdout.utf8)) as? [String: Any])
        #expect(Set(record.keys).isSuperset(of: ["id", "recordID", "name", "version"]))
    }

    @Test func domainErrorsAndBadArgumentsExitNonZeroWithoutStackTraces() async throws {
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        let missing = try await CLI.run(["products", "show", "9999", "--store", path, "--empty"])
        #expect(missing.status == 1)
        #expect(missing.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == "Error: No product #9999 exists.")

        let bad = try await CLI.run(["products", "list", "--limit", "many", "--store", path])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("Usage: northwind products list"))

        let delete = try await CLI.run(["categories", "add", "--set", "colour=red", "--store", path])
        #expect(delete.status != 0)
        #expect(delete.stderr.contains("Categories have no field 'colour'. Fields: name, description."))
        for result in [missing, bad, delete] { #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("0x0")) }
    }

    @Test(arguments: [
        [], ["products"], ["products", "list"], ["products", "edit"], ["orders", "new"], ["orders", "execute"],
        ["categories", "add"], ["customers", "edit"], ["employees", "photo"], ["import"], ["seed"], ["report"],
    ])
    func helpWorksEverywhere(path: [String]) async throws {
        let result = try await CLI.run(path + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: northwind"))
    }

    /// The bench's bare-SQLite side writes and reads the schema by hand, so a schema change can break it unseen.
    @Test func benchRunsBothSidesAtTheSmallestScale() async throws {
        let bench = try await CLI.run(["--scale", "1", "--reads", "10", "--writes", "10"], program: "northwind-bench")
        #expect(bench.status == 0, "\(bench.stderr)")
        #expect(bench.stdout.contains("order creation (3 lines)"))
        #expect(bench.stdout.contains("order execution"))
        // Every report, on both sides, with the same number of rows (the bench stops otherwise).
        let lines = bench.stdout.split(separator: "\n")
        for report in ReportDefinition.catalogue {
            #expect(lines.contains { $0.hasPrefix(report.name + " ") }, "\(report.name)")
        }
    }

    @Test func reportsListRunAndPrintCSVPlainly() async throws {
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("reports.sqlite").path
        let list = try await CLI.run(["report", "list"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("category-sales-for-1997"))
        #expect(list.stdout.contains(/category-sales-for-1997 +view "Category Sales for 1997" +--year \(default 1997\)/))
        #expect(list.stdout.contains("employee-sales-by-country"))
        let listed = try JSONSerialization.jsonObject(with: Data(try await CLI.run(["report", "list", "--json"]).stdout.utf8)) as? [[String: Any]]
        #expect(listed?.count == 37)  // the 23 classic reports, the manager's six, purchasing's four and fulfilment's four

        // The demo store's orders cover the three years up to today; this range holds all of them.
        let csv = try await CLI.run(["report", "sales-by-year", "--from", "2000-01-01", "--to=2100-12-31", "--format", "csv", "--store", path])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.split(separator: "\r\n")
        #expect(lines.first == "ShippedDate,OrderID,Subtotal,Year")
        #expect(lines.count > 100)
        #expect(lines.dropFirst().allSatisfy { $0.wholeMatch(of: /\d{4}-\d\d-\d\d,[^,]+,\d+\.\d\d,\d{4}/) != nil })

        let json = try await CLI.run(["report", "cust-orders-orders", "--customer", "NOSUCH", "--format", "json", "--store", path])
        #expect(json.status == 1)
        #expect(json.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == "Error: No customer NOSUCH exists.")
        let bad = try await CLI.run(["report", "sales-by-year", "--from", "1997-13-01", "--store", path])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("from: must be a date written yyyy-MM-dd, such as 1996-07-04, not \"1997-13-01\"; to: is required"))
    }

    @Test func sqlDebugLogsStatementsToStandardError() async throws {
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        let flag = try await CLI.run(["shippers", "list", "--store", path, "--empty", "--sql-debug"])
        #expect(flag.stderr.contains("SELECT * FROM \"shippers\""))
        #expect(flag.stderr.contains(" ms "))
        let environment = try await CLI.run(["shippers", "list", "--store", path], environment: ["NORTHWIND_SQL_DEBUG": "1"])
        #expect(environment.stderr.contains("SELECT"))
        let quiet = try await CLI.run(["shippers", "list", "--store", path])
        #expect(!quiet.stderr.contains("SELECT"))
    }

    @Test func genericFieldsAddEditAndShowRecords() async throws {
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        let added = try await CLI.run([
            "customers", "add", "--set", "code=WOLZA", "--set", "companyName=Wolski Zajazd", "--set", "city=Warszawa", "--store", path, "--empty",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let edited = try await CLI.run(["customers", "edit", "wolza", "--set", "phone=(26) 642-7012", "--store", path])
        #expect(edited.status == 0, "\(edited.stderr)")
        let shown = try await CLI.run(["customers", "show", "WOLZA", "--store", path])
        #expect(shown.stdout.contains("Warszawa"))
        #expect(shown.stdout.contains("(26) 642-7012"))
    }
}
