import Foundation
import GRDB
import Testing

@testable import Northwind
@testable import NorthwindStore
@testable import NorthwindTestSupport

/// The gross margin and the fill rate read summaries kept by triggers (v29). Each check sets them against the
/// queries they replaced, which read every line, movement and shipment: kept here as they were, as the oracle.
@Suite("Margin and fill summaries")
struct MarginAndFillSummaryTests {
    static let grossMarginFromTheLines = """
        WITH sold AS (
            SELECT ol.productID, ol.quantity, ol.extendedPriceCents AS sales,
                   (SELECT SUM(-m.delta * m.unitCostCents) FROM stock_movements m
                     WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped') AS cost,
                   (SELECT count(*) = 0 OR count(m.unitCostCents) < count(*) FROM stock_movements m
                     WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped') AS uncosted
            FROM orders o
            JOIN order_lines ol ON ol.orderID = o.id
            WHERE o.status = 'shipped' AND o.shippedDate BETWEEN coalesce(:from, '0000-01-01') AND coalesce(:to, '9999-12-31'))
        SELECT coalesce(c.name, '(no category)') AS "CategoryName", p.name AS "ProductName", SUM(x.quantity) AS "Units",
               SUM(x.sales) AS "Sales",
               CASE WHEN SUM(x.uncosted) > 0 THEN 'no cost' ELSE SUM(x.cost) END AS "Cost",
               CASE WHEN SUM(x.uncosted) > 0 THEN 'no cost' ELSE SUM(x.sales) - SUM(x.cost) END AS "Margin",
               CASE WHEN SUM(x.uncosted) > 0 OR SUM(x.sales) = 0 THEN NULL
                    ELSE round(100.0 * (SUM(x.sales) - SUM(x.cost)) / SUM(x.sales), 1) END AS "MarginPercent"
        FROM sold x
        JOIN products p ON p.id = x.productID
        LEFT JOIN categories c ON c.id = p.categoryID
        GROUP BY p.id
        ORDER BY c.id IS NULL, sqlserver_key(c.name), c.name, sqlserver_key(p.name), p.name, p.id
        """

    static let fillRateFromTheOrders = """
        WITH eligible AS (
            SELECT o.id, o.orderDate, o.status, o.shippedDate, ifnull(o.cancelledUnits, 0) AS cancelled,
                   date(o.orderDate, '+' || :days || ' days') AS due
            FROM orders o
            WHERE o.status <> 'cancelled' AND o.orderDate BETWEEN coalesce(:from, '0000-01-01') AND coalesce(:to, '9999-12-31')
              AND date(o.orderDate, '+' || :days || ' days') < date('now')),
        counted AS (
            SELECT e.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = e.id) + e.cancelled AS ordered,
                   CASE WHEN EXISTS (SELECT 1 FROM shipments s WHERE s.orderID = e.id)
                        THEN (SELECT ifnull(SUM(l.quantity), 0) FROM shipments s JOIN shipment_lines l ON l.shipmentID = s.id
                              WHERE s.orderID = e.id AND s.shippedDate <= e.due)
                        WHEN e.status = 'shipped' AND e.shippedDate <= e.due
                        THEN (SELECT SUM(quantity) FROM order_lines WHERE orderID = e.id)
                        ELSE 0 END AS inTime
            FROM eligible e)
        SELECT substr(orderDate, 1, 7) AS "Month", count(*) AS "Orders", SUM(ordered) AS "OrderedUnits",
               SUM(inTime) AS "ShippedInTime", round(100.0 * SUM(inTime) / SUM(ordered), 1) AS "FillRatePercent"
        FROM counted
        WHERE ordered > 0
        GROUP BY 1
        ORDER BY 1
        """

