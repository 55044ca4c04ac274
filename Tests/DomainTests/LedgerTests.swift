import Foundation
import GRDB
import Northwind
import NorthwindStore
import Testing

@testable import NorthwindTestSupport

/// The stock ledger is never deleted, and an order line ships once, whatever writes to the store.
@Suite("The ledger")
struct LedgerTests {
    @Test func aSecondShipmentOfAnOrderLineIsRefusedByTheStore() async throws {
        // Given an order shipped
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let order = try await b.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 2)])
        )
        _ = try await b.orders.execute(number: order.order.number)
        // When a second shipped movement for the same line is written past the domain
        let error = await Self.translated {
            try await b.store.pool.write { db in
                try db.execute(
                    sql: "INSERT INTO stock_movements (productID, delta, reason, orderID) VALUES (?, -2, 'shipped', ?)",
                    arguments: [w.chai.key, order.order.id]
                )
            }
        }
        // Then it is refused, and the shelf moved once
        #expect(error == .inUse("This order line has shipped already."))
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 48)
    }

    @Test func noDeleteReachesAStockMovementEvenThroughACascade() async throws {
        // Given a product whose stock came in by a movement
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        // When its movements are deleted directly
        let error = await Self.translated {
            try await b.store.pool.write { db in try db.execute(sql: "DELETE FROM stock_movements WHERE productID = ?", arguments: [w.chai.key]) }
        }
        // Then the store refuses, and the movements stay
        #expect(error == .inUse("A stock movement is never deleted; correct it with another movement."))
        let count = try await b.store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM stock_movements WHERE productID = ?", arguments: [w.chai.key])
        }
        #expect(count == 1)
    }

    static func translated(_ body: () async throws -> Void) async -> NorthwindError? {
        await northwindError {
            do { try await body() } catch { throw NorthwindError.translating(error) }
        }
    }
}
