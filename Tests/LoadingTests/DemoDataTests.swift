import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Demo data")
struct DemoDataTests {
    static let options = DemoData.Options(scale: 1, seed: 7, endDate: LocalDate("2026-06-30") ?? .today)

    @Test func scaleOneHasTheClassicShape() throws {
        let store = try TemporaryStore(seed: Self.options)
        #expect(try store.count("SELECT count(*) FROM categories") == 8)
        #expect(try store.count("SELECT count(*) FROM products") == 77)
        #expect(try store.count("SELECT count(*) FROM suppliers") == 29)
        #expect(try store.count("SELECT count(*) FROM customers") == 91)
        #expect(try store.count("SELECT count(*) FROM employees") == 9)
        #expect(try store.count("SELECT count(*) FROM shippers") == 3)
        #expect(try store.count("SELECT count(*) FROM orders") == 830)
        let lines = try store.count("SELECT count(*) FROM order_lines")
        #expect((2000...2300).contains(lines), "about 2,155 lines, got \(lines)")
        // Three years of orders, ending on the given day.
        #expect(try store.count("SELECT count(*) FROM orders WHERE orderDate < '2023-07-01' OR orderDate > '2026-06-30'") == 0)
        #expect(try store.store.pool.read { db in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") }.isEmpty)
    }

    @Test func itHasWhatStaffMeetEveryDay() async throws {
        let store = try TemporaryStore(seed: Self.options)
        let b = store.backoffice
        let open = try await b.orders.list(OrderQuery(status: .new))
        #expect(open.total > 5)
        #expect(open.items.contains { !$0.isSupplyable }, "some open orders cannot be supplied")
        #expect(open.items.contains { $0.isSupplyable }, "some open orders can be supplied")
        var query = ProductQuery()
        query.lowStock = true
        #expect(try await b.catalogue.list(query).total > 0)
        query = ProductQuery()
        query.discontinued = true
        #expect(try await b.catalogue.list(query).total > 0)
        #expect(try b.catalogue.search("cote").contains { $0.product.name.hasPrefix("Côte") })
    }

    /// Everything but identities (record ids and order numbers carry the installation's site code) is the same.
    func content(_ store: TemporaryStore) throws -> [String] {
        try store.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name || unitPriceCents || unitsInStock || reorderLevel FROM products ORDER BY id")
                + String.fetchAll(db, sql: "SELECT orderID || ':' || productID || ':' || quantity || ':' || discount FROM order_lines ORDER BY id")
                + String.fetchAll(db, sql: "SELECT code || companyName || ifnull(city, '') FROM customers ORDER BY id")
                + String.fetchAll(db, sql: "SELECT orderDate || status || ifnull(shippedDate, '') || freightCents FROM orders ORDER BY id")
        }
    }

    /// Seeding lifts the change-log triggers for speed; every row must be logged all the same, once.
    @Test func everySeededRowIsInTheChangeLog() throws {
        let store = try TemporaryStore(seed: Self.options)
        var rows = 0
        for table in Store.syncedTables { rows += try store.count("SELECT count(*) FROM \(table)") }
        #expect(try store.count("SELECT count(*) FROM change_log WHERE operation = 'insert'") == rows)
        #expect(try store.count("SELECT count(DISTINCT recordID) FROM change_log") == rows)
        // The triggers are back: the next write is logged by them.
        _ = try store.store.pool.write { db in try db.execute(sql: "INSERT INTO regions (description) VALUES ('Central')") }
        #expect(try store.count("SELECT count(*) FROM change_log WHERE tableName = 'regions'") == 5)
        #expect(try store.backoffice.catalogue.search("crème").isEmpty == false)
    }

    @Test func theSameOptionsGiveTheSameData() throws {
        let first = try content(TemporaryStore(seed: Self.options))
        let second = try content(TemporaryStore(seed: Self.options))
        #expect(first == second)
        var other = Self.options
        other.seed = 8
        #expect(try content(TemporaryStore(seed: other)) != first)
    }

    @Test func scaleMultipliesTheRows() throws {
        var options = Self.options
        options.scale = 3
        let store = try TemporaryStore(seed: options)
        #expect(try store.count("SELECT count(*) FROM products") == 231)
        #expect(try store.count("SELECT count(*) FROM orders") == 2490)
        #expect(try store.count("SELECT count(DISTINCT recordID) FROM order_lines") == store.count("SELECT count(*) FROM order_lines"))
    }

    @Test func aMovementRecordedAfterSeedingIsTheNewest() async throws {
        // Given a demo whose last day has not reached 08:00 UTC yet (tomorrow is always so)
        var options = Self.options
        options.endDate = LocalDate.today.adding(days: 1)
        let store = try TemporaryStore(seed: options)
        let productID = try #require(try await store.backoffice.catalogue.list().items.first?.product.id)
        // When stock is received now
        _ = try await store.backoffice.stock.receive(productID: productID, quantity: 4)
        // Then it heads the product's movements, ahead of the opening balance
        let newest = try #require(try await store.backoffice.stock.movements(productID: productID, limit: 1).first)
        #expect((newest.reason, newest.delta) == (.received, 4))
    }

    @Test func seedingRefusesAStoreThatHoldsDataUnlessReplacing() throws {
        let store = try TemporaryStore(seed: Self.options)
        #expect(throws: NorthwindError.self) { try DemoData.seed(into: store.store, options: Self.options) }
        var replace = Self.options
        replace.replace = true
        try DemoData.seed(into: store.store, options: replace)
        #expect(try store.count("SELECT count(*) FROM orders") == 830)
        var bad = Self.options
        bad.scale = 0
        #expect(throws: NorthwindError.invalid([.init("scale", "must be between 1 and 10000")])) {
            try DemoData.seed(into: store.store, options: bad)
        }
    }
}
