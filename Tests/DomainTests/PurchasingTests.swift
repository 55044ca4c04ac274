import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// A buyer's work on a real store: purchase orders, receipts in parts, reversals, the moving average cost and the
/// reorder proposal.
@Suite("Purchasing")
struct PurchasingTests {
    /// A demo store and one product of it that is bought (not discontinued, with a supplier), its shelf counted to 0.
    struct Buyer {
        let store: TemporaryStore
        let productID: Int64
        let supplierID: Int64
        var purchasing: Purchasing { store.backoffice.purchasing }

        static func make(stock: Int = 0) async throws -> Buyer {
            let store = try TemporaryStore(seed: DemoData.Options(scale: 1))
            let found = try store.store.pool.read { db in
                try Row.fetchOne(
                    db,
                    sql:
                        "SELECT id, supplierID FROM products WHERE NOT discontinued AND supplierID IS NOT NULL AND unitsOnOrder = 0 ORDER BY id LIMIT 1"
                )
            }
            let row = try #require(found)
            _ = try await store.backoffice.stock.adjust(productID: row[0], countedQuantity: stock)
            return Buyer(store: store, productID: row[0], supplierID: row[1])
        }

        func product() throws -> Product { try store.backoffice.catalogue.product(id: productID).product }

        func sentOrder(quantity: Int, cost: String) async throws -> PurchaseOrderDetail {
            let draft = PurchaseOrderDraft(
                supplierID: supplierID,
                lines: [PurchaseLineDraft(productID: productID, quantity: quantity, unitCost: Money(parsing: cost))]
            )
            let written = try await purchasing.create(draft)
            return try await purchasing.send(number: written.order.number)
        }

        func receive(
            _ order: PurchaseOrderDetail,
            _ quantity: Int,
            key: String = UUID().uuidString,
            over: String? = nil
        ) async throws
            -> PurchaseOrderDetail
        {
            try await purchasing.receive(
                number: order.order.number,
                lines: [ReceiptLine(productID: productID, quantity: quantity, overReceipt: over)],
                requestKey: key
            )
        }
    }

