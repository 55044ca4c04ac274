import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Orders")
struct OrderTests {
    func phoneOrder(_ w: World, _ lines: [OrderLineDraft]) -> OrderDraft {
        OrderDraft(
            customerCode: "VINET",
            employeeID: w.nancy.id,
            orderDate: LocalDate("2026-11-20"),
            requiredDate: LocalDate("2026-12-18"),
            shipVia: w.shipper.id,
            freight: Money(cents: 3238),
            lines: lines
        )
    }

    @Test func createTakesPricesFromProductsAndAddressFromTheCustomer() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let detail = try await store.backoffice.orders.create(
            phoneOrder(
                w,
                [
                    .init(productID: w.chai.key, quantity: 12), .init(productID: w.cote.key, quantity: 3, discount: 0.15),
                    .init(productID: w.mustard.key, quantity: 1, unitPrice: Money(cents: 2000)),
                ]
            )
        )
        let site = try await store.store.pool.read { db in try StoreMetadata.siteCode(db) }
        #expect(detail.order.number == "\(site)-1")
        #expect(detail.order.status == .new)
        #expect(detail.order.shipCity == "Reims")
        #expect(detail.lines.map(\.line.unitPrice) == [Money(cents: 1800), Money(cents: 26350), Money(cents: 2000)])
        // 12 × 18.00 = 216.00; 3 × 263.50 × 0.85 = 671.925 → 671.93; 1 × 20.00.
        #expect(detail.lines.map(\.total) == [Money(cents: 21600), Money(cents: 67193), Money(cents: 2000)])
        #expect(detail.subtotal == Money(cents: 90793))
        #expect(detail.total == Money(cents: 94031))
        #expect(try await store.backoffice.orders.order(number: detail.order.number.lowercased()).order.id == detail.order.id)
    }

    @Test func orderNumbersCarryTheSiteCodeAndNeverRepeat() async throws {
        let first = try TemporaryStore()
        let second = try TemporaryStore()
        var numbers = Set<String>()
        for store in [first, second] {
            let w = try await World.make(store.backoffice)
            for _ in 0..<3 {
                numbers.insert(try await store.backoffice.orders.create(phoneOrder(w, [.init(productID: w.chai.key, quantity: 1)])).order.number)
            }
        }
        #expect(numbers.count == 6)
        #expect(Set(numbers.map { $0.split(separator: "-")[0] }).count == 2)
    }

    @Test func anOrderTakenHereIsFoundByItsSequenceAlone() async throws {
        // Given an order taken here
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let taken = try await store.backoffice.orders.create(phoneOrder(w, [.init(productID: w.chai.key, quantity: 1)])).order
        // When it is asked for by the digits after the site code, as staff say it
        let sequence = String(try #require(taken.number.split(separator: "-").last))
        let found = try await store.backoffice.orders.order(number: sequence).order
        // Then it is that order; a sequence nothing has is not found
        #expect(found.id == taken.id)
        await #expect(throws: NorthwindError.notFound(entity: "order", key: "999")) { try await store.backoffice.orders.order(number: "999") }
    }

    @Test func badOrdersAreRefusedAndLeaveNothingBehind() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        #expect(
            await northwindError { _ = try await b.orders.create(phoneOrder(w, [])) }
                == .invalid([.init("lines", "an order needs at least one line")])
        )
        #expect(
            await northwindError {
                _ = try await b.orders.create(
                    phoneOrder(w, [.init(productID: w.chai.key, quantity: 0, discount: 1.5), .init(productID: w.chai.key, quantity: 1)])
                )
            }
                == .invalid([
                    .init("lines[0].quantity", "must be a whole number from 1 to 1,000,000"),
                    .init("lines[0].discount", "must be a fraction between 0 and 1, e.g. 0.15 for 15%"),
                    .init("lines[1].productID", "product #\(w.chai.key) is already on another line; change that line's quantity instead"),
                ])
        )
        #expect(
            await northwindError { _ = try await b.orders.create(phoneOrder(w, [.init(productID: w.oldTea.key, quantity: 1)])) }
                == .invalid([.init("lines[0].productID", "'Old Tea' is discontinued and can no longer be ordered")])
        )
        // The last line is bad: the order and its first line must not survive.
        #expect(
            await northwindError {
                _ = try await b.orders.create(phoneOrder(w, [.init(productID: w.chai.key, quantity: 1), .init(productID: 999, quantity: 1)]))
            }
                == .invalid([.init("lines[1].productID", "no product #999 exists")])
        )
        var unknown = phoneOrder(w, [.init(productID: w.chai.key, quantity: 1)])
        unknown.customerCode = "NOBODY"
        #expect(await northwindError { _ = try await b.orders.create(unknown) } == .notFound(entity: "customer", key: "'NOBODY'"))
        var early = phoneOrder(w, [.init(productID: w.chai.key, quantity: 1)])
        early.requiredDate = LocalDate("2026-01-01")
        #expect(
            await northwindError { _ = try await b.orders.create(early) }
                == .invalid([.init("requiredDate", "must not be before the order date 2026-11-20")])
        )
        #expect(try store.count("SELECT count(*) FROM orders") == 0)
        #expect(try store.count("SELECT count(*) FROM order_lines") == 0)
        let sequence = try await store.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM store_metadata WHERE key = 'orderSequence'")
        }
        #expect(sequence == "0")
    }

    @Test func listFiltersByStatusCustomerEmployeeAndDates() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let a = try await b.orders.create(phoneOrder(w, [.init(productID: w.chai.key, quantity: 1)]))
        var other = phoneOrder(w, [.init(productID: w.mustard.key, quantity: 50)])
        (other.customerCode, other.employeeID, other.orderDate, other.requiredDate) = ("ALFKI", w.andrew.id, LocalDate("2026-10-01"), nil)
        let c = try await b.orders.create(other)
        _ = try await b.orders.execute(number: a.order.number)

        #expect(try await b.orders.list(OrderQuery(status: .shipped)).items.map(\.order.number) == [a.order.number])
        let open = try await b.orders.list(OrderQuery(status: .new))
        #expect(open.items.map(\.order.number) == [c.order.number])
        #expect(open.items.first?.isSupplyable == false)
        #expect(open.items.first?.customerCode == "ALFKI")
        var query = OrderQuery()
        query.customerCode = "alfki"
        #expect(try await b.orders.list(query).items.map(\.order.number) == [c.order.number])
        query = OrderQuery()
        query.employeeID = w.nancy.id
        #expect(try await b.orders.list(query).items.map(\.order.number) == [a.order.number])
        query = OrderQuery()
        (query.from, query.to) = (LocalDate("2026-10-01"), LocalDate("2026-10-01"))
        #expect(try await b.orders.list(query).items.map(\.order.number) == [c.order.number])
        (query.from, query.to) = (LocalDate("2026-11-02"), LocalDate("2026-11-01"))
        #expect(
            await northwindError { _ = try await b.orders.list(query) }
                == .invalid([.init("from", "the range starts (2026-11-02) after it ends (2026-11-01)")])
        )
    }

    @Test func executeShipsTakesStockAndRecordsMovements() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let order = try await b.orders.create(
            phoneOrder(w, [.init(productID: w.chai.key, quantity: 12), .init(productID: w.cote.key, quantity: 10)])
        )
        #expect(try await b.orders.availability(number: order.order.number).map(\.short) == [0, 0])

        let shipped = try await b.orders.execute(number: order.order.number, employeeID: w.andrew.id, shippedDate: LocalDate("2026-11-21"))
        #expect(shipped.order.status == .shipped)
        #expect(shipped.order.shippedDate == LocalDate("2026-11-21"))
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 38)
        #expect(try b.catalogue.product(id: w.cote.key).product.unitsInStock == 0)
        let movement = try #require(try await b.stock.movements(productID: w.chai.key).first)
        #expect((movement.delta, movement.reason, movement.orderID, movement.employeeID) == (-12, .shipped, order.order.id, w.andrew.id))

        #expect(
            await northwindError { _ = try await b.orders.execute(number: order.order.number) }
                == .invalidState("Order \(order.order.number) is already shipped; only an open order can be executed or shipped.")
        )
    }

    @Test func executeRefusesShortOrdersAndChangesNothing() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let order = try await b.orders.create(
            phoneOrder(w, [.init(productID: w.chai.key, quantity: 5), .init(productID: w.mustard.key, quantity: 8)])
        )
        #expect(
            try await b.orders.availability(number: order.order.number)
                == [
                    LineAvailability(productID: w.chai.key, productName: "Chai", ordered: 5, inStock: 50),
                    LineAvailability(productID: w.mustard.key, productName: "Grandma's Mustard", ordered: 8, inStock: 5),
                ]
        )
        let changesBefore = try store.count("SELECT count(*) FROM change_log")

        let error = await northwindError { _ = try await b.orders.execute(number: order.order.number) }
        #expect(
            error
                == .insufficientStock(
                    orderNumber: order.order.number,
                    [.init(productID: w.mustard.key, productName: "Grandma's Mustard", ordered: 8, inStock: 5)]
                )
        )
        #expect(error?.description == "Order \(order.order.number) cannot be executed: Grandma's Mustard (ordered 8, in stock 5, short by 3).")
        #expect(try await b.orders.order(number: order.order.number).order.status == .new)
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 50)
        #expect(try store.count("SELECT count(*) FROM stock_movements WHERE reason = 'shipped'") == 0)
        #expect(try store.count("SELECT count(*) FROM change_log") == changesBefore)
    }

    @Test func editLinesOnlyWhileNew() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let order = try await b.orders.create(phoneOrder(w, [.init(productID: w.chai.key, quantity: 5)]))
        let edited = try await b.orders.updateLines(
            number: order.order.number,
            lines: [.init(productID: w.mustard.key, quantity: 2)],
            expectedVersion: 1
        )
        #expect(edited.lines.map(\.line.productID) == [w.mustard.key])
        #expect(edited.order.version == 2)
        #expect(
            await northwindError {
                _ = try await b.orders.updateLines(number: order.order.number, lines: [.init(productID: w.chai.key, quantity: 1)], expectedVersion: 1)
            }
                == .conflict("Someone else changed order \(order.order.number) after you opened it. Reload it and edit again.")
        )
        _ = try await b.orders.cancel(number: order.order.number)
        #expect(
            await northwindError {
                _ = try await b.orders.updateLines(number: order.order.number, lines: [.init(productID: w.chai.key, quantity: 1)])
            }
                == .invalidState("Order \(order.order.number) is cancelled; only new orders can be edited.")
        )
    }

    @Test func cancelOnlyWhileNew() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let order = try await b.orders.create(phoneOrder(w, [.init(productID: w.chai.key, quantity: 5)]))
        #expect(try await b.orders.cancel(number: order.order.number).order.status == .cancelled)
        #expect(
            await northwindError { _ = try await b.orders.cancel(number: order.order.number) }
                == .invalidState("Order \(order.order.number) is cancelled; only an open order, or what of it has not shipped, can be cancelled.")
        )
        #expect(
            await northwindError { _ = try await b.orders.execute(number: order.order.number) }
                == .invalidState("Order \(order.order.number) is already cancelled; only an open order can be executed or shipped.")
        )
        #expect(await northwindError { _ = try await b.orders.cancel(number: "NOPE-1") } == .notFound(entity: "order", key: "NOPE-1"))
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 50)
    }
}