    /// Periods that are whole years, parts of years, a single day, whole years with days on either side, and open ends.
    static let periods: [(from: String?, to: String?)] = [
        (nil, nil), ("2026-01-01", "2026-12-31"), ("2025-12-01", "2026-01-15"), ("2026-01-09", "2026-01-09"),
        (nil, "2025-12-31"), ("2024-01-01", nil), ("2026-02-01", "2026-02-28"), ("2024-06-04", "2026-01-02"),
        ("2025-01-01", "2026-01-08"),
    ]

    /// Both reports, each from its summaries and from the old query, for every period and promise, must agree.
    static func expectBothReportsAgree(_ store: TemporaryStore, _ comment: Comment) throws {
        let margin = try #require(ReportQueries.all["gross_margin"])
        let fill = try #require(ReportQueries.all["fill_rate"])
        try store.store.pool.read { db in
            for period in periods {
                let dates: StatementArguments = ["from": period.from, "to": period.to]
                let kept = try Row.fetchAll(db, sql: margin, arguments: dates)
                #expect(kept == (try Row.fetchAll(db, sql: grossMarginFromTheLines, arguments: dates)), "\(comment), \(period)")
                for days in ["0", "1", "7", "30"] {
                    let arguments: StatementArguments = ["from": period.from, "to": period.to, "days": days]
                    #expect(
                        try Row.fetchAll(db, sql: fill, arguments: arguments)
                            == Row.fetchAll(db, sql: fillRateFromTheOrders, arguments: arguments),
                        "\(comment), \(period), within \(days) days"
                    )
                }
            }
        }
        try ReportSummaryTests.expectInStep(store, comment)
    }

    /// An order of 4 chai at 18.00 recorded as shipped by another tool, as history is: no shipments, no movements.
    static func recordShippedOrder(_ number: String, ordered: String, shipped: String, _ w: World, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO orders (number, customerID, orderDate, shippedDate, status) VALUES (?, ?, ?, ?, 'shipped');
                INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)
                  VALUES ((SELECT id FROM orders WHERE number = ?), ?, 1800, 4, 0, 7200);
                """,
            arguments: [number, w.vinet.id, ordered, shipped, number, w.chai.key]
        )
    }

    func order(_ b: Backoffice, _ w: World, _ date: String, _ lines: [OrderLineDraft]) async throws -> String {
        try await b.orders.create(OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, orderDate: LocalDate(date), lines: lines))
            .order.number
    }

    @Test func theMarginAndTheFillRateFollowShipmentsCostsAndCancellations() async throws {
        // Given the world's stock: 50 chai, 10 côte, 5 mustard
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice

        // When an order across the new year ships in two parts, a week apart
        let first = try await order(b, w, "2025-12-30", [.init(productID: w.mustard.key, quantity: 8), .init(productID: w.chai.key, quantity: 12)])
        _ = try await b.orders.shipAvailable(number: first, shippedDate: LocalDate("2026-01-02"))
        try Self.expectBothReportsAgree(store, "after a first part shipped")
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 3)
        _ = try await b.orders.shipAvailable(number: first, shippedDate: LocalDate("2026-01-09"))
        try Self.expectBothReportsAgree(store, "after the rest shipped")

        // And another ships whole the day it is taken, a third ships in part and its rest is cancelled,
        // a fourth waits and a fifth is cancelled whole
        _ = try await b.orders.execute(
            number: try await order(b, w, "2026-01-05", [.init(productID: w.cote.key, quantity: 2)]),
            shippedDate: LocalDate("2026-01-05")
        )
        let third = try await order(b, w, "2026-01-05", [.init(productID: w.chai.key, quantity: 10), .init(productID: w.mustard.key, quantity: 2)])
        _ = try await b.orders.shipAvailable(number: third, shippedDate: LocalDate("2026-01-20"))
        _ = try await b.orders.cancel(number: third)
        _ = try await order(b, w, "2026-02-10", [.init(productID: w.cote.key, quantity: 1)])
        _ = try await b.orders.cancel(number: try await order(b, w, "2026-02-10", [.init(productID: w.chai.key, quantity: 3)]))
        try Self.expectBothReportsAgree(store, "after shipping whole, in part, and cancelling")

        // And writes another tool could make: costs given to what shipped, one taken back, and an order of 2024
        // recorded as shipped without shipments, changed, then deleted
        try await store.store.pool.write { db in
            try db.execute(sql: "UPDATE stock_movements SET unitCostCents = 400 WHERE reason = 'shipped' AND productID = ?", arguments: [w.chai.key])
            try db.execute(
                sql: "UPDATE stock_movements SET unitCostCents = 20000 WHERE reason = 'shipped' AND productID = ?",
                arguments: [w.cote.key]
            )
            try Self.recordShippedOrder("H1", ordered: "2024-06-01", shipped: "2024-06-04", w, db)
        }
        try Self.expectBothReportsAgree(store, "after costs were given and an old order recorded")
        try await store.store.pool.write { db in
            let line = "order_lines (orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)"
            let old = "(SELECT id FROM orders WHERE number = 'H1')"
            // An insert a conflict skips, and one that updates instead: neither may count the line twice.
            try db.execute(sql: "INSERT OR IGNORE INTO \(line) VALUES (\(old), ?, 1800, 4, 0, 7200)", arguments: [w.chai.key])
            try db.execute(
                sql: """
                    INSERT INTO \(line) VALUES (\(old), ?, 1800, 6, 0, 10800)
                    ON CONFLICT (orderID, productID) DO UPDATE SET quantity = excluded.quantity, extendedPriceCents = excluded.extendedPriceCents
                    """,
                arguments: [w.chai.key]
            )
            // An order with units cancelled and no lines left.
            try db.execute(
                sql: "INSERT INTO orders (number, customerID, orderDate, status, cancelledUnits) VALUES ('H3', ?, '2026-01-05', 'new', 3)",
                arguments: [w.vinet.id]
            )
        }
        try Self.expectBothReportsAgree(store, "after an insert a conflict skipped, an upsert, and an order without lines")
        try await store.store.pool.write { db in
            try db.execute(
                sql:
                    "UPDATE stock_movements SET unitCostCents = NULL WHERE id = (SELECT max(id) FROM stock_movements WHERE reason = 'shipped' AND productID = ?)",
                arguments: [w.chai.key]
            )
            try db.execute(sql: "UPDATE orders SET orderDate = '2024-05-30' WHERE number = 'H1'")
            try db.execute(
                sql: "UPDATE order_lines SET quantity = 5, extendedPriceCents = 9000 WHERE orderID = (SELECT id FROM orders WHERE number = 'H1')"
            )
        }
        try Self.expectBothReportsAgree(store, "after a cost was taken back and the old order changed")
        try await store.store.pool.write { db in
            try db.execute(sql: "DELETE FROM orders WHERE number IN ('H1', 'H3')")
        }
        // Then at each step both reports read from the summaries what the old queries read from every row
        try Self.expectBothReportsAgree(store, "after the old order was deleted")
    }

    @Test func aBulkLoadRebuildsTheMarginAndFillSummaries() async throws {
        // Given an order shipped in part, with its summaries emptied as a load's rebuild would find them
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await order(b, w, "2026-03-02", [.init(productID: w.mustard.key, quantity: 8)])
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-03-04"))
        // When the summaries are computed afresh around a load that ships an old order whole
        try await store.store.pool.write { db in
            try Schema.rebuildingSummaries(db) {
                try db.execute(sql: "DELETE FROM product_year_margin; DELETE FROM order_day_fill; DELETE FROM shipped_day_fill")
                try Self.recordShippedOrder("H2", ordered: "2025-06-01", shipped: "2025-06-09", w, db)
            }
        }
        // Then they hold both orders, as the old queries read them
        #expect(try store.count("SELECT count(*) FROM shipped_day_fill WHERE units > 0") == 2)
        try Self.expectBothReportsAgree(store, "after a rebuild")
    }
}