    @Test func demoDataKeepsItsUnitsOnOrderThroughOpeningPurchaseOrders() async throws {
        // Given a freshly seeded demo store
        let store = try TemporaryStore(seed: DemoData.Options(scale: 1))

        // When units on order are read against the purchase orders behind them
        let (mismatched, onOrder, opening) = try await store.store.pool.read { db in
            (
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM products p WHERE p.unitsOnOrder <> (SELECT ifnull(sum(l.quantity), 0)
                          FROM purchase_order_lines l JOIN purchase_orders o ON o.id = l.purchaseOrderID
                          WHERE l.productID = p.id AND o.opening AND o.status = 'sent')
                        """
                ),
                try Int.fetchOne(db, sql: "SELECT sum(unitsOnOrder) FROM products"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM purchase_orders WHERE opening")
            )
        }

        // Then every product's figure is its opening orders' outstanding quantity, and there is something on order
        #expect(mismatched == 0)
        #expect((onOrder ?? 0) > 0)
        #expect((opening ?? 0) > 0)
    }

    @Test func sendingPutsTheLinesOnOrder() async throws {
        // Given a product with nothing on order
        let buyer = try await Buyer.make()

        // When a purchase order of 30 is written, then sent
        let draft = try await buyer.purchasing.create(
            PurchaseOrderDraft(
                supplierID: buyer.supplierID,
                lines: [PurchaseLineDraft(productID: buyer.productID, quantity: 30, unitCost: Money(cents: 400))]
            )
        )
        let onOrderAsDraft = try buyer.product().unitsOnOrder
        let sent = try await buyer.purchasing.send(number: draft.order.number)

        // Then a draft puts nothing on order, and the sent order puts 30
        #expect(onOrderAsDraft == 0)
        #expect(sent.order.status == .sent)
        #expect(try buyer.product().unitsOnOrder == 30)
    }

    @Test func receivingInPartsMovesStockOnOrderAndStatus() async throws {
        // Given a sent order of 30
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 30, cost: "4.00")

        // When 12 arrive, then the other 18
        let first = try await buyer.receive(order, 12)
        let (stockAfterFirst, onOrderAfterFirst) = (try buyer.product().unitsInStock, try buyer.product().unitsOnOrder)
        let second = try await buyer.receive(order, 18)

        // Then the order went partly received, then received; stock rose by each; nothing is left on order
        #expect(first.order.status == .partiallyReceived)
        #expect((stockAfterFirst, onOrderAfterFirst) == (12, 18))
        #expect(second.order.status == .received)
        #expect(second.lines.map(\.received) == [30])
        #expect((try buyer.product().unitsInStock, try buyer.product().unitsOnOrder) == (30, 0))
        #expect(second.receipts.map(\.movement.reason) == [.purchaseReceipt, .purchaseReceipt])
    }

    @Test func theMovingAverageCostFollowsAHandComputedExample() async throws {
        // Given an empty shelf
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 10, cost: "4.00")
        let second = try await buyer.sentOrder(quantity: 5, cost: "7.00")
        let third = try await buyer.sentOrder(quantity: 3, cost: "3.33")

        // When 10 arrive at 4.00, 5 at 7.00 and 3 at 3.33, and the last receipt is then reversed
        let a = try await buyer.receive(order, 10).receipts.last?.movement.averageCost
        let b = try await buyer.receive(second, 5).receipts.last?.movement.averageCost
        let c = try await buyer.receive(third, 3).receipts.last
        let reversed = try await buyer.purchasing.reverse(receiptID: try #require(c?.movement.id))

        // Then the average is 4.00, (10 × 4.00 + 5 × 7.00) / 15 = 5.00, (15 × 5.00 + 3 × 3.33) / 18 = 4.7217 → 4.72,
        // and back to (18 × 4.72 − 3 × 3.33) / 15 = 4.998 → 5.00
        #expect(a == Money(cents: 400))
        #expect(b == Money(cents: 500))
        #expect(c?.movement.averageCost == Money(cents: 472))
        #expect(reversed.receipts.last?.movement.averageCost == Money(cents: 500))
        let current = try await buyer.store.store.pool.read { db in try Costing.average(productID: buyer.productID, db) }
        #expect(current == Money(cents: 500))
    }

    @Test func aReversalTakesTheUnitsBackAndPutsThemOnOrderAgain() async throws {
        // Given an order of 20, received in full
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 20, cost: "2.50")
        let receipt = try #require(try await buyer.receive(order, 20).receipts.last?.movement.id)

        // When the receipt is reversed
        let after = try await buyer.purchasing.reverse(receiptID: receipt, note: "Wrong pallet")

        // Then stock is back to 0, the 20 are on order again, the order awaits them, and the receipt shows reversed
        #expect((try buyer.product().unitsInStock, try buyer.product().unitsOnOrder) == (0, 20))
        #expect(after.order.status == .sent)
        #expect(after.receipts.map(\.reversed) == [true, false])
        #expect(after.receipts.last?.movement.reversesID == receipt)
        // And a second reversal of it is refused
        let error = await northwindError { _ = try await buyer.purchasing.reverse(receiptID: receipt) }
        #expect(error?.description.contains("reversed already") == true)
    }

    @Test func receivingMoreThanIsAwaitedNeedsAReasonAndChangesNothingWithout() async throws {
        // Given an order of 10
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 10, cost: "1.00")

        // When 12 arrive, first without a reason, then with one
        let refused = await northwindError { _ = try await buyer.receive(order, 12) }
        let stockAfterRefusal = try buyer.product().unitsInStock
        let accepted = try await buyer.receive(order, 12, over: "Supplier sent a full case")

        // Then the first is refused naming the field and changes nothing; the second books 12 with its reason
        #expect(refused?.description.contains("lines[0].quantity") == true)
        #expect(refused?.description.contains("over-receipt") == true)
        #expect(stockAfterRefusal == 0)
        #expect(accepted.lines.map(\.received) == [12])
        #expect(accepted.receipts.last?.movement.overReceipt == "Supplier sent a full case")
        #expect(accepted.order.status == .received)
        #expect(try buyer.product().unitsOnOrder == 0)
    }

    @Test func theSameDeliverySentTwiceIsBookedOnce() async throws {
        // Given an order of 10
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 10, cost: "1.00")

        // When one delivery of 4 is submitted twice at once under one key, and once more later
        async let one = buyer.receive(order, 4, key: "delivery-1")
        async let two = buyer.receive(order, 4, key: "delivery-1")
        _ = try await (one, two)
        let again = try await buyer.receive(order, 4, key: "delivery-1")

        // Then 4 were booked, once
        #expect(again.receipts.count == 1)
        #expect(try buyer.product().unitsInStock == 4)
        #expect(try buyer.product().unitsOnOrder == 6)
    }

    @Test func aKeyUsedForAnotherDeliveryIsRefusedAndBooksNothing() async throws {
        // Given an order of 10 with a delivery of 4 booked under "d1"
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 10, cost: "1.00")
        _ = try await buyer.receive(order, 4, key: "d1")

        // When another delivery, of 3, is sent with the same key
        let error = await northwindError { _ = try await buyer.receive(order, 3, key: "d1") }

        // Then it is refused naming the key, and only the 4 are in
        #expect(error?.description.contains("requestKey 'd1'") == true)
        #expect(try buyer.product().unitsInStock == 4)
    }

    @Test func moreThanTwiceTheOrderIsNoOverReceipt() async throws {
        // Given an order of 10
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 10, cost: "1.00")

        // When 21 arrive, with a reason, and then 12 with a reason of one character
        let absurd = await northwindError { _ = try await buyer.receive(order, 21, over: "A whole pallet") }
        let unexplained = await northwindError { _ = try await buyer.receive(order, 12, over: ".") }

        // Then both are refused naming the field, and nothing is in
        #expect(absurd?.description.contains("more than twice") == true)
        #expect(unexplained?.description.contains("overReceipt") == true)
        #expect(try buyer.product().unitsInStock == 0)
    }

    @Test func anOrderRefusedOnSendingLeavesNoDraft() async throws {
        // Given a store
        let buyer = try await Buyer.make()
        let before = try buyer.store.count("SELECT count(*) FROM purchase_orders")

        // When an order with no cost is written and sent at once
        let draft = PurchaseOrderDraft(supplierID: buyer.supplierID, lines: [PurchaseLineDraft(productID: buyer.productID, quantity: 5)])
        let error = await northwindError { _ = try await buyer.purchasing.create(draft, send: true) }

        // Then it is refused, and no draft was left behind
        #expect(error?.description.contains("unit cost") == true)
        #expect(try buyer.store.count("SELECT count(*) FROM purchase_orders") == before)
    }

    @Test func theProposalTurnedIntoDraftsTwiceOrdersOnce() async throws {
        // Given a demo store whose proposal has been turned into drafts
        let store = try TemporaryStore(seed: DemoData.Options(scale: 1))
        let first = try await store.backoffice.purchasing.draftsFromProposal()

        // When it is done again (a second click)
        let second = try await store.backoffice.purchasing.draftsFromProposal()

        // Then the second wrote nothing: every product proposed is on a draft already
        #expect(!first.isEmpty)
        #expect(second.isEmpty)
    }

    @Test func reversingTheOnlyReceiptOnAShelfPutsTheAverageBack() async throws {
        // Given an empty shelf that received 10 at 4.00, then 10 at 6.00 (average 5.00), all of it sold but 10
        let buyer = try await Buyer.make()
        _ = try await buyer.receive(try await buyer.sentOrder(quantity: 10, cost: "4.00"), 10)
        let dear = try await buyer.receive(try await buyer.sentOrder(quantity: 10, cost: "6.00"), 10)
        _ = try await buyer.store.backoffice.stock.adjust(productID: buyer.productID, countedQuantity: 10)

        // When the 6.00 receipt is reversed, leaving nothing on the shelf
        let back = try await buyer.purchasing.reverse(receiptID: try #require(dear.receipts.last?.movement.id))

        // Then the average is what it was before that receipt, not the cost taken back
        #expect(back.receipts.last?.movement.averageCost == Money(cents: 400))
    }

    @Test func aCancelledOrderReceivesNothingAndLeavesNothingOnOrder() async throws {
        // Given an order of 10 with 3 received
        let buyer = try await Buyer.make()
        let order = try await buyer.sentOrder(quantity: 10, cost: "1.00")
        _ = try await buyer.receive(order, 3)

        // When it is cancelled, and a receipt is then tried
        let cancelled = try await buyer.purchasing.cancel(number: order.order.number)
        let error = await northwindError { _ = try await buyer.receive(order, 1) }

        // Then the 3 stay, nothing is on order, and the receipt is refused saying why
        #expect(cancelled.order.status == .cancelled)
        #expect((try buyer.product().unitsInStock, try buyer.product().unitsOnOrder) == (3, 0))
        #expect(error?.description.contains("is cancelled") == true)
    }

    @Test func aLineReceivedInFullTakesNoMore() async throws {
        // Given an order of two products, the first received in full
        let buyer = try await Buyer.make()
        let other = try await buyer.store.store.pool.read { db in
            try #require(
                try Int64.fetchOne(
                    db,
                    sql: "SELECT id FROM products WHERE NOT discontinued AND id <> ? ORDER BY id LIMIT 1",
                    arguments: [buyer.productID]
                )
            )
        }
        let written = try await buyer.purchasing.create(
            PurchaseOrderDraft(
                supplierID: buyer.supplierID,
                lines: [
                    PurchaseLineDraft(productID: buyer.productID, quantity: 5, unitCost: Money(cents: 100)),
                    PurchaseLineDraft(productID: other, quantity: 5, unitCost: Money(cents: 100)),
                ]
            )
        )
        let order = try await buyer.purchasing.send(number: written.order.number)
        _ = try await buyer.receive(order, 5)

        // When more of the first arrives, even with a reason
        let error = await northwindError { _ = try await buyer.receive(order, 1, over: "extra") }

        // Then it is refused: the line awaits nothing
        #expect(error?.description.contains("received in full") == true)
        #expect(try buyer.product().unitsInStock == 5)
    }

    @Test func badPurchaseOrdersAreRefusedNamingTheField() async throws {
        // Given a store with a discontinued product
        let buyer = try await Buyer.make()
        let discontinued = try await buyer.store.store.pool.read { db in
            try #require(try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE discontinued LIMIT 1"))
        }
        let before = try buyer.store.count("SELECT count(*) FROM purchase_orders")

        // When orders are written for it, for a supplier that does not exist, at an absurd cost and quantity
        let cases: [(PurchaseOrderDraft, String)] = [
            (PurchaseOrderDraft(supplierID: buyer.supplierID, lines: [PurchaseLineDraft(productID: discontinued, quantity: 1)]), "discontinued"),
            (PurchaseOrderDraft(supplierID: 999_999, lines: [PurchaseLineDraft(productID: buyer.productID, quantity: 1)]), "supplierID"),
            (
                PurchaseOrderDraft(
                    supplierID: buyer.supplierID,
                    lines: [PurchaseLineDraft(productID: buyer.productID, quantity: 1, unitCost: Money(cents: 1_000_000_000))]
                ),
                "lines[0].unitCost"
            ),
            (
                PurchaseOrderDraft(supplierID: buyer.supplierID, lines: [PurchaseLineDraft(productID: buyer.productID, quantity: -4)]),
                "lines[0].quantity"
            ),
        ]
        for (draft, field) in cases {
            let error = await northwindError { _ = try await buyer.purchasing.create(draft) }
            // Then each names what is wrong
            #expect(error?.description.contains(field) == true, "\(field): \(error?.description ?? "accepted")")
        }
        // And nothing was written
        #expect(try buyer.store.count("SELECT count(*) FROM purchase_orders") == before)
    }

    @Test func aDraftWithoutCostsIsNotSent() async throws {
        // Given a draft whose line has no cost
        let buyer = try await Buyer.make()
        let draft = try await buyer.purchasing.create(
            PurchaseOrderDraft(supplierID: buyer.supplierID, lines: [PurchaseLineDraft(productID: buyer.productID, quantity: 5)])
        )

        // When it is sent
        let error = await northwindError { _ = try await buyer.purchasing.send(number: draft.order.number) }

        // Then it is refused, and stays a draft with nothing on order
        #expect(error?.description.contains("unit cost") == true)
        #expect(try await buyer.purchasing.purchaseOrder(number: draft.order.number).order.status == .draft)
        #expect(try buyer.product().unitsOnOrder == 0)
    }

    @Test func theProposalBringsLowProductsUpToTheTarget() async throws {
        // Given a product at its reorder level with nothing on order
        let buyer = try await Buyer.make()
        var product = try buyer.product()
        product.reorderLevel = 15
        _ = try await buyer.store.backoffice.catalogue.update(product)
        _ = try await buyer.store.backoffice.stock.adjust(productID: buyer.productID, countedQuantity: 12)

        // When the proposal is read and turned into drafts
        let proposal = try await buyer.purchasing.proposal()
        let line = proposal.flatMap(\.lines).first { $0.productID == buyer.productID }
        let drafts = try await buyer.purchasing.draftsFromProposal()

        // Then it proposes 2 × 15 − 12 = 18 under its supplier, and a draft per supplier holds that line
        #expect(line?.quantity == 18)
        #expect(proposal.first { $0.lines.contains { $0.productID == buyer.productID } }?.supplierID == buyer.supplierID)
        #expect(drafts.count == proposal.count)
        #expect(drafts.allSatisfy { $0.order.status == .draft })
        #expect(drafts.flatMap(\.lines).contains { $0.line.productID == buyer.productID && $0.line.quantity == 18 })
    }

    @Test func anEditNeverSetsUnitsOnOrder() async throws {
        // Given a product with 30 on order
        let buyer = try await Buyer.make()
        _ = try await buyer.sentOrder(quantity: 30, cost: "1.00")

        // When its details are saved with another figure for units on order
        var product = try buyer.product()
        product.unitsOnOrder = 999
        product.name += " (edited)"
        _ = try await buyer.store.backoffice.catalogue.update(product)

        // Then the name changed and units on order are still what the purchase order says
        #expect(try buyer.product().name.hasSuffix("(edited)"))
        #expect(try buyer.product().unitsOnOrder == 30)
    }

    @Test func headOfficeSeesAShopsPurchaseOrderAndItsReceiptsButCannotChangeThem() async throws {
        // Given head office with demo data and a London shop holding its catalogue
        let office = try TemporaryStore(seed: DemoData.Options(scale: 1))
        try await office.backoffice.syncEngine.join(ShopSyncTests.membership("HQ", role: "hq"), containerHasData: false)
        let london = try TemporaryStore()
        try await london.backoffice.syncEngine.join(ShopSyncTests.membership("LON"), containerHasData: true)
        try await SyncRelay.carry(from: office.backoffice, to: london.backoffice)
        let (productID, supplierID) = try await london.store.pool.read { db in
            let row = try #require(
                try Row.fetchOne(db, sql: "SELECT id, supplierID FROM products WHERE NOT discontinued AND supplierID IS NOT NULL ORDER BY id LIMIT 1")
            )
            return (row[0] as Int64, row[1] as Int64)
        }
        let officeOnOrder = try office.count("SELECT sum(unitsOnOrder) FROM products")

        // When London orders 10 at 3.00 and receives 4, and the changes reach head office
        let written = try await london.backoffice.purchasing.create(
            PurchaseOrderDraft(supplierID: supplierID, lines: [PurchaseLineDraft(productID: productID, quantity: 10, unitCost: Money(cents: 300))])
        )
        let number = written.order.number
        _ = try await london.backoffice.purchasing.send(number: number)
        let londonView = try await london.backoffice.purchasing.receive(
            number: number,
            lines: [ReceiptLine(productID: productID, quantity: 4)],
            requestKey: "d1"
        )
        try await SyncRelay.carry(from: london.backoffice, to: office.backoffice)

        // Then head office sees the order as London does, its own units on order unchanged, and may not change it
        let seen = try await office.backoffice.purchasing.purchaseOrder(number: number)
        #expect(seen.order.location == "LON")
        #expect(seen.order.status == .partiallyReceived)
        #expect(seen.lines.map(\.received) == londonView.lines.map(\.received))
        #expect(seen.receipts.last?.movement.averageCost == londonView.receipts.last?.movement.averageCost)
        #expect(try office.count("SELECT sum(unitsOnOrder) FROM products") == officeOnOrder)
        let error = await northwindError { _ = try await office.backoffice.purchasing.cancel(number: number) }
        #expect(error?.description.contains("belongs to site LON") == true)
    }
}
