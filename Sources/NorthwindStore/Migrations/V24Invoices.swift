import GRDB

extension Schema {
    /// Invoices, returns and credit notes (issue 40). An invoice is issued with its shipment, a credit note with its
    /// return; both live in one table, each kind a series per site and year numbered 1, 2, … without a gap (the
    /// counter is taken in the transaction that issues the document). What an issued document says is kept as
    /// issued: the parties, the lines, the totals and the printable rendition. A return books the goods back with a
    /// `returned` movement per line; the movements' reasons are a CHECK, hence a rebuild, as v22 did.
    static func v24Invoices(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        let rate = "INTEGER CHECK (taxBasisPoints IS NULL OR taxBasisPoints BETWEEN 0 AND 10000)"
        try db.execute(
            sql: """
                -- A tax rate in hundredths of a percent (2300 is 23 %); NULL takes the category's, then the first of `tax.rates`.
                ALTER TABLE categories ADD COLUMN taxBasisPoints \(rate);
                ALTER TABLE products ADD COLUMN taxBasisPoints \(rate);
                -- What a cancellation took off an order shipped in part: the fill rate counts it as ordered.
                ALTER TABLE orders ADD COLUMN cancelledUnits INTEGER CHECK (cancelledUnits IS NULL OR cancelledUnits >= 0);
                CREATE TABLE returns (
                  id INTEGER PRIMARY KEY, \(recordID),
                  shipmentID INTEGER NOT NULL REFERENCES shipments(id) ON DELETE RESTRICT,
                  sequence INTEGER NOT NULL CHECK (sequence BETWEEN 1 AND 1000000),
                  returnedDate TEXT NOT NULL,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  reason TEXT CHECK (reason IS NULL OR length(reason) <= 500),
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  requestKey TEXT CHECK (requestKey IS NULL OR length(requestKey) BETWEEN 1 AND 100),
                  UNIQUE (shipmentID, sequence));
                CREATE UNIQUE INDEX returns_once_per_request ON returns(shipmentID, requestKey) WHERE requestKey IS NOT NULL;
                CREATE INDEX returns_on_employeeID ON returns(employeeID);
                CREATE TABLE return_lines (
                  id INTEGER PRIMARY KEY, \(recordID),
                  returnID INTEGER NOT NULL REFERENCES returns(id) ON DELETE RESTRICT,
                  shipmentLineID INTEGER NOT NULL REFERENCES shipment_lines(id) ON DELETE RESTRICT,
                  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
                  UNIQUE (returnID, shipmentLineID));
                CREATE INDEX return_lines_on_shipmentLineID ON return_lines(shipmentLineID);
                CREATE TABLE invoices (
                  id INTEGER PRIMARY KEY, \(recordID),
                  kind TEXT NOT NULL CHECK (kind IN ('invoice', 'creditNote')),
                  site TEXT NOT NULL CHECK (length(site) BETWEEN 1 AND 40),
                  year INTEGER NOT NULL CHECK (year BETWEEN 1900 AND 9999),
                  counter INTEGER NOT NULL CHECK (counter BETWEEN 1 AND 999999999),
                  number TEXT NOT NULL CHECK (length(number) BETWEEN 1 AND 80),
                  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE RESTRICT,
                  shipmentID INTEGER NOT NULL REFERENCES shipments(id) ON DELETE RESTRICT,
                  returnID INTEGER REFERENCES returns(id) ON DELETE RESTRICT,
                  correctsID INTEGER REFERENCES invoices(id) ON DELETE RESTRICT,
                  issuedDate TEXT NOT NULL,
                  seller TEXT NOT NULL,
                  buyer TEXT NOT NULL,
                  rounding TEXT NOT NULL CHECK (rounding IN ('line', 'rate')),
                  netCents INTEGER NOT NULL CHECK (netCents >= 0),
                  taxCents INTEGER NOT NULL CHECK (taxCents >= 0),
                  grossCents INTEGER NOT NULL CHECK (grossCents = netCents + taxCents),
                  rendition TEXT NOT NULL,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  CHECK ((kind = 'invoice') = (returnID IS NULL)),
                  CHECK ((kind = 'invoice') = (correctsID IS NULL)),
                  UNIQUE (site, kind, year, counter));
                -- Exactly one invoice per shipment, one credit note per return.
                CREATE UNIQUE INDEX invoices_one_per_shipment ON invoices(shipmentID) WHERE kind = 'invoice';
                CREATE UNIQUE INDEX invoices_one_per_return ON invoices(returnID) WHERE returnID IS NOT NULL;
                CREATE INDEX invoices_on_orderID ON invoices(orderID);
                CREATE INDEX invoices_on_issuedDate ON invoices(issuedDate);
                CREATE INDEX invoices_on_correctsID ON invoices(correctsID) WHERE correctsID IS NOT NULL;
                CREATE TABLE invoice_lines (
                  id INTEGER PRIMARY KEY, \(recordID),
                  invoiceID INTEGER NOT NULL REFERENCES invoices(id) ON DELETE RESTRICT,
                  position INTEGER NOT NULL CHECK (position BETWEEN 1 AND 100000),
                  shipmentLineID INTEGER REFERENCES shipment_lines(id) ON DELETE RESTRICT,
                  productID INTEGER REFERENCES products(id) ON DELETE RESTRICT,
                  description TEXT NOT NULL CHECK (length(description) BETWEEN 1 AND 200),
                  quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000000),
                  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
                  discountBasisPoints INTEGER NOT NULL CHECK (discountBasisPoints BETWEEN 0 AND 10000),
                  netCents INTEGER NOT NULL CHECK (netCents >= 0),
                  taxBasisPoints INTEGER NOT NULL CHECK (taxBasisPoints BETWEEN 0 AND 10000),
                  taxName TEXT NOT NULL CHECK (length(taxName) BETWEEN 1 AND 40),
                  -- Set when the invoice rounds tax per line; per rate, the rate's tax is the invoice's.
                  taxCents INTEGER CHECK (taxCents IS NULL OR taxCents >= 0),
                  UNIQUE (invoiceID, position));
                CREATE INDEX invoice_lines_on_shipmentLineID ON invoice_lines(shipmentLineID);
                CREATE INDEX invoice_lines_on_productID ON invoice_lines(productID);
                """
        )
        try rebuildStockMovements(db)
        for table in ["returns", "return_lines", "invoices", "invoice_lines"] {
            try db.execute(sql: changeLogTriggers(table))
        }
        try db.execute(sql: returnWithinShipment)
        try db.execute(sql: invoiceGuards)
    }

