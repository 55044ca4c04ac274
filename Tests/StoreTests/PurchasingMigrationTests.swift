import Foundation
import GRDB
import Testing

@testable import NorthwindStore
@testable import NorthwindTestSupport

/// The migration that made units on order derived (v22): every figure a store held is kept, and from then on has a
/// purchase order behind it.
@Suite("Purchasing migration")
struct PurchasingMigrationTests {
    @Test func unitsOnOrderBecomeOneOpeningPurchaseOrderPerSupplier() throws {
        // Given a store as the last release left it: two suppliers, three products on order, one product not
        let old = try OldStoreFile(upTo: "v21: a version sent again names its zone and its server time") { db in
            try db.execute(sql: "INSERT INTO suppliers (id, recordID, companyName) VALUES (1, 's1', 'Exotic Liquids'), (2, 's2', 'Tokyo Traders')")
            try db.execute(
                sql: """
                    INSERT INTO products (id, recordID, name, supplierID, unitsOnOrder) VALUES
                      (1, 'p1', 'Chai', 1, 40), (2, 'p2', 'Chang', 1, 70), (3, 'p3', 'Ikura', 2, 10), (4, 'p4', 'Konbu', 2, 0)
                    """
            )
        }

        // When the app opens it
        let store = try Store(StoreConfiguration(path: old.path))

        // Then each product keeps its figure, to the unit, and two sent opening orders (no cost) are its source
        let (onOrder, orders, lines) = try store.pool.read { db in
            (
                try [Int64: Int](uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, unitsOnOrder FROM products").map { ($0[0], $0[1]) }),
                try Row.fetchAll(db, sql: "SELECT supplierID, status, opening FROM purchase_orders ORDER BY supplierID"),
                try Row.fetchAll(db, sql: "SELECT productID, quantity, unitCostCents FROM purchase_order_lines ORDER BY productID")
            )
        }
        #expect(onOrder == [1: 40, 2: 70, 3: 10, 4: 0])
        #expect(orders.map { [$0[0] as Int64, $0[1] as String, $0[2] as Bool] as [AnyHashable] } == [[1, "sent", true], [2, "sent", true]])
        #expect(lines.map { [$0[0] as Int, $0[1] as Int] } == [[1, 40], [2, 70], [3, 10]])
        #expect(lines.allSatisfy { ($0[2] as Int?) == nil })
    }

    @Test func aShopsCopyOfHeadOfficesFiguresIsNotOrderedTwice() throws {
        // Given a joined shop whose product came by download (its change log says so) with head office's figure
        let old = try OldStoreFile(upTo: "v21: a version sent again names its zone and its server time") { db in
            try db.execute(sql: "INSERT INTO suppliers (id, recordID, companyName) VALUES (1, 's1', 'Exotic Liquids')")
            try db.execute(sql: "INSERT INTO products (id, recordID, name, supplierID, unitsOnOrder) VALUES (1, 'p1', 'Chai', 1, 40)")
            try db.execute(sql: "UPDATE change_log SET origin = 'sync'")
            try db.execute(sql: "INSERT INTO sync_state (key, value) VALUES ('membership', '{}')")
        }

        // When the app opens it
        let store = try Store(StoreConfiguration(path: old.path))

        // Then the shop has nothing on order and no opening order, and that change stays here (not uploaded)
        let (onOrder, orders, pending) = try store.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT unitsOnOrder FROM products"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM purchase_orders"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM change_log WHERE origin = 'local' AND NOT localOnly")
            )
        }
        #expect(onOrder == 0)
        #expect(orders == 0)
        #expect(pending == 0)
    }
}
