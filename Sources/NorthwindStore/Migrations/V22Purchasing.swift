import GRDB

extension Schema {
    /// Purchase orders and receipts against them (issue 39). A receipt is a stock movement (`purchaseReceipt`) that
    /// names its line, its unit cost and the moving average cost it left; a mistake is corrected by a
    /// `receiptReversal` that names the receipt. Units on order become derived: the outstanding quantities of this
    /// location's sent purchase orders, kept by triggers. The movements' reasons are a CHECK, hence a rebuild, as
    /// v10 did, with the same rows, indexes and triggers.
    static func v22Purchasing(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        try db.execute(
            sql: """
                CREATE TABLE purchase_orders (
                  id INTEGER PRIMARY KEY, \(recordID),
                  number TEXT NOT NULL UNIQUE,
                  supplierID INTEGER NOT NULL REFERENCES suppliers(id) ON DELETE RESTRICT,
                  status TEXT NOT NULL DEFAULT 'draft'
                    CHECK (status IN ('draft', 'sent', 'partiallyReceived', 'received', 'cancelled')),
                  opening BOOLEAN NOT NULL DEFAULT 0,
                  expectedDate TEXT,
                  note TEXT,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  sentAt TEXT,
                  closedAt TEXT,
                  location TEXT,
                  version INTEGER NOT NULL DEFAULT 1);
                CREATE INDEX purchase_orders_on_supplierID ON purchase_orders(supplierID, status);
                CREATE INDEX purchase_orders_on_status ON purchase_orders(status, expectedDate);
                CREATE INDEX purchase_orders_on_employeeID ON purchase_orders(employeeID);
                CREATE TABLE purchase_order_lines (
                  id INTEGER PRIMARY KEY, \(recordID),
                  purchaseOrderID INTEGER NOT NULL REFERENCES purchase_orders(id) ON DELETE CASCADE,
                  position INTEGER NOT NULL,
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
                  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
                  unitCostCents INTEGER CHECK (unitCostCents BETWEEN 0 AND 999999999),
                  UNIQUE (purchaseOrderID, productID));
                CREATE INDEX purchase_order_lines_on_productID ON purchase_order_lines(productID);
                INSERT OR IGNORE INTO store_metadata (key, value) VALUES ('purchaseSequence', '0');

                DROP TRIGGER products_keep_their_ledger;
                DROP TRIGGER stock_transfers_keep_their_ledger;
                CREATE TABLE stock_movements_new (
                  id INTEGER PRIMARY KEY, \(recordID),
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  delta INTEGER NOT NULL CHECK (delta <> 0),
                  reason TEXT NOT NULL CHECK (reason IN ('initial', 'received', 'stockTake', 'shipped', 'transferOut',
                    'transferIn', 'purchaseReceipt', 'receiptReversal')),
                  orderID INTEGER REFERENCES orders(id) ON DELETE SET NULL,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  note TEXT,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  location TEXT,
                  transferID INTEGER REFERENCES stock_transfers(id) ON DELETE CASCADE,
                  purchaseLineID INTEGER REFERENCES purchase_order_lines(id),
                  unitCostCents INTEGER CHECK (unitCostCents BETWEEN 0 AND 999999999),
                  averageCostCents INTEGER CHECK (averageCostCents BETWEEN 0 AND 999999999),
                  requestKey TEXT,
                  overReceipt TEXT,
                  reversesID INTEGER REFERENCES stock_movements(id),
                  CHECK ((transferID IS NULL) = (reason NOT IN ('transferOut', 'transferIn'))),
                  CHECK (reason <> 'transferOut' OR delta < 0),
                  CHECK (reason <> 'transferIn' OR delta > 0),
                  CHECK ((purchaseLineID IS NULL) = (reason NOT IN ('purchaseReceipt', 'receiptReversal'))),
                  CHECK (reason <> 'purchaseReceipt' OR delta > 0),
                  CHECK ((reversesID IS NULL) = (reason <> 'receiptReversal')),
                  CHECK (reason <> 'receiptReversal' OR delta < 0),
                  CHECK (overReceipt IS NULL OR (reason = 'purchaseReceipt' AND trim(overReceipt) <> '')));
                INSERT INTO stock_movements_new (id, recordID, productID, delta, reason, orderID, employeeID, note, createdAt,
                    location, transferID)
                  SELECT id, recordID, productID, delta, reason, orderID, employeeID, note, createdAt, location, transferID
                  FROM stock_movements;
                DROP TABLE stock_movements;
                ALTER TABLE stock_movements_new RENAME TO stock_movements;
                CREATE INDEX stock_movements_on_productID ON stock_movements(productID, createdAt);
                CREATE INDEX stock_movements_on_orderID ON stock_movements(orderID);
                CREATE INDEX stock_movements_on_employeeID ON stock_movements(employeeID);
                CREATE INDEX stock_movements_on_createdAt ON stock_movements(createdAt);
                CREATE UNIQUE INDEX stock_movements_one_per_transfer ON stock_movements(transferID, reason)
                  WHERE transferID IS NOT NULL;
                CREATE INDEX stock_movements_on_purchaseLineID ON stock_movements(purchaseLineID)
                  WHERE purchaseLineID IS NOT NULL;
                CREATE INDEX stock_movements_on_reversesID ON stock_movements(reversesID) WHERE reversesID IS NOT NULL;
                -- A product's cost at a location is the average its latest costed movement there left.
                CREATE INDEX stock_movements_costs ON stock_movements(productID, location, id)
                  WHERE averageCostCents IS NOT NULL;
                -- One reversal per receipt; one receipt per line per request (a form or API call sent twice).
                -- (Per location: another site's movements never collide with this one's.)
                CREATE UNIQUE INDEX stock_movements_one_reversal ON stock_movements(reversesID, ifnull(location, ''))
                  WHERE reversesID IS NOT NULL;
                CREATE UNIQUE INDEX stock_movements_once_per_request ON stock_movements(requestKey, purchaseLineID, ifnull(location, ''))
                  WHERE requestKey IS NOT NULL;
                CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements WHEN NEW.location IS NULL BEGIN
                  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log) AND tableName = 'products';
                END;
                CREATE TRIGGER stock_movements_apply_elsewhere AFTER INSERT ON stock_movements WHEN NEW.location IS NOT NULL BEGIN
                  INSERT INTO stock_levels (location, productID, units) VALUES (NEW.location, NEW.productID, NEW.delta)
                  ON CONFLICT (location, productID) DO UPDATE SET units = units + excluded.units;
                END;
                """
        )
        try db.execute(sql: changeLogTriggers("stock_movements"))
        try db.execute(sql: ledgerGuards)
        try db.execute(sql: shipOnce)
        try db.execute(sql: changeLogTriggers("purchase_orders"))
        try db.execute(sql: changeLogTriggers("purchase_order_lines"))
        try db.execute(sql: onOrderTriggers)
        try db.execute(sql: purchaseGuards)
        try openingPurchaseOrders(db, onlyProductsMadeHere: try Row.fetchOne(db, sql: "SELECT 1 FROM sync_state WHERE key = 'membership'") != nil)
    }