    /// Adds the `returned` reason and the return line it names. Every index and trigger that reads the table (its
    /// own, and other tables' that name it) is dropped and made again as it was, from the schema itself.
    private static func rebuildStockMovements(_ db: Database) throws {
        let dependents = try Row.fetchAll(
            db,
            sql: """
                SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
                  AND ((type = 'index' AND tbl_name = 'stock_movements') OR (type = 'trigger' AND sql LIKE '%stock_movements%'))
                ORDER BY rowid
                """
        )
        for row in dependents where row["type"] as String == "trigger" {
            try db.execute(sql: "DROP TRIGGER \(row["name"] as String)")
        }
        let columns = try db.columns(in: "stock_movements").map(\.name).joined(separator: ", ")
        try db.execute(
            sql: """
                CREATE TABLE stock_movements_new (
                  id INTEGER PRIMARY KEY, recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression),
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  delta INTEGER NOT NULL CHECK (delta <> 0),
                  reason TEXT NOT NULL CHECK (reason IN ('initial', 'received', 'stockTake', 'shipped', 'transferOut',
                    'transferIn', 'purchaseReceipt', 'receiptReversal', 'returned')),
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
                  shipmentLineID INTEGER REFERENCES shipment_lines(id),
                  returnLineID INTEGER REFERENCES return_lines(id),
                  CHECK ((transferID IS NULL) = (reason NOT IN ('transferOut', 'transferIn'))),
                  CHECK (reason <> 'transferOut' OR delta < 0),
                  CHECK (reason <> 'transferIn' OR delta > 0),
                  CHECK ((purchaseLineID IS NULL) = (reason NOT IN ('purchaseReceipt', 'receiptReversal'))),
                  CHECK (reason <> 'purchaseReceipt' OR delta > 0),
                  CHECK ((reversesID IS NULL) = (reason <> 'receiptReversal')),
                  CHECK (reason <> 'receiptReversal' OR delta < 0),
                  CHECK (overReceipt IS NULL OR (reason = 'purchaseReceipt' AND trim(overReceipt) <> '')),
                  CHECK ((returnLineID IS NULL) = (reason <> 'returned')),
                  CHECK (reason <> 'returned' OR delta > 0));
                INSERT INTO stock_movements_new (\(columns)) SELECT \(columns) FROM stock_movements;
                DROP TABLE stock_movements;
                ALTER TABLE stock_movements_new RENAME TO stock_movements;
                """
        )
        for row in dependents where row["name"] as String != "stock_movements_never_changed" {
            try db.execute(sql: row["sql"] as String)
        }
        try db.execute(
            sql: """
                CREATE UNIQUE INDEX stock_movements_one_per_return_line ON stock_movements(returnLineID) WHERE returnLineID IS NOT NULL;
                CREATE TRIGGER stock_movements_never_changed
                BEFORE UPDATE OF delta, productID, reason, shipmentLineID, returnLineID ON stock_movements
                WHEN NEW.delta IS NOT OLD.delta OR NEW.productID IS NOT OLD.productID OR NEW.reason IS NOT OLD.reason
                  OR NEW.shipmentLineID IS NOT OLD.shipmentLineID OR NEW.returnLineID IS NOT OLD.returnLineID BEGIN
                  SELECT RAISE(ABORT, 'northwind-ledger: a stock movement is never changed; correct it with another movement');
                END;
                """
        )
    }

