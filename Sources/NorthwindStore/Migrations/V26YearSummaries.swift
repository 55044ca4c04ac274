import GRDB

extension Schema {
    /// Sales per year, kept by triggers in the writer's transaction as `order_totals` is, so that a year's report
    /// sums a few thousand rows instead of the year's lines (Category Sales for a year at scale 100: 150 ms of
    /// GROUP BY over 70k lines). Derived, so none syncs: each store computes its own.
    /// - `product_year_sales`: per product, the lines of orders placed (`ordered`) or shipped (`shipped`) in a year.
    /// - `customer_year_sales`, `employee_year_sales`: orders placed in a year and their totals.
    /// Each row also says whether its orders are cancelled: the classic views count every order, the manager's
    /// reports only those not cancelled. A period that is not whole years adds its other days from the orders.
    /// A row whose counts fall to zero stays, and reports skip it: there is one per key ever used, and clearing them
    /// would add a statement per key to every write.
    /// `sold_lines` (v5) did the manager's product report and is gone; its triggers are made again without it.
    static func v26YearSummaries(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER order_lines_summary_insert;
                DROP TRIGGER order_lines_summary_delete;
                DROP TRIGGER order_lines_summary_update;
                DROP TRIGGER orders_summary_update;
                DROP TABLE sold_lines;
                CREATE TABLE product_year_sales (
                  basis TEXT NOT NULL CHECK (basis IN ('ordered', 'shipped')),
                  year INTEGER NOT NULL,
                  productID INTEGER NOT NULL,
                  cancelled INTEGER NOT NULL,
                  lineCount INTEGER NOT NULL,
                  quantity INTEGER NOT NULL,
                  amountCents INTEGER NOT NULL,
                  PRIMARY KEY (basis, year, productID, cancelled)) WITHOUT ROWID;
                CREATE TABLE customer_year_sales (
                  year INTEGER NOT NULL,
                  customerID INTEGER NOT NULL,
                  cancelled INTEGER NOT NULL,
                  orders INTEGER NOT NULL,
                  linedOrders INTEGER NOT NULL,
                  amountCents INTEGER NOT NULL,
                  PRIMARY KEY (year, customerID, cancelled)) WITHOUT ROWID;
                CREATE TABLE employee_year_sales (
                  year INTEGER NOT NULL,
                  employeeID INTEGER NOT NULL,
                  cancelled INTEGER NOT NULL,
                  linedOrders INTEGER NOT NULL,
                  amountCents INTEGER NOT NULL,
                  PRIMARY KEY (year, employeeID, cancelled)) WITHOUT ROWID;
                """
        )
        // Filled before the triggers exist: the rebuild's own writes to order_totals must not count twice.
        try rebuildSalesSummaries(db)
        try db.execute(sql: yearSummaryTriggers)
    }

    private static func year(_ date: String) -> String { "CAST(substr(\(date), 1, 4) AS INTEGER)" }

    // guide: begin year-summary
    /// Adds (`sign` "+") or takes away ("-") the lines that `lines` selects (columns productID, quantity, cents) of
    /// the order `order` (an alias or OLD/NEW with orderDate, shippedDate, status), for both bases.
    private static func productSales(_ sign: String, lines: String, order o: String) -> String {
        """
        INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
          SELECT 'ordered', \(year("\(o).orderDate")), x.productID, \(o).status = 'cancelled', \(sign)1, \(sign)x.quantity, \(sign)x.cents \(lines)
          UNION ALL
          SELECT 'shipped', \(year("\(o).shippedDate")), x.productID, \(o).status = 'cancelled', \(sign)1, \(sign)x.quantity, \(sign)x.cents \(lines) AND \(o).shippedDate IS NOT NULL
          ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
            amountCents = amountCents + excluded.amountCents;
        """
    }
    // guide: end year-summary

    /// Adds or takes away an order's own counts (`orders`, `lined`, `cents`, expressions) for its customer and
    /// employee; `order` is as above with customerID and employeeID, `source` the FROM/WHERE that yields one row.
    private static func orderSales(_ order: String, orders: String, lined: String, cents: String, source: String) -> String {
        """
        INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
          SELECT \(year("\(order).orderDate")), \(order).customerID, \(order).status = 'cancelled', \(orders), \(lined), \(cents) \(source)
          ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, linedOrders = linedOrders + excluded.linedOrders,
            amountCents = amountCents + excluded.amountCents;
        INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
          SELECT \(year("\(order).orderDate")), \(order).employeeID, \(order).status = 'cancelled', \(lined), \(cents) \(source)
            AND \(order).employeeID IS NOT NULL
          ON CONFLICT DO UPDATE SET linedOrders = linedOrders + excluded.linedOrders, amountCents = amountCents + excluded.amountCents;
        """
    }

    /// The lines of an order: a line's triggers find its order; an order's triggers, its lines. A line deleted with
    /// its order (ON DELETE CASCADE) finds no order: the order's own BEFORE DELETE trigger has taken it away.
    static var yearSummaryTriggers: String {
        let lineOf = { (line: String) in
            "FROM (SELECT \(line).productID AS productID, \(line).quantity AS quantity, \(line).extendedPriceCents AS cents) x, orders o WHERE o.id = \(line).orderID"
        }
        let linesOf = { (order: String) in
            "FROM (SELECT productID, quantity, extendedPriceCents AS cents FROM order_lines WHERE orderID = \(order).id) x WHERE 1"
        }
        let totalOf = { (order: String) in "FROM order_totals t WHERE t.orderID = \(order).id" }
        return """
            CREATE TRIGGER order_lines_summary_insert AFTER INSERT ON order_lines BEGIN
              INSERT INTO order_totals (orderID, lineCount, amountCents) VALUES (NEW.orderID, 1, NEW.extendedPriceCents)
                ON CONFLICT (orderID) DO UPDATE SET lineCount = lineCount + 1, amountCents = amountCents + excluded.amountCents;
              \(productSales("+", lines: lineOf("NEW"), order: "o"))
            END;
            CREATE TRIGGER order_lines_summary_delete AFTER DELETE ON order_lines BEGIN
              UPDATE order_totals SET lineCount = lineCount - 1, amountCents = amountCents - OLD.extendedPriceCents
                WHERE orderID = OLD.orderID;
              DELETE FROM order_totals WHERE orderID = OLD.orderID AND lineCount = 0;
              \(productSales("-", lines: lineOf("OLD"), order: "o"))
            END;
            CREATE TRIGGER order_lines_summary_update AFTER UPDATE OF orderID, productID, quantity, extendedPriceCents
            ON order_lines BEGIN
              UPDATE order_totals SET lineCount = lineCount - 1, amountCents = amountCents - OLD.extendedPriceCents
                WHERE orderID = OLD.orderID;
              DELETE FROM order_totals WHERE orderID = OLD.orderID AND lineCount = 0;
              INSERT INTO order_totals (orderID, lineCount, amountCents) VALUES (NEW.orderID, 1, NEW.extendedPriceCents)
                ON CONFLICT (orderID) DO UPDATE SET lineCount = lineCount + 1, amountCents = amountCents + excluded.amountCents;
              \(productSales("-", lines: lineOf("OLD"), order: "o"))
              \(productSales("+", lines: lineOf("NEW"), order: "o"))
            END;
            CREATE TRIGGER order_totals_summary_insert AFTER INSERT ON order_totals BEGIN
              \(orderSales("o", orders: "0", lined: "1", cents: "NEW.amountCents", source: "FROM orders o WHERE o.id = NEW.orderID"))
            END;
            CREATE TRIGGER order_totals_summary_update AFTER UPDATE ON order_totals BEGIN
              \(orderSales("o", orders: "0", lined: "0", cents: "NEW.amountCents - OLD.amountCents", source: "FROM orders o WHERE o.id = NEW.orderID"))
            END;
            CREATE TRIGGER order_totals_summary_delete AFTER DELETE ON order_totals BEGIN
              \(orderSales("o", orders: "0", lined: "-1", cents: "-OLD.amountCents", source: "FROM orders o WHERE o.id = OLD.orderID"))
            END;
            CREATE TRIGGER orders_summary_insert AFTER INSERT ON orders BEGIN
              \(orderSales("NEW", orders: "1", lined: "0", cents: "0", source: "WHERE 1"))
            END;
            CREATE TRIGGER orders_summary_delete BEFORE DELETE ON orders BEGIN
              \(orderSales("OLD", orders: "-1", lined: "0", cents: "0", source: "WHERE 1"))
              \(orderSales("OLD", orders: "0", lined: "-1", cents: "-t.amountCents", source: totalOf("OLD")))
              \(productSales("-", lines: linesOf("OLD"), order: "OLD"))
            END;
            CREATE TRIGGER orders_summary_update AFTER UPDATE OF orderDate, status, customerID, employeeID ON orders
            WHEN NEW.orderDate IS NOT OLD.orderDate OR NEW.status IS NOT OLD.status
              OR NEW.customerID IS NOT OLD.customerID OR NEW.employeeID IS NOT OLD.employeeID BEGIN
              \(orderSales("OLD", orders: "-1", lined: "0", cents: "0", source: "WHERE 1"))
              \(orderSales("OLD", orders: "0", lined: "-1", cents: "-t.amountCents", source: totalOf("OLD")))
              \(orderSales("NEW", orders: "1", lined: "0", cents: "0", source: "WHERE 1"))
              \(orderSales("NEW", orders: "0", lined: "1", cents: "t.amountCents", source: totalOf("NEW")))
            END;
            CREATE TRIGGER orders_summary_lines AFTER UPDATE OF orderDate, shippedDate, status ON orders
            WHEN NEW.orderDate IS NOT OLD.orderDate OR NEW.shippedDate IS NOT OLD.shippedDate OR NEW.status IS NOT OLD.status BEGIN
              \(productSales("-", lines: linesOf("OLD"), order: "OLD"))
              \(productSales("+", lines: linesOf("NEW"), order: "NEW"))
            END;
            """
    }

    /// Computes `order_totals` and the year summaries afresh from the orders and their lines, with the summaries'
    /// triggers lifted (bulk loads, the migration).
    static func rebuildSalesSummaries(_ db: Database) throws {
        let orderYear = year("o.orderDate")
        try db.execute(
            sql: """
                DELETE FROM order_totals;
                DELETE FROM product_year_sales;
                DELETE FROM customer_year_sales;
                DELETE FROM employee_year_sales;
                INSERT INTO order_totals (orderID, lineCount, amountCents)
                  SELECT orderID, count(*), SUM(extendedPriceCents) FROM order_lines GROUP BY orderID;
                INSERT INTO product_year_sales (basis, year, productID, cancelled, lineCount, quantity, amountCents)
                  SELECT 'ordered', \(orderYear), ol.productID, o.status = 'cancelled', count(*), SUM(ol.quantity),
                         SUM(ol.extendedPriceCents)
                  FROM order_lines ol JOIN orders o ON o.id = ol.orderID GROUP BY 2, 3, 4
                  UNION ALL
                  SELECT 'shipped', \(year("o.shippedDate")), ol.productID, o.status = 'cancelled', count(*),
                         SUM(ol.quantity), SUM(ol.extendedPriceCents)
                  FROM order_lines ol JOIN orders o ON o.id = ol.orderID WHERE o.shippedDate IS NOT NULL GROUP BY 2, 3, 4;
                INSERT INTO customer_year_sales (year, customerID, cancelled, orders, linedOrders, amountCents)
                  SELECT \(orderYear), o.customerID, o.status = 'cancelled', count(*), count(t.orderID), ifnull(SUM(t.amountCents), 0)
                  FROM orders o LEFT JOIN order_totals t ON t.orderID = o.id GROUP BY 1, 2, 3;
                INSERT INTO employee_year_sales (year, employeeID, cancelled, linedOrders, amountCents)
                  SELECT \(orderYear), o.employeeID, o.status = 'cancelled', count(*), SUM(t.amountCents)
                  FROM orders o JOIN order_totals t ON t.orderID = o.id WHERE o.employeeID IS NOT NULL GROUP BY 1, 2, 3;
                """
        )
    }
}