    // guide: begin on-order
    /// Units on order at this location: what this location's sent purchase orders still await, line by line (a line
    /// received in full, or beyond, awaits nothing).
    static func onOrder(_ product: String) -> String {
        """
        (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
             WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
           FROM purchase_order_lines l JOIN purchase_orders p ON p.id = l.purchaseOrderID
           WHERE l.productID = \(product) AND p.location IS NULL AND p.status IN ('sent', 'partiallyReceived'))
        """
    }

    /// Recomputes a product's units on order. The change-log entry the update makes is for live pages only (the
    /// column never travels), as a stock update's is: the outbox passes over it.
    static func refreshOnOrder(_ productID: String) -> String {
        """
        UPDATE products SET unitsOnOrder = \(onOrder("products.id")) WHERE id = \(productID);
          UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log
            WHERE tableName = 'products' AND recordID = (SELECT recordID FROM products WHERE id = \(productID)));
        """
    }

    /// Units on order follow every change that moves them: a line added, changed or removed, an order's status or
    /// place, a receipt or its reversal here.
    static let onOrderTriggers = """
        CREATE TRIGGER purchase_order_lines_on_order_insert AFTER INSERT ON purchase_order_lines BEGIN
          \(refreshOnOrder("NEW.productID"))
        END;
        CREATE TRIGGER purchase_order_lines_on_order_update AFTER UPDATE OF quantity, productID, purchaseOrderID
        ON purchase_order_lines BEGIN
          \(refreshOnOrder("OLD.productID"))
          \(refreshOnOrder("NEW.productID"))
        END;
        CREATE TRIGGER purchase_order_lines_on_order_delete AFTER DELETE ON purchase_order_lines BEGIN
          \(refreshOnOrder("OLD.productID"))
        END;
        CREATE TRIGGER purchase_orders_on_order AFTER UPDATE OF status, location ON purchase_orders BEGIN
          UPDATE products SET unitsOnOrder = \(onOrder("products.id"))
            WHERE id IN (SELECT productID FROM purchase_order_lines WHERE purchaseOrderID = NEW.id);
          UPDATE change_log SET localOnly = 1 WHERE seq IN (SELECT (SELECT max(seq) FROM change_log c
            WHERE c.tableName = 'products' AND c.recordID = p.recordID) FROM products p
            WHERE p.id IN (SELECT productID FROM purchase_order_lines WHERE purchaseOrderID = NEW.id));
        END;
        CREATE TRIGGER stock_movements_on_order AFTER INSERT ON stock_movements
        WHEN NEW.purchaseLineID IS NOT NULL AND NEW.location IS NULL BEGIN
          \(refreshOnOrder("NEW.productID"))
        END;
        """

