import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Products")
struct ProductTests {
    @Test func listFiltersSortsAndPages() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice

        var query = ProductQuery()
        query.categoryID = w.condiments.id
        #expect(try await b.catalogue.list(query).items.map(\.product.name) == ["Grandma's Mustard"])

        query = ProductQuery()
        query.discontinued = true
        #expect(try await b.catalogue.list(query).items.map(\.product.name) == ["Old Tea"])

        query = ProductQuery()
        query.lowStock = true
        #expect(try await b.catalogue.list(query).items.map(\.product.name) == ["Grandma's Mustard"])

        query = ProductQuery()
        (query.sort, query.descending, query.limit, query.offset) = (.price, true, 2, 1)
        let page = try await b.catalogue.list(query)
        #expect(page.total == 4)
        #expect(page.items.map(\.product.name) == ["Grandma's Mustard", "Chai"])
        #expect(page.items.first?.categoryName == "Condiments")
        #expect(page.items.first?.supplierName == "Exotic Liquids")

        query.limit = 0
        #expect(
            await northwindError { _ = try await b.catalogue.list(query) } == .invalid([.init("limit", "must be a whole number from 1 to 1,000")])
        )
    }

    @Test func searchIgnoresCaseAndAccentsAndMatchesPrefixes() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        #expect(try b.catalogue.search("cote").map(\.product.id) == [w.cote.id])
        #expect(try b.catalogue.search("CÔTE de bl").map(\.product.id) == [w.cote.id])
        #expect(try b.catalogue.search("mus").map(\.product.id) == [w.mustard.id])
        #expect(try b.catalogue.search("grandma mustard").map(\.product.id) == [w.mustard.id])
        #expect(try b.catalogue.search("nothing like this").isEmpty)
        #expect(try b.catalogue.search("   ").isEmpty)
        #expect(try b.catalogue.search("\"unbalanced").isEmpty)
        // A renamed product is found by its new name only.
        var renamed = w.chai
        renamed.name = "Masala Chai"
        _ = try await b.catalogue.update(renamed)
        #expect(try b.catalogue.search("masala").map(\.product.id) == [w.chai.id])
    }

    @Test func aCommonWordListsAPageInNameOrderFromTheFirstMatches() async throws {
        // Given 60 teas added from "Tea 60" down to "Tea 01", so the index finds "Tea 60" first and "Tea 01" last
        let store = try TemporaryStore()
        let b = store.backoffice
        for number in (1...60).reversed() {
            _ = try await b.catalogue.create(Product(name: String(format: "Tea %02d", number)))
        }
        // When a person searches for "tea", 20 at a time
        let names = try b.catalogue.search("tea", limit: 20).map(\.product.name)
        // Then the page is in name order, picked from the first 50 matches: "Tea 01" to "Tea 10" are not among them
        #expect(names == (11...30).map { String(format: "Tea %02d", $0) })
    }

    @Test func aSearchInTheListCountsEveryMatchAndPagesPastTheFirstFifty() async throws {
        // Given 60 teas, 10 of them discontinued, beside products that are no tea
        let store = try TemporaryStore()
        let b = store.backoffice
        _ = try await World.make(b)
        for number in 1...60 {
            _ = try await b.catalogue.create(Product(name: String(format: "Tea %02d", number), discontinued: number > 50))
        }
        // When the list is asked for "tea", discontinued only, 4 to a page, the second page
        var query = ProductQuery()
        (query.text, query.discontinued, query.limit, query.offset) = ("tea", true, 4, 4)
        let page = try await b.catalogue.list(query)
        // Then the total counts every match the filter keeps (Old Tea and Tea 51 to 60), and the page is in name order
        #expect(page.total == 11)
        #expect(page.items.map(\.product.name) == ["Tea 54", "Tea 55", "Tea 56", "Tea 57"])
        // And all 61 matches are counted without the filter, beyond the 50 a quick search looks at (a list looks at
        // up to Catalogue.listSearchCap)
        query.discontinued = nil
        #expect(try await b.catalogue.list(query).total == 61)
        // And words that match nothing, or no words at all, give an empty page
        query.text = "nothing like this"
        #expect(try await b.catalogue.list(query).total == 0)
        query.text = "  "
        #expect(try await b.catalogue.list(query).items.isEmpty)
    }

    @Test func aFilteredSearchPastTheCapSaysItLookedOnlyAtTheFirstMatches() async throws {
        // Given more teas than a list search looks at, three of them discontinued
        let store = try TemporaryStore()
        let count = Catalogue.listSearchCap + 5
        try await store.writePastTheGate { db in
            for number in 1...count {
                try db.execute(
                    sql: "INSERT INTO products (recordID, name, discontinued) VALUES (?, ?, ?)",
                    arguments: ["tea\(number)", "Tea \(number)", number <= 3]
                )
            }
        }
        var query = ProductQuery()
        (query.text, query.discontinued) = ("tea", true)
        // When the list is searched for "tea" with a filter that keeps a handful
        let filtered = try await store.backoffice.catalogue.list(query)
        // Then the page says matches were left out, though its own total is small
        #expect(filtered.total <= 3)
        #expect(filtered.capped)
        // And a search with fewer matches than the cap says nothing was left out
        query.text = "tea 1000"
        #expect(try await store.backoffice.catalogue.list(query).capped == false)
        // And without a filter, the cap is said as well
        (query.text, query.discontinued) = ("tea", nil)
        let unfiltered = try await store.backoffice.catalogue.list(query)
        #expect(unfiltered.total == Catalogue.listSearchCap && unfiltered.capped)
    }

    @Test func aProductsLedgerNamesTheOrderOfEachMovement() async throws {
        // Given an order executed for chai, after a delivery
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let draft = OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 3)])
        let order = try await b.orders.create(draft)
        _ = try await b.orders.execute(number: order.order.number)
        // When the product's ledger is read
        let ledger = try await b.stock.ledger(productID: w.chai.key)
        // Then the shipment names its order's number, and movements of no order name none
        #expect(ledger.first?.movement.delta == -3)
        #expect(ledger.first?.orderNumber == order.order.number)
        #expect(ledger.dropFirst().allSatisfy { $0.orderNumber == nil })
        #expect(ledger.map(\.movement) == (try await b.stock.movements(productID: w.chai.key)))
    }

    @Test func aPageOfResultsIsInSQLitesNameOrderWithTiesByID() async throws {
        // Given tarts whose names differ by case, by accent, by composed and decomposed é, and two with the same name
        let store = try TemporaryStore()
        let b = store.backoffice
        let names = ["tarte \u{E9}t\u{E9}", "Tarte b", "tarte a", "tarte e\u{301}t\u{E9}", "Tarte b", "tarte B"]
        var ids: [String: [Int64]] = [:]
        for name in names { ids[name, default: []].append(try await b.catalogue.create(Product(name: name)).id ?? 0) }
        // When a person searches for "tarte"
        let found = try b.catalogue.search("tarte").map { "\($0.product.name)#\($0.product.id ?? 0)" }
        // Then the page is in the order SQLite's ORDER BY name, id gives: the names' UTF-8 bytes, ties by id
        let expected = try await store.store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT name, id FROM products WHERE name LIKE 'tarte%' ORDER BY name, id").map {
                "\($0[0] as String)#\($0[1] as Int64)"
            }
        }
        #expect(found == expected)
        #expect(found.count == 6)
        #expect(found.first == "Tarte b#\(ids["Tarte b"]![0])")
    }
    @Test func createRecordsTheOpeningBalanceAsAMovement() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let movements = try await store.backoffice.stock.movements(productID: w.chai.key)
        #expect(movements.map(\.delta) == [50])
        #expect(movements.map(\.reason) == [.initial])
        #expect(try store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 50)
    }

    @Test func createRejectsBadInputWithFieldErrors() async throws {
        let store = try TemporaryStore()
        let b = store.backoffice
        let error = await northwindError { _ = try await b.catalogue.create(Product(name: "  ", unitPrice: Money(cents: -1), reorderLevel: -2)) }
        #expect(
            error
                == .invalid([
                    .init("name", "is required"), .init("unitPrice", "must be from 0.00 to 9,999,999.99"),
                    .init("reorderLevel", "must be a whole number from 0 to 1,000,000,000"),
                ])
        )
        let missing = await northwindError { _ = try await b.catalogue.create(Product(name: "Ghost", categoryID: 99)) }
        #expect(missing == .invalid([.init("categoryID", "no category #99 exists")]))
        #expect(try store.count("SELECT count(*) FROM products") == 0)
    }

    @Test func updateSavesDetailsAndBumpsTheVersion() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        var edited = w.chai
        edited.unitPrice = Money(cents: 1950)
        edited.reorderLevel = 12
        let saved = try await store.backoffice.catalogue.update(edited)
        #expect(saved.version == 2)
        let reread = try store.backoffice.catalogue.product(id: w.chai.key).product
        #expect(reread.unitPrice == Money(cents: 1950))
        #expect(reread.reorderLevel == 12)
        #expect(reread.recordID == w.chai.recordID)
    }

    @Test func aStaleEditIsRefusedAndSaysWhatChanged() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        var theirs = w.chai
        theirs.unitPrice = Money(cents: 2000)
        _ = try await store.backoffice.catalogue.update(theirs)

        var mine = w.chai
        mine.name = "Chai tea"
        let error = await northwindError { _ = try await store.backoffice.catalogue.update(mine) }
        guard case .conflict(let message) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(message.contains("unit price is now 20.00"))
        #expect(message.contains("name is now Chai"))
        #expect(try store.backoffice.catalogue.product(id: w.chai.key).product.name == "Chai")
    }

    @Test func stockCannotBeEditedAsADetail() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        var edited = w.chai
        edited.unitsInStock = 1000
        let error = await northwindError { _ = try await store.backoffice.catalogue.update(edited) }
        #expect(error == .invalid([.init("unitsInStock", "changes only by receiving stock or by a stock take (adjust), not by editing the product")]))
        #expect(try store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 50)
    }

    @Test func deleteIsRefusedWhileOrderLinesMentionTheProduct() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        _ = try await b.orders.create(OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 1)]))
        let error = await northwindError { try await b.catalogue.delete(id: w.chai.key) }
        #expect(error == .inUse("Product 'Chai' is used by 1 order line; discontinue it instead of deleting it."))

        let unstocked = try await b.catalogue.create(Product(name: "Never Stocked Mustard", unitPrice: Money(cents: 100)))
        try await b.catalogue.delete(id: unstocked.key)
        #expect(await northwindError { _ = try b.catalogue.product(id: unstocked.key) } == .notFound(entity: "product", key: "#\(unstocked.key)"))
        #expect(try b.catalogue.search("never stocked").isEmpty)
    }

    @Test func aProductWithStockMovementsIsNeverDeletedOnlyDiscontinued() async throws {
        // Given a product whose stock came in by a movement
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        // When it is deleted through the domain, and past it by plain SQL
        let error = await northwindError { try await b.catalogue.delete(id: w.mustard.key) }
        let direct = await northwindError {
            do {
                try await b.store.pool.write { db in try db.execute(sql: "DELETE FROM products WHERE id = ?", arguments: [w.mustard.key]) }
            } catch {
                throw NorthwindError.translating(error)
            }
        }
        // Then both are refused, and the product and its movement stay
        #expect(error == .inUse("Product 'Grandma's Mustard' has 1 stock movement in its history; discontinue it instead of deleting it."))
        #expect(direct == .inUse("A product with stock movements is never deleted; discontinue it."))
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 5)
    }

    @Test func receivingWithoutAPurchaseOrderRaisesStockAndRecordsAMovement() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice

        let received = try await b.stock.receive(productID: w.mustard.key, quantity: 20, employeeID: w.nancy.id, note: "Delivery 42")
        #expect(received.unitsInStock == 25)
        // What is on order falls only by receipts against purchase orders.
        #expect(received.unitsOnOrder == 0)
        let latest = try #require(try await b.stock.movements(productID: w.mustard.key).first)
        #expect((latest.delta, latest.reason, latest.employeeID, latest.note) == (20, .received, w.nancy.id, "Delivery 42"))

        #expect(
            await northwindError { _ = try await b.stock.receive(productID: w.mustard.key, quantity: 0) }
                == .invalid([.init("quantity", "must be a whole number from 1 to 1,000,000,000")])
        )
        #expect(await northwindError { _ = try await b.stock.receive(productID: 999, quantity: 1) } == .notFound(entity: "product", key: "#999"))
    }

    @Test func aStockTakeRecordsTheDifference() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let counted = try await b.stock.adjust(productID: w.chai.key, countedQuantity: 47, note: "Broken jars")
        #expect(counted.unitsInStock == 47)
        #expect(try await b.stock.movements(productID: w.chai.key).map(\.delta) == [-3, 50])
        // Counting what the store already says records nothing.
        _ = try await b.stock.adjust(productID: w.chai.key, countedQuantity: 47)
        #expect(try await b.stock.movements(productID: w.chai.key).count == 2)
        #expect(
            await northwindError { _ = try await b.stock.adjust(productID: w.chai.key, countedQuantity: -1) }
                == .invalid([.init("countedQuantity", "must be a whole number from 0 to 1,000,000,000")])
        )
    }
}
