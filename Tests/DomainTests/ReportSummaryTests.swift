import Foundation
import GRDB
import NorthwindLoading
import Testing

@testable import Northwind
@testable import NorthwindStore
@testable import NorthwindTestSupport

/// The report summaries are derived by triggers; each check recomputes them from the orders and lines by a plain
/// query written here, independently of the triggers and of the store's rebuild.
@Suite("Report summaries")
struct ReportSummaryTests {
    /// Each year summary's rows that count (rows fallen to zero stay, and reports skip them), and the same figures
    /// worked out from the orders and lines.
    static let yearSummaries = [
        (
            """
            SELECT basis, year, productID, cancelled, lineCount, quantity, amountCents FROM product_year_sales
            WHERE lineCount <> 0 ORDER BY 1, 2, 3, 4
            """,
            """
            SELECT 'ordered' AS basis, CAST(substr(o.orderDate, 1, 4) AS INTEGER) AS year, ol.productID,
                   o.status = 'cancelled' AS cancelled, count(*) AS lineCount, sum(ol.quantity) AS quantity,
                   sum(ol.extendedPriceCents) AS amountCents
            FROM order_lines ol JOIN orders o ON o.id = ol.orderID GROUP BY 1, 2, 3, 4
            UNION ALL
            SELECT 'shipped', CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, o.status = 'cancelled', count(*),
                   sum(ol.quantity), sum(ol.extendedPriceCents)
            FROM order_lines ol JOIN orders o ON o.id = ol.orderID WHERE o.shippedDate IS NOT NULL GROUP BY 1, 2, 3, 4
            ORDER BY 1, 2, 3, 4
            """
        ),
        (
            """
            SELECT year, customerID, cancelled, orders, linedOrders, amountCents FROM customer_year_sales
            WHERE orders <> 0 ORDER BY 1, 2, 3
            """,
            """
            SELECT CAST(substr(orderDate, 1, 4) AS INTEGER) AS year, customerID, status = 'cancelled' AS cancelled,
                   count(*) AS orders, sum(lines > 0) AS linedOrders, sum(cents) AS amountCents
            FROM (SELECT o.*, (SELECT count(*) FROM order_lines WHERE orderID = o.id) AS lines,
                         (SELECT ifnull(sum(extendedPriceCents), 0) FROM order_lines WHERE orderID = o.id) AS cents
                  FROM orders o)
            GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """
        ),
        (
            """
            SELECT year, employeeID, cancelled, linedOrders, amountCents FROM employee_year_sales
            WHERE linedOrders <> 0 ORDER BY 1, 2, 3
            """,
            """
            SELECT CAST(substr(o.orderDate, 1, 4) AS INTEGER) AS year, o.employeeID, o.status = 'cancelled' AS cancelled,
                   count(DISTINCT o.id) AS linedOrders, sum(ol.extendedPriceCents) AS amountCents
            FROM orders o JOIN order_lines ol ON ol.orderID = o.id WHERE o.employeeID IS NOT NULL
            GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """
        ),
        (
            """
            SELECT year, productID, lineCount, quantity, salesCents, costCents, uncostedLines FROM product_year_margin
            WHERE lineCount <> 0 ORDER BY 1, 2
            """,
            """
            SELECT year, productID, count(*) AS lineCount, sum(quantity) AS quantity, sum(sales) AS salesCents,
                   sum(cost) AS costCents, sum(moved = 0 OR costed < moved) AS uncostedLines
            FROM (SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER) AS year, ol.productID, ol.quantity,
                         ol.extendedPriceCents AS sales,
                         (SELECT ifnull(sum(-m.delta * m.unitCostCents), 0) FROM stock_movements m
                           WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped') AS cost,
                         (SELECT count(*) FROM stock_movements m
                           WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped') AS moved,
                         (SELECT count(m.unitCostCents) FROM stock_movements m
                           WHERE m.orderID = o.id AND m.productID = ol.productID AND m.reason = 'shipped') AS costed
                  FROM orders o JOIN order_lines ol ON ol.orderID = o.id WHERE o.status = 'shipped')
            GROUP BY 1, 2 ORDER BY 1, 2
            """
        ),
        (
            "SELECT orderDate, orders, orderedUnits FROM order_day_fill WHERE orders <> 0 ORDER BY 1",
            """
            SELECT orderDate, count(*) AS orders, sum(ordered) AS orderedUnits
            FROM (SELECT o.orderDate, sum(ol.quantity) + ifnull(o.cancelledUnits, 0) AS ordered
                  FROM orders o LEFT JOIN order_lines ol ON ol.orderID = o.id WHERE o.status <> 'cancelled' GROUP BY o.id)
            WHERE ordered > 0 GROUP BY 1 ORDER BY 1
            """
        ),
        (
            "SELECT orderDate, lagDays, units FROM shipped_day_fill WHERE units <> 0 ORDER BY 1, 2",
            """
            SELECT orderDate, lagDays, sum(units) AS units
            FROM (SELECT o.orderDate, CAST(julianday(s.shippedDate) - julianday(o.orderDate) AS INTEGER) AS lagDays,
                         l.quantity AS units
                  FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
                  WHERE o.status <> 'cancelled'
                  UNION ALL
                  SELECT o.orderDate, CAST(julianday(o.shippedDate) - julianday(o.orderDate) AS INTEGER), ol.quantity
                  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
                  WHERE o.status = 'shipped' AND o.id NOT IN (SELECT orderID FROM shipments))
            GROUP BY 1, 2 ORDER BY 1, 2
            """
        ),
    ]

