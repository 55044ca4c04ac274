import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Concurrency")
struct ConcurrencyTests {
    /// Twenty orders of 7 units compete for 50 units, through four separate connections to one file (as four
    /// processes would): exactly seven ship, stock ends at 1, never below zero, and every movement is accounted for.
    @Test func concurrentExecutesNeverOversell() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        var numbers: [String] = []
        for _ in 0..<20 {
            numbers.append(
                try await store.backoffice.orders.create(
                    OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 7)])
                ).order.number
            )
        }
        let handles = try (0..<4).map { _ in try store.reopen() }

        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for (index, number) in numbers.enumerated() {
                let backoffice = handles[index % handles.count]
                group.addTask {
                    do {
                        _ = try await backoffice.orders.execute(number: number)
                        return true
                    } catch NorthwindError.insufficientStock {
                        return false
                    } catch {
                        Issue.record("unexpected \(error)")
                        return false
                    }
                }
            }
            var results: [Bool] = []
            for await outcome in group { results.append(outcome) }
            return results
        }

        #expect(outcomes.filter { $0 }.count == 7)
        #expect(try store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 1)
        #expect(try store.count("SELECT count(*) FROM orders WHERE status = 'shipped'") == 7)
        #expect(try store.count("SELECT sum(delta) FROM stock_movements WHERE productID = ?", [w.chai.key]) == 1)
    }

    /// Fifty receipts of one unit each, from four connections at once: none is lost.
    @Test func concurrentStockChangesLoseNoUpdate() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let handles = try (0..<4).map { _ in try store.reopen() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                let backoffice = handles[index % handles.count]
                group.addTask { _ = try await backoffice.stock.receive(productID: w.cote.key, quantity: 1) }
            }
            try await group.waitForAll()
        }
        #expect(try store.backoffice.catalogue.product(id: w.cote.key).product.unitsInStock == 60)
        #expect(try store.count("SELECT count(*) FROM stock_movements WHERE productID = ? AND reason = 'received'", [w.cote.key]) == 50)
    }

    /// Two people edit the same product from the same version: one save wins, the other is told, and nothing is lost.
    @Test func concurrentEditsOfOneProductCannotBothWin() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let other = try store.reopen()
        var mine = w.chai
        mine.unitPrice = Money(cents: 1900)
        var theirs = w.chai
        theirs.reorderLevel = 25
        async let first = northwindError { _ = try await store.backoffice.catalogue.update(mine) }
        async let second = northwindError { _ = try await other.catalogue.update(theirs) }
        let errors = await [first, second]
        #expect(errors.filter { if case .conflict = $0 { true } else { false } }.count == 1)
        #expect(errors.filter { $0 == nil }.count == 1)
        #expect(try store.backoffice.catalogue.product(id: w.chai.key).product.version == 2)
    }
}
