import GRDB

extension Schema {
    /// Stock sent from one location to another. The movements' reasons are a CHECK, which SQLite cannot alter, hence
    /// the rebuild of `stock_movements` (as v4 rebuilt the order lines), with the same rows, indexes and triggers.
    /// A transfer has at most one movement out (the sender's) and one in (the destination's).
    static func createStockTransfers(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        try db.execute(
            sql: """
                CREATE TABLE stock_transfers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  quantity INTEGER NOT NULL CHECK (quantity > 0),
                  fromLocation TEXT NOT NULL CHECK (trim(fromLocation) <> ''),
                  toLocation TEXT NOT NULL CHECK (trim(toLocation) <> '' AND toLocation <> fromLocation),
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  note TEXT,
                  sentAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                CREATE INDEX stock_transfers_on_productID ON stock_transfers(productID);
                CREATE INDEX stock_transfers_on_employeeID ON stock_transfers(employeeID);

                CREATE TABLE stock_movements_new (
                  id INTEGER PRIMARY KEY, \(recordID),
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  delta INTEGER NOT NULL CHECK (delta <> 0),
                  reason TEXT NOT NULL
                    CHECK (reason IN ('initial', 'received', 'stockTake', 'shipped', 'transferOut', 'transferIn')),
                  orderID INTEGER REFERENCES orders(id) ON DELETE SET NULL,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  note TEXT,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  location TEXT,
                  transferID INTEGER REFERENCES stock_transfers(id) ON DELETE CASCADE,
                  CHECK ((transferID IS NULL) = (reason NOT IN ('transferOut', 'transferIn'))),
                  CHECK (reason <> 'transferOut' OR delta < 0),
                  CHECK (reason <> 'transferIn' OR delta > 0));
                INSERT INTO stock_movements_new (id, recordID, productID, delta, reason, orderID, employeeID, note, createdAt, location)
                  SELECT id, recordID, productID, delta, reason, orderID, employeeID, note, createdAt, location FROM stock_movements;
                DROP TABLE stock_movements;
                ALTER TABLE stock_movements_new RENAME TO stock_movements;
                CREATE INDEX stock_movements_on_productID ON stock_movements(productID, createdAt);
                CREATE INDEX stock_movements_on_orderID ON stock_movements(orderID);
                CREATE INDEX stock_movements_on_employeeID ON stock_movements(employeeID);
                CREATE INDEX stock_movements_on_createdAt ON stock_movements(createdAt);
                CREATE UNIQUE INDEX stock_movements_one_per_transfer ON stock_movements(transferID, reason)
                  WHERE transferID IS NOT NULL;
                CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements WHEN NEW.location IS NULL BEGIN
                  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                END;
                CREATE TRIGGER stock_movements_apply_elsewhere AFTER INSERT ON stock_movements WHEN NEW.location IS NOT NULL BEGIN
                  INSERT INTO stock_levels (location, productID, units) VALUES (NEW.location, NEW.productID, NEW.delta)
                  ON CONFLICT (location, productID) DO UPDATE SET units = units + excluded.units;
                END;
                """
        )
        try db.execute(sql: changeLogTriggers("stock_transfers"))
        try db.execute(sql: changeLogTriggers("stock_movements"))
    }
}