    static func expectInStep(_ store: TemporaryStore, _ comment: Comment) throws {
        try store.store.pool.read { db in
            let totals = try Row.fetchAll(db, sql: "SELECT orderID, lineCount, amountCents FROM order_totals ORDER BY orderID")
            let recomputed = try Row.fetchAll(
                db,
                sql: """
                    SELECT orderID, count(*) AS lineCount, sum(extendedPriceCents) AS amountCents
                    FROM order_lines GROUP BY orderID ORDER BY orderID
                    """
            )
            #expect(totals == recomputed, comment)
            for (kept, recomputed) in yearSummaries {
                #expect(try Row.fetchAll(db, sql: kept) == Row.fetchAll(db, sql: recomputed), comment)
            }
        }
    }

    @Test func summariesFollowEveryChangeToOrdersAndLines() async throws {
        let (store, w) = try await ManagersReportTests.world()
        let b = store.backoffice
        try Self.expectInStep(store, "after the orders of the world")
        let numbers = try await store.store.pool.read { db in try String.fetchAll(db, sql: "SELECT number FROM orders ORDER BY id") }
        // The world's cancelled order keeps its total, counted apart from the orders that sell.
        #expect(try store.count("SELECT sum(lineCount) FROM product_year_sales WHERE basis = 'ordered' AND cancelled = 0") == 4)
        #expect(try store.count("SELECT count(*) FROM order_totals") == 5)

        // O1 edited: Chai 5 × 18.00 and Mustard 1 × 25.00 = 115.00.
        _ = try await b.orders.updateLines(
            number: numbers[0],
            lines: [
                .init(productID: w.chai.key, quantity: 5),
                .init(productID: w.mustard.key, quantity: 1),
            ]
        )
        #expect(
            try store.count(
                "SELECT amountCents FROM order_totals t JOIN orders o ON o.id = t.orderID WHERE o.number = ?",
                [numbers[0]]
            ) == 11500
        )
        try Self.expectInStep(store, "after editing an order's lines")

        _ = try await b.orders.cancel(number: numbers[3])
        try Self.expectInStep(store, "after cancelling an order")
        let top = try await b.reports.run("top-products")
        // Côte 2 × 263.50 (O3); Mustard 8 (O2) + 1 (O1) × 25.00; Chai 5 × 18.00 (O1), O4 and O5 being cancelled.
        #expect(ManagersReportTests.column(top, "ProductName") == ["Côte de Blaye", "Grandma's Mustard", "Chai"])
        #expect(ManagersReportTests.column(top, "Quantity") == ["2", "9", "5"])
        #expect(ManagersReportTests.column(top, "Sales") == ["527.00", "225.00", "90.00"])

