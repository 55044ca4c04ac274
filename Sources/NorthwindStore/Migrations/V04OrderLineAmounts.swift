import GRDB

extension Schema {
    /// Every sales report sums the lines' ExtendedPrice, whose float32 arithmetic cost five calls into Swift per line
    /// (0.5-1 s per report at scale 100). The store keeps it in a column, written with the line, and the index beside
    /// it lets a report sum an order's or a product's lines without reading the table. The CHECK held every writer
    /// to the one definition (v6 moved it into triggers, see `checkLineAmountsByTriggers`). (A generated column would be simpler, but SQLite 3.40 cannot read one from a covering
    /// index.) SQLite cannot add a column with such a CHECK, hence the rebuild; GRDB checks foreign keys at the end
    /// of the migration. The sqlite3 shell reads the file but cannot write lines, lacking the function: as well,
    /// since such writes would bypass the business rules.
    static func storeLineAmounts(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE order_lines_new (
                  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression),
                  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
                  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
                  quantity INTEGER NOT NULL CHECK (quantity > 0),
                  discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1),
                  extendedPriceCents INTEGER NOT NULL
                    CHECK (extendedPriceCents = sqlserver_line_cents(unitPriceCents, quantity, discount)),
                  UNIQUE (orderID, productID));
                INSERT INTO order_lines_new (id, recordID, orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)
                  SELECT id, recordID, orderID, productID, unitPriceCents, quantity, discount,
                         sqlserver_line_cents(unitPriceCents, quantity, discount)
                  FROM order_lines;
                DROP TABLE order_lines;
                ALTER TABLE order_lines_new RENAME TO order_lines;
                CREATE INDEX order_lines_on_productID ON order_lines(productID);
                CREATE INDEX order_lines_on_orderID_amount ON order_lines(orderID, productID, extendedPriceCents, quantity);
                """
        )
        try db.execute(sql: changeLogTriggers("order_lines"))
    }
}
