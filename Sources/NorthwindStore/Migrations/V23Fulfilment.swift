import GRDB

extension Schema {
    /// Shipments (issue 40): an order ships in any number of parts. A shipment line names an order line and how many
    /// of it left; each has exactly one `shipped` movement, which names it. "Partly shipped" is derived (an order
    /// still `new` with shipments), so the orders table needs no rebuild.
    static func v23Fulfilment(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        try db.execute(
            sql: """
                CREATE TABLE shipments (
                  id INTEGER PRIMARY KEY, \(recordID),
                  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE RESTRICT,
                  sequence INTEGER NOT NULL CHECK (sequence BETWEEN 1 AND 1000000),
                  shippedDate TEXT NOT NULL,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  requestKey TEXT CHECK (requestKey IS NULL OR length(requestKey) BETWEEN 1 AND 100),
                  UNIQUE (orderID, sequence));
                -- A form or API call sent twice ships once.
                CREATE UNIQUE INDEX shipments_once_per_request ON shipments(orderID, requestKey) WHERE requestKey IS NOT NULL;
                CREATE INDEX shipments_on_shippedDate ON shipments(shippedDate);
                CREATE INDEX shipments_on_employeeID ON shipments(employeeID);
                CREATE TABLE shipment_lines (
                  id INTEGER PRIMARY KEY, \(recordID),
                  shipmentID INTEGER NOT NULL REFERENCES shipments(id) ON DELETE RESTRICT,
                  orderLineID INTEGER NOT NULL REFERENCES order_lines(id) ON DELETE RESTRICT,
                  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
                  UNIQUE (shipmentID, orderLineID));
                CREATE INDEX shipment_lines_on_orderLineID ON shipment_lines(orderLineID);
                ALTER TABLE stock_movements ADD COLUMN shipmentLineID INTEGER REFERENCES shipment_lines(id);
                -- Exactly one movement per shipment line.
                CREATE UNIQUE INDEX stock_movements_one_per_shipment_line ON stock_movements(shipmentLineID)
                  WHERE shipmentLineID IS NOT NULL;
                -- Nullable, so that a version that does not know it still writes customers.
                ALTER TABLE customers ADD COLUMN completeShipmentsOnly BOOLEAN;
                DROP TRIGGER stock_movements_ship_once;
                """
        )
        try db.execute(sql: changeLogTriggers("shipments"))
        try db.execute(sql: changeLogTriggers("shipment_lines"))
        try db.execute(sql: shipWithinOrder)
        try db.execute(sql: fulfilmentGuards)
    }

    /// An order line never ships more than it asks, whichever way the units leave: a shipment line, or a movement
    /// (this version's, which names its shipment line and must match it, or an older version's execution, which
    /// names the order alone and ships the whole line once). A movement never changes once written. Sync's arrivals
    /// meet the same rules.
    static let shipWithinOrder = """
        CREATE TRIGGER shipment_lines_within_order BEFORE INSERT ON shipment_lines
        WHEN NEW.quantity + ifnull((SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = NEW.orderLineID), 0)
          + ifnull((SELECT -sum(m.delta) FROM stock_movements m JOIN order_lines l ON l.id = NEW.orderLineID
              WHERE m.reason = 'shipped' AND m.shipmentLineID IS NULL AND m.orderID = l.orderID AND m.productID = l.productID), 0)
          > (SELECT quantity FROM order_lines WHERE id = NEW.orderLineID) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a shipment would ship more of an order line than was ordered');
        END;
        CREATE TRIGGER stock_movements_ship_once BEFORE INSERT ON stock_movements
        WHEN NEW.reason = 'shipped' AND NEW.orderID IS NOT NULL AND (
          (NEW.shipmentLineID IS NULL AND EXISTS (SELECT 1 FROM stock_movements
            WHERE reason = 'shipped' AND orderID = NEW.orderID AND productID = NEW.productID))
          OR -NEW.delta + ifnull((SELECT -sum(delta) FROM stock_movements
            WHERE reason = 'shipped' AND orderID = NEW.orderID AND productID = NEW.productID), 0)
            > (SELECT quantity FROM order_lines WHERE orderID = NEW.orderID AND productID = NEW.productID)) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: this order line has shipped already');
        END;
        CREATE TRIGGER stock_movements_match_their_shipment_line BEFORE INSERT ON stock_movements
        WHEN NEW.shipmentLineID IS NOT NULL AND (NEW.reason IS NOT 'shipped'
          OR NOT EXISTS (SELECT 1 FROM shipment_lines s JOIN shipments h ON h.id = s.shipmentID
            JOIN order_lines l ON l.id = s.orderLineID
            WHERE s.id = NEW.shipmentLineID AND h.orderID IS NEW.orderID AND l.productID IS NEW.productID
              AND -NEW.delta = s.quantity)) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a shipment line''s movement ships its product and quantity, for its order');
        END;
        CREATE TRIGGER stock_movements_never_changed BEFORE UPDATE OF delta, productID, reason, shipmentLineID ON stock_movements
        WHEN NEW.delta IS NOT OLD.delta OR NEW.productID IS NOT OLD.productID OR NEW.reason IS NOT OLD.reason
          OR NEW.shipmentLineID IS NOT OLD.shipmentLineID BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a stock movement is never changed; correct it with another movement');
        END;
        """

    /// A shipment is the record of what left: never changed, never deleted (wiping the whole store aside). An order
    /// line something shipped from keeps its product, and at least what shipped of it. (A version written again
    /// with the same values, as sync may, is no change.)
    static let fulfilmentGuards = """
        CREATE TRIGGER shipments_never_changed BEFORE UPDATE ON shipments
        WHEN NEW.orderID IS NOT OLD.orderID OR NEW.sequence IS NOT OLD.sequence OR NEW.shippedDate IS NOT OLD.shippedDate BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a shipment is never changed');
        END;
        CREATE TRIGGER shipments_never_deleted BEFORE DELETE ON shipments BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a shipment is never deleted');
        END;
        CREATE TRIGGER shipment_lines_never_changed BEFORE UPDATE ON shipment_lines
        WHEN NEW.shipmentID IS NOT OLD.shipmentID OR NEW.orderLineID IS NOT OLD.orderLineID OR NEW.quantity IS NOT OLD.quantity BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a shipment line is never changed');
        END;
        CREATE TRIGGER shipment_lines_never_deleted BEFORE DELETE ON shipment_lines BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a shipment line is never deleted');
        END;
        CREATE TRIGGER order_lines_keep_what_shipped BEFORE UPDATE OF productID, quantity ON order_lines
        WHEN EXISTS (SELECT 1 FROM shipment_lines WHERE orderLineID = OLD.id)
          AND (NEW.productID <> OLD.productID
            OR NEW.quantity < (SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = OLD.id)) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an order line keeps at least what has shipped of it');
        END;
        """

    static let dropFulfilmentGuards = """
        DROP TRIGGER shipments_never_changed; DROP TRIGGER shipments_never_deleted;
        DROP TRIGGER shipment_lines_never_changed; DROP TRIGGER shipment_lines_never_deleted;
        DROP TRIGGER order_lines_keep_what_shipped;
        """
}