    // guide: end on-order

    /// A purchase order's lines change only while it is a draft, and only a draft is deleted: what was sent is the
    /// record of what was asked of the supplier. Wiping the whole store lifts these, as it does the ledger's guards.
    static let purchaseGuards = """
        CREATE TRIGGER purchase_orders_kept BEFORE DELETE ON purchase_orders WHEN OLD.status <> 'draft' BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a purchase order that was sent is never deleted; cancel it');
        END;
        """

    static let dropPurchaseGuards = "DROP TRIGGER purchase_orders_kept;"

    /// Turns units on order that have no purchase order behind them (the classic data's figures, typed by hand) into
    /// one sent, opening purchase order per supplier, with no cost, so every figure is kept and has a source. In a
    /// store that has joined a company, only products this store made count: a shop's copy of head office's
    /// catalogue carries head office's figures, which head office's own opening orders keep.
    package static func openingPurchaseOrders(_ db: Database, onlyProductsMadeHere: Bool) throws {
        let madeHere =
            onlyProductsMadeHere
            ? """
            AND EXISTS (SELECT 1 FROM change_log c WHERE c.tableName = 'products' AND c.recordID = products.recordID
              AND c.operation = 'insert' AND c.origin = 'local')
            """ : ""
        let products = try Row.fetchAll(
            db,
            sql: """
                SELECT id, recordID, supplierID, unitsOnOrder,
                  (SELECT recordID FROM suppliers WHERE suppliers.id = products.supplierID) AS supplierRecordID FROM products
                WHERE unitsOnOrder > 0 AND supplierID IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM purchase_order_lines WHERE productID = products.id) \(madeHere)
                ORDER BY supplierID, id
                """
        )
        let site = try String.fetchOne(db, sql: "SELECT value FROM store_metadata WHERE key = 'siteCode'") ?? "000000"
        var orders: [Int64: Int64] = [:]
        var positions: [Int64: Int] = [:]
        for product in products {
            let supplier: Int64 = product["supplierID"]
            if orders[supplier] == nil {
                let number = try nextPurchaseNumber(db, site: site)
                // Record ids made from what they stand for: a store restored from a backup older than this migration
                // makes the same opening orders again, which then meet their synced copies instead of doubling them.
                try db.execute(
                    sql: """
                        INSERT INTO purchase_orders (recordID, number, supplierID, status, opening, note, sentAt)
                        VALUES (?, ?, ?, 'sent', 1, 'Opening balance: units on order before purchase orders were kept', \(Timestamp.sqlNow))
                        """,
                    arguments: ["opening-\(site)-\(product["supplierRecordID"] as String)", number, supplier]
                )
                orders[supplier] = db.lastInsertedRowID
            }
            let order = orders[supplier]!
            positions[order, default: 0] += 1
            try db.execute(
                sql: "INSERT INTO purchase_order_lines (recordID, purchaseOrderID, position, productID, quantity) VALUES (?, ?, ?, ?, ?)",
                arguments: ["opening-\(site)-\(product["recordID"] as String)", order, positions[order], product["id"], product["unitsOnOrder"]]
            )
        }
        // Whatever had no source (a product with no supplier, or a shop's copy) is on order nowhere. The column no
        // longer travels, so neither does this change.
        let before = try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0
        try db.execute(sql: "UPDATE products SET unitsOnOrder = \(onOrder("products.id")) WHERE unitsOnOrder <> \(onOrder("products.id"))")
        try db.execute(sql: "UPDATE change_log SET localOnly = 1 WHERE seq > ? AND tableName = 'products'", arguments: [before])
    }

    /// The next purchase order number of this site, e.g. "7KQ2XM-P12", passing over any already taken.
    package static func nextPurchaseNumber(_ db: Database, site: String) throws -> String {
        var last = try Int.fetchOne(db, sql: "SELECT CAST(value AS INTEGER) FROM store_metadata WHERE key = 'purchaseSequence'") ?? 0
        repeat {
            last += 1
        } while try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM purchase_orders WHERE number = ?)", arguments: ["\(site)-P\(last)"])
            == true
        try db.execute(sql: "INSERT OR REPLACE INTO store_metadata (key, value) VALUES ('purchaseSequence', ?)", arguments: [String(last)])
        return "\(site)-P\(last)"
    }
}
