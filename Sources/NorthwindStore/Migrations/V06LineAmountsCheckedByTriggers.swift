import GRDB

extension Schema {
    /// v4's CHECK called `sqlserver_line_cents`, which only the app registers, so `PRAGMA integrity_check` failed in
    /// the stock `sqlite3` tool and in backup verifiers. The same rule now lives in triggers, which run on writes only:
    /// any tool can check the file, and a writer without the function (or with a wrong amount) is still refused.
    /// SQLite cannot drop a CHECK, hence the rebuild; the triggers that name the table are dropped and made again.
    static func checkLineAmountsByTriggers(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER orders_summary_update;
                CREATE TABLE order_lines_new (
                  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression),
                  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
                  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
                  quantity INTEGER NOT NULL CHECK (quantity > 0),
                  discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1),
                  extendedPriceCents INTEGER NOT NULL,
                  UNIQUE (orderID, productID));
                INSERT INTO order_lines_new (id, recordID, orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)
                  SELECT id, recordID, orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents FROM order_lines;
                DROP TABLE order_lines;
                ALTER TABLE order_lines_new RENAME TO order_lines;
                CREATE INDEX order_lines_on_productID ON order_lines(productID);
                CREATE INDEX order_lines_on_orderID_amount ON order_lines(orderID, productID, extendedPriceCents, quantity);
                """
        )
        try db.execute(sql: changeLogTriggers("order_lines"))
        try db.execute(sql: reportSummaryTriggers)
        try db.execute(sql: lineAmountTriggers)
    }

    static let lineAmountTriggers = """
        CREATE TRIGGER order_lines_amount_insert BEFORE INSERT ON order_lines
        WHEN NEW.extendedPriceCents IS NOT sqlserver_line_cents(NEW.unitPriceCents, NEW.quantity, NEW.discount) BEGIN
          SELECT RAISE(ABORT, 'the line amount is out of range or is not unit price x quantity x (1 - discount)');
        END;
        CREATE TRIGGER order_lines_amount_update BEFORE UPDATE OF unitPriceCents, quantity, discount, extendedPriceCents
        ON order_lines
        WHEN NEW.extendedPriceCents IS NOT sqlserver_line_cents(NEW.unitPriceCents, NEW.quantity, NEW.discount) BEGIN
          SELECT RAISE(ABORT, 'the line amount is out of range or is not unit price x quantity x (1 - discount)');
        END;
        """
}
