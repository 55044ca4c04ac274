import Foundation
import GRDB
import NorthwindStore
import Testing

@testable import NorthwindStore
@testable import NorthwindTestSupport

/// Migration v10 rebuilds `stock_movements` to admit transfers: a store made before it keeps every movement, and the
/// table keeps moving the shelf and writing the change log.
@Suite("Stock transfers migration")
struct StockTransferMigrationTests {
    @Test func aStoreFromBeforeTransfersKeepsItsMovementsAndTheirEffects() throws {
        // Given a store file at v9 with a product, one movement of this shelf and one of another location
        let old = try OldStoreFile(upTo: "v9: sync") { db in
            try db.execute(sql: "INSERT INTO products (id, recordID, name) VALUES (1, 'p1', 'Chai')")
            try db.execute(sql: "INSERT INTO stock_movements (recordID, productID, delta, reason) VALUES ('m1', 1, 5, 'received')")
            try db.execute(sql: "INSERT INTO stock_movements (recordID, productID, delta, reason, location) VALUES ('m2', 1, 3, 'received', 'LON')")
        }

        // When the app opens it, and a movement is then made
        let store = try Store(StoreConfiguration(path: old.path))
        try store.pool.write { db in
            try db.execute(sql: "INSERT INTO stock_movements (recordID, productID, delta, reason) VALUES ('m3', 1, -2, 'shipped')")
        }

        // Then the old movements are all there, and the new one moved the shelf and reached the change log
        let (movements, shelf, london, logged) = try store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT recordID FROM stock_movements ORDER BY id"),
                try Int.fetchOne(db, sql: "SELECT unitsInStock FROM products WHERE id = 1"),
                try Int.fetchOne(db, sql: "SELECT units FROM stock_levels WHERE location = 'LON'"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM change_log WHERE tableName = 'stock_movements' AND recordID = 'm3'")
            )
        }
        #expect(movements == ["m1", "m2", "m3"])
        #expect(shelf == 3)
        #expect(london == 3)
        #expect(logged == 1)
    }

    @Test func aTransferHasOneMovementOutAtMost() throws {
        // Given a store with a transfer and its movement out
        let temporary = try TemporaryStore()
        let store = temporary.store
        try store.pool.write { db in
            try db.execute(sql: "INSERT INTO products (id, recordID, name) VALUES (1, 'p1', 'Chai')")
            try db.execute(sql: "INSERT INTO stock_movements (recordID, productID, delta, reason) VALUES ('m0', 1, 10, 'initial')")
            try db.execute(sql: "INSERT INTO stock_transfers (id, productID, quantity, fromLocation, toLocation) VALUES (1, 1, 4, 'HQ', 'LON')")
            try db.execute(sql: "INSERT INTO stock_movements (productID, delta, reason, transferID) VALUES (1, -4, 'transferOut', 1)")
        }

        // When a second movement out is written for the same transfer
        #expect(throws: DatabaseError.self) {
            try store.pool.write { db in
                try db.execute(sql: "INSERT INTO stock_movements (productID, delta, reason, transferID) VALUES (1, -4, 'transferOut', 1)")
            }
        }

        // Then the shelf lost the units once only
        #expect(try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT unitsInStock FROM products WHERE id = 1") } == 6)
    }
}
