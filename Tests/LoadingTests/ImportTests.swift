import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Classic import", .enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent: skipping the classic import tests"))
struct ImportTests {
    func path(_ relative: String) throws -> String {
        try #require(ClassicFixtures.directory).appendingPathComponent(relative).path
    }

    func importCounts(_ store: TemporaryStore) throws -> [String: Int] {
        try store.store.pool.read { db in
            var counts: [String: Int] = [:]
            for table in [
                "orders", "order_lines", "products", "customers", "employees", "categories", "suppliers", "shippers",
                "regions", "territories", "employee_territories",
            ] {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")
            }
            return counts
        }
    }

    @Test func microsoftsScriptGivesTheCanonicalData() async throws {
        let store = try TemporaryStore()
        let report = try ClassicImporter.importFile(atPath: path(ClassicFixtures.mssql), into: store.store, replace: false)
        #expect(report.format == "Microsoft T-SQL script")
        #expect(
            try importCounts(store) == [
                "orders": 830, "order_lines": 2155, "products": 77, "customers": 91, "employees": 9, "categories": 8,
                "suppliers": 29, "shippers": 3, "regions": 4, "territories": 53, "employee_territories": 49,
            ]
        )
        #expect(report.counts.first { $0.table == "order lines" }?.rows == 2155)
        try await checkKnownFacts(store)