        // Writes that the app does not make, but another tool could: the triggers still follow.
        try await store.store.pool.write { db in
            try db.execute(sql: "UPDATE orders SET orderDate = '2026-09-30' WHERE number = ?", arguments: [numbers[1]])
            try db.execute(sql: "UPDATE orders SET status = 'new' WHERE number = ?", arguments: [numbers[4]])
            try db.execute(
                sql:
                    "UPDATE order_lines SET orderID = (SELECT id FROM orders WHERE number = ?) WHERE productID = ? AND orderID = (SELECT id FROM orders WHERE number = ?)",
                arguments: [numbers[2], w.mustard.key, numbers[0]]
            )
            try db.execute(sql: "DELETE FROM orders WHERE number = ?", arguments: [numbers[4]])
            try db.execute(
                sql:
                    "UPDATE orders SET customerID = (SELECT id FROM customers WHERE code = 'ALFKI'), employeeID = NULL, shippedDate = '2025-12-31' WHERE number = ?",
                arguments: [numbers[2]]
            )
        }
        try Self.expectInStep(
            store,
            "after moving a line, changing a date, a status, a customer, an employee and a shipping date, and deleting an order"
        )
        try await store.store.pool.write { db in
            // (An order that has not shipped: what shipped keeps its lines, by the ledger's rules.)
            try db.execute(sql: "DELETE FROM order_lines WHERE orderID = (SELECT id FROM orders WHERE number = ?)", arguments: [numbers[0]])
        }
        // An order without lines has no total, as "Order Subtotals" leaves it out.
        #expect(try store.count("SELECT count(*) FROM order_totals t JOIN orders o ON o.id = t.orderID WHERE o.number = ?", [numbers[0]]) == 0)
        try Self.expectInStep(store, "after deleting an order's lines")
    }

    /// A store made before the stored line amount (v3) and its orders: opening it migrates the lines and fills the
    /// summaries, with amounts worked out by hand.
    @Test func aStoreWithOrdersMigratesToTheSummaries() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let old = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(old, upTo: "v3: report indexes")
            try old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO customers (id, code, companyName) VALUES (1, 'VINET', 'Vins et alcools Chevalier');
                        INSERT INTO products (id, name, unitPriceCents) VALUES (1, 'Chai', 1800), (2, 'Ikura', 3100);
                        INSERT INTO orders (id, number, customerID, orderDate, status) VALUES
                          (1, '10248', 1, '1996-07-04', 'new'), (2, '10249', 1, '1996-07-05', 'cancelled');
                        INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount) VALUES
                          (1, 1, 1800, 12, 0), (1, 2, 3100, 10, 0.25), (2, 1, 1800, 1, 0);
                        """
                )
            }
        }
        let store = try Store(StoreConfiguration(path: path))
        try store.pool.read { db in
            // 12 × 18.00 = 216.00; 10 × 31.00 less 25% = 232.50.
            #expect(try Int.fetchAll(db, sql: "SELECT extendedPriceCents FROM order_lines ORDER BY id") == [21600, 23250, 1800])
            let totals = try Row.fetchAll(db, sql: "SELECT orderID, lineCount, amountCents FROM order_totals ORDER BY orderID")
            #expect(totals == [["orderID": 1, "lineCount": 2, "amountCents": 44850], ["orderID": 2, "lineCount": 1, "amountCents": 1800]])
            // 1996's sales of orders not cancelled: Chai 216.00, Ikura 232.50; the cancelled order's Chai apart.
            let sold = try Row.fetchAll(
                db,
                sql: "SELECT productID, cancelled, amountCents FROM product_year_sales WHERE basis = 'ordered' AND year = 1996 ORDER BY 1, 2"
            )
            #expect(
                sold == [
                    ["productID": 1, "cancelled": 0, "amountCents": 21600], ["productID": 1, "cancelled": 1, "amountCents": 1800],
                    ["productID": 2, "cancelled": 0, "amountCents": 23250],
                ]
            )
            #expect(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty)
        }
    }
}