    /// Nothing comes back that did not leave: a shipment line's returns never exceed what it carried, and a return
    /// names lines of its own shipment. A return line's movement books its product and quantity back.
    static let returnWithinShipment = """
        CREATE TRIGGER return_lines_within_shipment BEFORE INSERT ON return_lines
        WHEN NOT EXISTS (SELECT 1 FROM shipment_lines s JOIN returns r ON r.shipmentID = s.shipmentID
            WHERE s.id = NEW.shipmentLineID AND r.id = NEW.returnID)
          OR NEW.quantity + ifnull((SELECT sum(quantity) FROM return_lines WHERE shipmentLineID = NEW.shipmentLineID), 0)
            > (SELECT quantity FROM shipment_lines WHERE id = NEW.shipmentLineID) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a return would take back more of a shipment line than it carried');
        END;
        CREATE TRIGGER stock_movements_match_their_return_line BEFORE INSERT ON stock_movements
        WHEN NEW.returnLineID IS NOT NULL AND NOT EXISTS (SELECT 1 FROM return_lines r
            JOIN shipment_lines s ON s.id = r.shipmentLineID JOIN order_lines l ON l.id = s.orderLineID
            WHERE r.id = NEW.returnLineID AND l.productID IS NEW.productID AND NEW.delta = r.quantity) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a return line''s movement books its product and quantity back');
        END;
        """

    /// An issued invoice or credit note, a return and their lines are never changed or deleted (wiping the whole
    /// store aside). (A version written again with the same values, as sync may, is no change.)
    static let invoiceGuards = """
        CREATE TRIGGER invoices_never_changed BEFORE UPDATE ON invoices
        WHEN NEW.kind IS NOT OLD.kind OR NEW.site IS NOT OLD.site OR NEW.year IS NOT OLD.year OR NEW.counter IS NOT OLD.counter
          OR NEW.number IS NOT OLD.number OR NEW.orderID IS NOT OLD.orderID OR NEW.shipmentID IS NOT OLD.shipmentID
          OR NEW.returnID IS NOT OLD.returnID OR NEW.correctsID IS NOT OLD.correctsID OR NEW.rounding IS NOT OLD.rounding
          OR NEW.grossCents IS NOT OLD.grossCents OR NEW.netCents IS NOT OLD.netCents OR NEW.taxCents IS NOT OLD.taxCents
          OR NEW.rendition IS NOT OLD.rendition OR NEW.seller IS NOT OLD.seller OR NEW.buyer IS NOT OLD.buyer
          OR NEW.issuedDate IS NOT OLD.issuedDate OR NEW.createdAt IS NOT OLD.createdAt BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice or credit note never changes; correct it with a credit note');
        END;
        CREATE TRIGGER invoices_never_deleted BEFORE DELETE ON invoices BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice or credit note is never deleted');
        END;
        CREATE TRIGGER invoice_lines_never_changed BEFORE UPDATE ON invoice_lines
        WHEN NEW.invoiceID IS NOT OLD.invoiceID OR NEW.position IS NOT OLD.position OR NEW.shipmentLineID IS NOT OLD.shipmentLineID
          OR NEW.productID IS NOT OLD.productID OR NEW.description IS NOT OLD.description OR NEW.quantity IS NOT OLD.quantity
          OR NEW.unitPriceCents IS NOT OLD.unitPriceCents OR NEW.discountBasisPoints IS NOT OLD.discountBasisPoints
          OR NEW.netCents IS NOT OLD.netCents OR NEW.taxBasisPoints IS NOT OLD.taxBasisPoints OR NEW.taxName IS NOT OLD.taxName
          OR NEW.taxCents IS NOT OLD.taxCents BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice''s line never changes');
        END;
        CREATE TRIGGER invoice_lines_never_deleted BEFORE DELETE ON invoice_lines BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice''s line is never deleted');
        END;
        CREATE TRIGGER returns_never_changed BEFORE UPDATE ON returns
        WHEN NEW.shipmentID IS NOT OLD.shipmentID OR NEW.sequence IS NOT OLD.sequence OR NEW.returnedDate IS NOT OLD.returnedDate
          OR NEW.reason IS NOT OLD.reason BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a return is never changed');
        END;
        CREATE TRIGGER returns_never_deleted BEFORE DELETE ON returns BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a return is never deleted');
        END;
        CREATE TRIGGER return_lines_never_changed BEFORE UPDATE ON return_lines
        WHEN NEW.returnID IS NOT OLD.returnID OR NEW.shipmentLineID IS NOT OLD.shipmentLineID OR NEW.quantity IS NOT OLD.quantity BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a return line is never changed');
        END;
        CREATE TRIGGER return_lines_never_deleted BEFORE DELETE ON return_lines BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a return line is never deleted');
        END;
        """

    static let dropInvoiceGuards = """
        DROP TRIGGER invoices_never_changed; DROP TRIGGER invoices_never_deleted;
        DROP TRIGGER invoice_lines_never_changed; DROP TRIGGER invoice_lines_never_deleted;
        DROP TRIGGER returns_never_changed; DROP TRIGGER returns_never_deleted;
        DROP TRIGGER return_lines_never_changed; DROP TRIGGER return_lines_never_deleted;
        """
}