        // Pictures and photos come out of their OLE wrapping as bitmaps a browser can show.
        let b = store.backoffice
        let picture = try #require(try await b.catalogue.picture(categoryID: 1))
        #expect(picture.contentType == "image/bmp")
        #expect(picture.bytes.prefix(2) == Data("BM".utf8))
        let photo = try #require(try await b.people.photo(employeeID: 1))
        #expect(photo.contentType == "image/bmp")
        #expect(try b.records.find(Employee.self, id: 2).title == "Vice President, Sales")
        #expect(try b.records.find(Employee.self, id: 1).reportsTo == 2)
    }

    /// The most expensive product is Côte de Blaye at 263.50; order 10248 has 3 lines for VINET.
    func checkKnownFacts(_ store: TemporaryStore) async throws {
        let b = store.backoffice
        var query = ProductQuery()
        (query.sort, query.descending, query.limit) = (.price, true, 1)
        let top = try #require(try await b.catalogue.list(query).items.first)
        #expect(top.product.name == "Côte de Blaye")
        #expect(top.product.unitPrice == Money(cents: 26350))
        let order = try await b.orders.order(number: "10248")
        #expect(order.customer.code == "VINET")
        #expect(order.lines.count == 3)
        #expect(order.subtotal == Money(cents: 44000))
        #expect(order.order.freight == Money(cents: 3238))
        #expect(order.order.orderDate == LocalDate("1996-07-04"))
        #expect(try b.catalogue.search("cote").map(\.product.name) == ["Côte de Blaye"])
    }

    @Test func theSQLiteScriptImports() async throws {
        let store = try TemporaryStore()
        let report = try ClassicImporter.importFile(atPath: path(ClassicFixtures.sqlite), into: store.store, replace: false)
        #expect(report.format == "SQLite script")
        let counts = try importCounts(store)
        #expect(counts["orders"] == 830)
        #expect(counts["order_lines"] == 2155)
        #expect(counts["customers"] == 93, "the conversion carries two junk customers")
        try await checkKnownFacts(store)
        #expect(try await store.backoffice.catalogue.picture(categoryID: 1)?.contentType == "image/jpeg")
    }

    @Test func thePostgreSQLScriptImports() async throws {
        let store = try TemporaryStore()
        let report = try ClassicImporter.importFile(atPath: path(ClassicFixtures.postgres), into: store.store, replace: false)
        #expect(report.format == "PostgreSQL script")
        let counts = try importCounts(store)
        #expect(counts["orders"] == 830)
        #expect(counts["order_lines"] == 2155)
        #expect(counts["shippers"] == 6)
        try await checkKnownFacts(store)
    }

    @Test func aSQLiteDatabaseFileImports() async throws {
        // Build a classic database file from the SQLite script, then import that file.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("classic.db").path
        let script = try String(contentsOfFile: path(ClassicFixtures.sqlite), encoding: .utf8)
        try await DatabaseQueue(path: file).writeWithoutTransaction { db in try db.execute(sql: script) }

        let store = try TemporaryStore()
        let report = try ClassicImporter.importFile(atPath: file, into: store.store, replace: false)
        #expect(report.format == "SQLite database")
        #expect(try importCounts(store)["order_lines"] == 2155)
        try await checkKnownFacts(store)
    }

    @Test func aValueOutOfRangeNamesItsRowAndChangesNothing() throws {
        // Given a classic database file whose first product claims more stock than any store may hold
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("classic.db").path
        let script = try String(contentsOfFile: path(ClassicFixtures.sqlite), encoding: .utf8)
        try DatabaseQueue(path: file).writeWithoutTransaction { db in
            try db.execute(sql: script)
            try db.execute(sql: "UPDATE Products SET UnitsInStock = 9223372036854775807 WHERE ProductID = 1")
        }
        // When it is imported
        let store = try TemporaryStore()
        #expect {
            _ = try ClassicImporter.importFile(atPath: file, into: store.store, replace: false)
        } throws: { error in
            // Then the import fails naming the value and its limit, and the store stays empty
            guard case NorthwindError.importFailed(let message) = error else { return false }
            return message.contains("UnitsInStock must be a whole number from 0 to 1,000,000,000")
        }
        #expect(try store.count("SELECT count(*) FROM products") == 0)
    }

    @Test func importRefusesAStoreWithDataUnlessReplacing() async throws {
        let store = try TemporaryStore(seed: DemoData.Options(scale: 1, seed: 1, endDate: LocalDate("2026-01-31") ?? .today))
        #expect {
            _ = try ClassicImporter.importFile(atPath: path(ClassicFixtures.mssql), into: store.store, replace: false)
        } throws: { error in
            guard case NorthwindError.invalidState(let message) = error else { return false }
            return message.contains("--replace")
        }
        #expect(try store.count("SELECT count(*) FROM orders WHERE number = '10248'") == 0)
        _ = try ClassicImporter.importFile(atPath: path(ClassicFixtures.mssql), into: store.store, replace: true)
        #expect(try importCounts(store)["orders"] == 830)
        try await checkKnownFacts(store)
    }

    @Test func aMalformedFileNamesTheLineAndChangesNothing() throws {
        let store = try TemporaryStore()
        let w = try store.store.pool.write { db -> Int in
            try db.execute(sql: "INSERT INTO shippers (companyName) VALUES ('Keep me')")
            return 1
        }
        #expect(w == 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // A real script cut off in the middle of a string.
        let text = try String(contentsOfFile: path(ClassicFixtures.mssql), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let cut = try #require(lines.firstIndex { $0.contains("'Côte de Blaye'") })
        let truncated = lines[..<cut].joined(separator: "\n") + "\n" + lines[cut].prefix { $0 != "C" } + "Côte"
        let broken = directory.appendingPathComponent("broken.sql")
        try truncated.write(to: broken, atomically: true, encoding: .utf8)

        #expect {
            _ = try ClassicImporter.importFile(atPath: broken.path, into: store.store, replace: true)
        } throws: { error in
            guard case NorthwindError.importFailed(let message) = error else { return false }
            return message.contains("line \(cut + 1)")
        }
        #expect(try store.count("SELECT count(*) FROM shippers") == 1)
        #expect(try store.count("SELECT count(*) FROM products") == 0)

        // A value that does not fit: a bad date in an otherwise fine row.
        let badDate = text.replacingOccurrences(of: "'7/4/1996'", with: "'13/45/1996'")
        let badFile = directory.appendingPathComponent("bad-date.sql")
        try badDate.write(to: badFile, atomically: true, encoding: .utf8)
        #expect {
            _ = try ClassicImporter.importFile(atPath: badFile.path, into: store.store, replace: true)
        } throws: { error in
            guard case NorthwindError.importFailed(let message) = error else { return false }
            return message.contains("Orders row at line") || message.contains("date")
        }
        #expect(try store.count("SELECT count(*) FROM shippers") == 1)
        #expect(throws: NorthwindError.self) {
            _ = try ClassicImporter.importFile(atPath: directory.appendingPathComponent("missing.sql").path, into: store.store, replace: true)
        }
    }
}
