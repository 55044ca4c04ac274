import GRDB

extension Schema {
    /// Two summaries that triggers keep in step with the order lines, in the writer's own transaction, so a report
    /// never reads a stale total. Derived, so neither syncs nor has a change log: each store computes its own.
    /// - `order_totals`: each order's line count and ExtendedPrice total, for orders with lines. Period and
    ///   per-customer reports read 83k totals instead of summing 215k lines (top customers: 595 ms to 80 ms).
    /// - `sold_lines`: the lines of orders not cancelled, with their order's date. Its index sums a period's sales
    ///   per product in product order, without a sort (top products over all history: 280 ms to 55 ms).
    static func createReportSummaries(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE order_totals (
                  orderID INTEGER PRIMARY KEY,
                  lineCount INTEGER NOT NULL,
                  amountCents INTEGER NOT NULL);
                CREATE TABLE sold_lines (
                  lineID INTEGER PRIMARY KEY,
                  productID INTEGER NOT NULL,
                  orderDate TEXT NOT NULL,
                  quantity INTEGER NOT NULL,
                  amountCents INTEGER NOT NULL);
                CREATE INDEX sold_lines_on_product ON sold_lines(productID, orderDate, quantity, amountCents);
                """
        )
        try db.execute(sql: reportSummaryTriggers)
        try rebuildReportSummaries(db)
    }

    static let reportSummaryTriggers = """
        -- guide: begin summary-trigger
        CREATE TRIGGER order_lines_summary_insert AFTER INSERT ON order_lines BEGIN
          INSERT INTO order_totals (orderID, lineCount, amountCents) VALUES (NEW.orderID, 1, NEW.extendedPriceCents)
            ON CONFLICT (orderID) DO UPDATE SET lineCount = lineCount + 1, amountCents = amountCents + excluded.amountCents;
          INSERT INTO sold_lines (lineID, productID, orderDate, quantity, amountCents)
            SELECT NEW.id, NEW.productID, o.orderDate, NEW.quantity, NEW.extendedPriceCents
            FROM orders o WHERE o.id = NEW.orderID AND o.status <> 'cancelled';
        END;
        -- guide: end summary-trigger
        CREATE TRIGGER order_lines_summary_delete AFTER DELETE ON order_lines BEGIN
          UPDATE order_totals SET lineCount = lineCount - 1, amountCents = amountCents - OLD.extendedPriceCents
            WHERE orderID = OLD.orderID;
          DELETE FROM order_totals WHERE orderID = OLD.orderID AND lineCount = 0;
          DELETE FROM sold_lines WHERE lineID = OLD.id;
        END;
        CREATE TRIGGER order_lines_summary_update AFTER UPDATE OF orderID, productID, quantity, extendedPriceCents
        ON order_lines BEGIN
          UPDATE order_totals SET lineCount = lineCount - 1, amountCents = amountCents - OLD.extendedPriceCents
            WHERE orderID = OLD.orderID;
          DELETE FROM order_totals WHERE orderID = OLD.orderID AND lineCount = 0;
          INSERT INTO order_totals (orderID, lineCount, amountCents) VALUES (NEW.orderID, 1, NEW.extendedPriceCents)
            ON CONFLICT (orderID) DO UPDATE SET lineCount = lineCount + 1, amountCents = amountCents + excluded.amountCents;
          DELETE FROM sold_lines WHERE lineID = OLD.id;
          INSERT INTO sold_lines (lineID, productID, orderDate, quantity, amountCents)
            SELECT NEW.id, NEW.productID, o.orderDate, NEW.quantity, NEW.extendedPriceCents
            FROM orders o WHERE o.id = NEW.orderID AND o.status <> 'cancelled';
        END;
        CREATE TRIGGER orders_summary_update AFTER UPDATE OF orderDate, status ON orders
        WHEN NEW.orderDate IS NOT OLD.orderDate OR (NEW.status = 'cancelled') IS NOT (OLD.status = 'cancelled') BEGIN
          DELETE FROM sold_lines WHERE lineID IN (SELECT id FROM order_lines WHERE orderID = NEW.id);
          INSERT INTO sold_lines (lineID, productID, orderDate, quantity, amountCents)
            SELECT ol.id, ol.productID, NEW.orderDate, ol.quantity, ol.extendedPriceCents
            FROM order_lines ol WHERE ol.orderID = NEW.id AND NEW.status <> 'cancelled';
        END;
        """

    /// Computes both report summaries afresh from the orders and their lines.
    static func rebuildReportSummaries(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM order_totals;
                DELETE FROM sold_lines;
                INSERT INTO order_totals (orderID, lineCount, amountCents)
                  SELECT orderID, count(*), SUM(extendedPriceCents) FROM order_lines GROUP BY orderID;
                INSERT INTO sold_lines (lineID, productID, orderDate, quantity, amountCents)
                  SELECT ol.id, ol.productID, o.orderDate, ol.quantity, ol.extendedPriceCents
                  FROM order_lines ol JOIN orders o ON o.id = ol.orderID
                  WHERE o.status <> 'cancelled';
                """
        )
    }
}
