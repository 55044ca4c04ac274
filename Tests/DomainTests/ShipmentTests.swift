import Foundation
import GRDB
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Shipments and backorders")
struct ShipmentTests {
    /// An order for 8 of Grandma's Mustard (5 on the shelf) and 12 Chai (50 on the shelf).
    func shortOrder(_ w: World, _ b: Backoffice, customer: String = "VINET") async throws -> String {
        let draft = OrderDraft(
            customerCode: customer,
            employeeID: w.nancy.id,
            orderDate: LocalDate("2026-11-20"),
            requiredDate: LocalDate("2026-12-18"),
            lines: [.init(productID: w.mustard.key, quantity: 8), .init(productID: w.chai.key, quantity: 12)]
        )
        return try await b.orders.create(draft).order.number
    }

    @Test func shipAvailableShipsWhatIsOnTheShelfAndBackordersTheRest() async throws {
        // Given an order short of 3 mustards
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        // When the packer ships what is available
        let shipment = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        // Then 5 mustards and 12 chai left, each line with one movement, and the order is partly shipped
        #expect(shipment.shipment.sequence == 1)
        #expect(shipment.lines.map(\.quantity) == [5, 12])
        #expect(shipment.orderStatus == .partlyShipped)
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 0)
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 38)
        #expect(try store.count("SELECT count(*) FROM stock_movements WHERE reason = 'shipped' AND shipmentLineID IS NOT NULL") == 2)
        let state = try await b.orders.fulfilment(number: number)
        #expect(state.status == .partlyShipped)
        #expect(state.lines.map(\.open) == [3, 0])
        #expect(try await b.orders.order(number: number).order.status == .new)
        #expect(try await b.orders.order(number: number).order.shippedDate == nil)
    }

    @Test func theBackorderQueueSaysWhenALineBecomesFillableAndTheSecondShipmentCompletesTheOrder() async throws {
        // Given an order shipped in part, 3 mustards backordered
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        let waiting = try await b.orders.backorders()
        #expect(waiting.items.map(\.line.open) == [3])
        #expect(waiting.items.map(\.line.fillable) == [0])
        // When 10 mustards arrive
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 10)
        // Then the line is fillable now, and shipping what is available completes the order on that day
        #expect(try await b.orders.backorders().items.map(\.line.fillable) == [3])
        let second = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-25"))
        #expect(second.shipment.sequence == 2)
        #expect(second.lines.map(\.quantity) == [3])
        #expect(second.orderStatus == .shipped)
        let order = try await b.orders.order(number: number).order
        #expect((order.status, order.shippedDate) == (.shipped, LocalDate("2026-11-25")))
        #expect(try await b.orders.backorders().total == 0)
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 7)
    }

    @Test func theQueueNamesThePurchaseOrderThatWillFillALine() async throws {
        // Given a backordered mustard and a sent purchase order for 20, expected on 2026-12-01
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        _ = try await b.orders.shipAvailable(number: number)
        let purchase = try await b.purchasing.create(
            PurchaseOrderDraft(
                supplierID: w.supplier.id ?? 0,
                expectedDate: LocalDate("2026-12-01"),
                lines: [.init(productID: w.mustard.key, quantity: 20, unitCost: Money(cents: 900))]
            )
        )
        _ = try await b.purchasing.send(number: purchase.order.number)
        // When the queue is read
        let line = try #require(try await b.orders.backorders().items.first)
        // Then it names that purchase order and its date
        #expect(line.coveredBy == CoveringPurchase(number: purchase.order.number, expectedDate: LocalDate("2026-12-01"), awaiting: 20))
    }

    @Test func shippingMoreThanIsOpenOrOnTheShelfIsRefusedAndChangesNothing() async throws {
        // Given an order short of 3 mustards
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        let changesBefore = try store.count("SELECT count(*) FROM change_log")
        // When more than ordered, and more than the shelf holds, are asked for
        let tooMany = await northwindError {
            _ = try await b.orders.ship(
                number: number,
                lines: [.init(productID: w.chai.key, quantity: 13), .init(productID: w.mustard.key, quantity: 6)]
            )
        }
        // Then each line's field is named, and nothing changed
        #expect(
            tooMany
                == .invalid([
                    .init("lines[0].quantity", "must not exceed the 12 unit(s) of 'Chai' still to ship"),
                    .init("lines[1].quantity", "only 5 unit(s) of 'Grandma's Mustard' are on the shelf"),
                ])
        )
        #expect(try store.count("SELECT count(*) FROM change_log") == changesBefore)
        #expect(try store.count("SELECT count(*) FROM shipments") == 0)
    }

    @Test func theSameRequestSentTwiceShipsOnce() async throws {
        // Given an order
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        // When the same form is sent twice, after stock arrived in between
        let first = try await b.orders.ship(number: number, lines: [.init(productID: w.chai.key, quantity: 4)], requestKey: "form-1")
        let again = try await b.orders.ship(number: number, lines: [.init(productID: w.chai.key, quantity: 4)], requestKey: "form-1")
        // Then one shipment left, and the second answer is the first shipment
        #expect(again == first)
        #expect(try store.count("SELECT count(*) FROM shipments") == 1)
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 46)
    }

    @Test func aCustomerWhoTakesCompleteShipmentsOnlyGetsAllOrNothing() async throws {
        // Given a customer who takes complete shipments only, and a short order
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        try await b.orders.setCompleteShipmentsOnly(customerCode: "VINET", true)
        let number = try await shortOrder(w, b)
        // When the packer ships what is available
        let error = await northwindError { _ = try await b.orders.shipAvailable(number: number) }
        // Then it is refused with the short line, and nothing left
        #expect(
            error
                == .insufficientStock(
                    orderNumber: number,
                    [.init(productID: w.mustard.key, productName: "Grandma's Mustard", ordered: 8, inStock: 5)]
                )
        )
        #expect(try await b.orders.fulfilment(number: number).completeShipmentsOnly)
        #expect(try store.count("SELECT count(*) FROM shipments") == 0)
    }

    @Test func cancellingAnOrderShippedInPartKeepsWhatShipped() async throws {
        // Given an order of mustard and cote, of which only 5 mustards shipped
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                orderDate: LocalDate("2026-11-20"),
                lines: [.init(productID: w.mustard.key, quantity: 8), .init(productID: w.cote.key, quantity: 2)]
            )
        ).order.number
        _ = try await b.orders.ship(number: number, lines: [.init(productID: w.mustard.key, quantity: 5)], shippedDate: LocalDate("2026-11-22"))
        // When the rest is cancelled
        let cancelled = try await b.orders.cancel(number: number)
        // Then the order is shipped on its last shipment's date, with what left and nothing more
        #expect((cancelled.order.status, cancelled.order.shippedDate) == (.shipped, LocalDate("2026-11-22")))
        #expect(cancelled.lines.map(\.line.productID) == [w.mustard.key])
        #expect(cancelled.lines.map(\.line.quantity) == [5])
        #expect(cancelled.subtotal == Money(cents: 5 * w.mustard.unitPrice.cents))
        #expect(try b.catalogue.product(id: w.cote.key).product.unitsInStock == 10)
    }

    @Test func executeOnAnOrderShippedInPartShipsTheRest() async throws {
        // Given an order shipped in part, and the missing mustards arrived
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        _ = try await b.orders.shipAvailable(number: number)
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 3)
        // When it is executed
        let done = try await b.orders.execute(number: number)
        // Then the second shipment carries the 3 mustards and the order is shipped
        #expect(done.order.status == .shipped)
        #expect(try await b.orders.fulfilment(number: number).shipments.map { $0.lines.map(\.quantity) } == [[5, 12], [3]])
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 0)
    }

    @Test func anOrderShippedInPartIsShortOnlyByWhatItStillAwaits() async throws {
        // Given an order shipped in part, 3 mustards still to ship and none on the shelf
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        _ = try await b.orders.shipAvailable(number: number)
        #expect(try await b.orders.order(number: number).lines.map(\.short) == [3, 0])
        // When 3 mustards arrive
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 3)
        // Then no line is short, and the orders list says it can be supplied
        #expect(try await b.orders.order(number: number).lines.map(\.short) == [0, 0])
        #expect(try await b.orders.list(OrderQuery(status: .new)).items.first { $0.order.number == number }?.isSupplyable == true)
    }

    @Test func twoPackersShippingAtOnceNeverShipMoreThanOrderedOrOnTheShelf() async throws {
        // Given an order short of 3 mustards
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        // When eight packers press "Ship available" at once
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { (try? await b.orders.shipAvailable(number: number)) != nil } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        // Then one shipment left, the other presses found nothing to ship, and no shelf went below zero
        #expect(results.filter { $0 }.count == 1)
        #expect(try store.count("SELECT count(*) FROM shipments") == 1)
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 0)
        #expect(try store.count("SELECT -sum(delta) FROM stock_movements WHERE reason = 'shipped'") == 17)
    }

    @Test func theStoreRefusesAShipmentLineBeyondTheOrderLine() async throws {
        // Given an order line of 12 chai, 4 of them shipped
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        let shipment = try await b.orders.ship(number: number, lines: [.init(productID: w.chai.key, quantity: 4)])
        // When a shipment line of 9 more is written by hand
        let refused = #expect(throws: DatabaseError.self) {
            try store.store.pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO shipment_lines (shipmentID, orderLineID, quantity)
                        SELECT ?, id, 9 FROM order_lines WHERE productID = ? AND orderID = (SELECT orderID FROM shipments WHERE id = ?)
                        """,
                    arguments: [shipment.shipment.id, w.chai.key, shipment.shipment.id]
                )
            }
        }
        // Then the store says why
        #expect(refused?.message?.contains("more of an order line than was ordered") == true)
    }

    @Test func aMovementThatDoesNotMatchItsShipmentLineOrIsChangedLaterIsRefused() async throws {
        // Given a shipment line of 4 chai
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        let shipment = try await b.orders.ship(number: number, lines: [.init(productID: w.chai.key, quantity: 4)])
        let orderID = try await b.orders.order(number: number).order.id
        // When a second movement names that line with another product, or another quantity, or the first is changed
        let write = { (sql: String, arguments: StatementArguments) in
            _ = await #expect(throws: DatabaseError.self, "\(sql)") {
                try await store.store.pool.write { db in try db.execute(sql: sql, arguments: arguments) }
            }
        }
        let line = try store.count("SELECT id FROM shipment_lines WHERE shipmentID = ?", [shipment.shipment.id])
        let insert = "INSERT INTO stock_movements (productID, delta, reason, orderID, shipmentLineID) VALUES (?, ?, 'shipped', ?, NULL)"
        // Then each is refused by the store: a movement ships its line's product and quantity, once, and never changes
        await write(insert.replacingOccurrences(of: "NULL)", with: "?)"), [w.mustard.key, -4, orderID, line])
        await write(insert.replacingOccurrences(of: "NULL)", with: "?)"), [w.chai.key, -3, nil, line])
        await write("UPDATE stock_movements SET delta = -500 WHERE shipmentLineID = ?", [line])
        #expect(try store.count("SELECT -sum(delta) FROM stock_movements WHERE reason = 'shipped'") == 4)
    }

    @Test func anOrderLineShippedByAnOlderVersionTakesNoShipmentLine() async throws {
        // Given an order line of 12 chai shipped whole the way versions before shipments did: a movement alone
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        let orderID = try await b.orders.order(number: number).order.id
        try await store.store.pool.write { db in
            try db.execute(
                sql: "INSERT INTO stock_movements (productID, delta, reason, orderID) VALUES (?, -12, 'shipped', ?)",
                arguments: [w.chai.key, orderID]
            )
        }
        // When a shipment of 1 more chai is asked for
        let error = await northwindError { _ = try await b.orders.ship(number: number, lines: [.init(productID: w.chai.key, quantity: 1)]) }
        // Then it is refused, and nothing more left the shelf
        #expect(error != nil)
        #expect(try store.count("SELECT count(*) FROM shipment_lines") == 0)
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 38)
    }
}
