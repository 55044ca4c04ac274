import GRDB

/// The store's versioned migrations. A shipped migration is never edited; add a new one instead.
/// Migrations speak SQL only, so that they never depend on app types that change later.
public enum Schema {
    /// Tables whose rows sync between installations: each has a `recordID` and change-log triggers.
    static let syncedTables = [
        "categories", "suppliers", "products", "customers", "customer_demographics", "customer_demographic_links",
        "employees", "shippers", "orders", "order_lines", "regions", "territories", "employee_territories",
        "stock_transfers", "stock_movements", "quotes", "quote_lines", "quote_versions",
    ]

    /// Binary attributes stored with external storage: (table, attribute). Each has three columns:
    /// `<attribute>` (inline bytes), `<attribute>File` (external file name) and `<attribute>Type` (MIME type).
    static let binaryAttributes = [("categories", "picture"), ("employees", "photo")]

    /// A random RFC 4122 version 4 UUID, so rows inserted by plain SQL still get a record id.
    static let uuidExpression = """
        (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) \
        || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' \
        || lower(hex(randomblob(6))))
        """

    // guide: begin migrations
    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: classic schema", migrate: createClassicSchema)
        migrator.registerMigration("v1: change log", migrate: createChangeLog)
        migrator.registerMigration("v1: product search", migrate: createProductSearch)
        migrator.registerMigration("v2: accounts", migrate: createAccounts)
        // The sales reports select a year of shipped orders: without this index SQLite reads every order line
        // by product first (about 3x slower at scale 100). Partial, since open orders are never in a range.
        migrator.registerMigration("v3: report indexes") { db in
            try db.execute(sql: "CREATE INDEX orders_on_shippedDate ON orders(shippedDate) WHERE shippedDate IS NOT NULL")
        }
        // guide: end migrations
        migrator.registerMigration("v4: order line amounts", migrate: storeLineAmounts)
        migrator.registerMigration("v5: report summaries", migrate: createReportSummaries)
        migrator.registerMigration("v6: line amounts checked by triggers", migrate: checkLineAmountsByTriggers)
        migrator.registerMigration("v7: one timestamp format", migrate: normaliseTimestamps)
        migrator.registerMigration("v8: product indexes for reports and search") { db in
            // "Ten Most Expensive Products" walks this index and folds names only for the first prices and their
            // ties (SQLite sorts the rest of the ORDER BY in blocks of one price, and stops at the LIMIT), instead of
            // folding every name in the catalogue.
            try db.execute(sql: "CREATE INDEX products_on_unitPriceCents ON products(unitPriceCents)")
            // Search orders its candidates by name through this narrow index rather than the table's wide rows.
            try db.execute(sql: "CREATE INDEX products_on_id_name ON products(id, name)")
        }
        migrator.registerMigration("v9: sync", migrate: createSyncTables)
        migrator.registerMigration("v10: stock transfers", migrate: createStockTransfers)
        // Pictures now sync as assets. When a merge discards one, its bytes stay here, so that a manager can restore
        // it from the conflict inbox; they go when no open conflict names them.
        migrator.registerMigration("v11: pictures a merge discarded") { db in
            try db.execute(
                sql: """
                    CREATE TABLE sync_conflict_assets (
                      sha256 TEXT PRIMARY KEY NOT NULL,
                      contentType TEXT NOT NULL,
                      bytes BLOB NOT NULL
                    ) WITHOUT ROWID
                    """
            )
        }
        // A product's stock is this location's and never travels; its movements do. The change-log entry its stock
        // update makes is for live pages only: the outbox passes over it, and it neither makes the product "changed
        // here" for a merge nor dates the product's own edits.
        migrator.registerMigration("v12: stock updates stay here") { db in
            try db.execute(
                sql: """
                    ALTER TABLE change_log ADD COLUMN localOnly BOOLEAN NOT NULL DEFAULT 0;
                    DROP TRIGGER stock_movements_apply;
                    CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements WHEN NEW.location IS NULL BEGIN
                      UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                      UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log) AND tableName = 'products';
                    END;
                    """
            )
        }
        // A zone fetched again from scratch notes the names it received, page by page, in the pages' transactions,
        // so that a sync cut off halfway still removes, when taken up again, the rows the server no longer has.
        migrator.registerMigration("v13: sync refetch progress") { db in
            try db.execute(
                sql: """
                    CREATE TABLE sync_refetch (
                      zoneName TEXT NOT NULL,
                      recordName TEXT NOT NULL,
                      PRIMARY KEY (zoneName, recordName)
                    ) WITHOUT ROWID
                    """
            )
        }
        // Settings written at this installation (issue 17): its own values, and each user's. A value is canonical
        // text, as the catalogue in the domain checks it. Each change notes itself in the change log, local only, so
        // that a running server (and an open settings page) sees a change made by the CLI or another server. (Named
        // apart from the synced tables' `_log_` triggers, which bulk loads lift and replay.)
        migrator.registerMigration("v14: settings") { db in
            try db.execute(
                sql: """
                    CREATE TABLE settings (
                      key TEXT PRIMARY KEY NOT NULL,
                      value TEXT NOT NULL,
                      changedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                      changedBy TEXT
                    ) WITHOUT ROWID;
                    CREATE TABLE user_settings (
                      login TEXT NOT NULL,
                      key TEXT NOT NULL,
                      value TEXT NOT NULL,
                      changedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                      PRIMARY KEY (login, key)
                    ) WITHOUT ROWID;
                    """
            )
            let names = [
                ("settings", "NEW.key", "OLD.key"), ("user_settings", "NEW.login || '/' || NEW.key", "OLD.login || '/' || OLD.key"),
            ]
            for (table, new, old) in names {
                for (event, operation, recordID) in [("INSERT", "insert", new), ("UPDATE", "update", new), ("DELETE", "delete", old)] {
                    try db.execute(
                        sql: """
                            CREATE TRIGGER \(table)_changed_\(operation) AFTER \(event) ON \(table) BEGIN
                              INSERT INTO change_log (tableName, recordID, operation, localOnly) VALUES ('\(table)', \(recordID), '\(operation)', 1);
                            END
                            """
                    )
                }
            }
        }
        migrator.registerMigration("v15: user settings sync") { db in
            // Each synced user setting's write clock (the sync clock: milliseconds and site, as sortable text), whether
            // it still has to go up, the server's version tag, and why its value came (a server change, the initial
            // sync, or a quota violation that kept it here). A reset stays as a row, so that it syncs too.
            try db.execute(
                sql: """
                    CREATE TABLE user_setting_sync (
                      login TEXT NOT NULL,
                      key TEXT NOT NULL,
                      clock TEXT NOT NULL,
                      pending BOOLEAN NOT NULL DEFAULT 1,
                      serverTag TEXT,
                      reason TEXT,
                      reasonAt TEXT,
                      PRIMARY KEY (login, key)
                    ) WITHOUT ROWID;
                    CREATE TABLE user_setting_tokens (
                      login TEXT PRIMARY KEY NOT NULL,
                      token TEXT
                    ) WITHOUT ROWID;
                    -- Values stored before they synced go up (those of keys that sync), with the oldest clock: a value
                    -- already on the server wins.
                    INSERT INTO user_setting_sync (login, key, clock, pending)
                      SELECT login, key, '000000000000000.-', 1 FROM user_settings;
                    """
            )
        }
        migrator.registerMigration("v16: quotes") { db in
            // A quote is a document a sales rep prepares over several calls: its lines carry the prices as quoted.
            // Versions are immutable snapshots of its content (JSON), each naming its parents. All three sync, in a
            // shared zone, so that two installations may edit one quote. Who has it open here, and their undo
            // history, stay here (`quote_sessions`).
            let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
            try db.execute(
                sql: """
                    CREATE TABLE quotes (
                      id INTEGER PRIMARY KEY, \(recordID),
                      number TEXT NOT NULL UNIQUE,
                      customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE RESTRICT,
                      validUntil TEXT NOT NULL,
                      notes TEXT NOT NULL DEFAULT '',
                      status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'converted', 'withdrawn')),
                      orderNumber TEXT,
                      createdBy TEXT,
                      createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                      updatedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                      version INTEGER NOT NULL DEFAULT 1);
                    CREATE INDEX quotes_on_customerID ON quotes(customerID);
                    CREATE TABLE quote_lines (
                      id INTEGER PRIMARY KEY, \(recordID),
                      quoteID INTEGER NOT NULL REFERENCES quotes(id) ON DELETE CASCADE,
                      position INTEGER NOT NULL,
                      productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
                      quantity INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000000),
                      unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents BETWEEN 0 AND 999999999),
                      discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1));
                    CREATE INDEX quote_lines_on_quoteID ON quote_lines(quoteID);
                    CREATE INDEX quote_lines_on_productID ON quote_lines(productID);
                    CREATE TABLE quote_versions (
                      id INTEGER PRIMARY KEY, \(recordID),
                      quoteID INTEGER NOT NULL REFERENCES quotes(id) ON DELETE CASCADE,
                      parentIDs TEXT NOT NULL DEFAULT '[]',
                      label TEXT NOT NULL,
                      content TEXT NOT NULL,
                      author TEXT,
                      createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                    CREATE INDEX quote_versions_on_quoteID ON quote_versions(quoteID, createdAt);
                    CREATE TABLE quote_sessions (
                      quoteID INTEGER PRIMARY KEY REFERENCES quotes(id) ON DELETE CASCADE,
                      editor TEXT NOT NULL,
                      editorName TEXT NOT NULL,
                      leaseUntil TEXT NOT NULL,
                      history TEXT NOT NULL DEFAULT '{"undo":[],"redo":[]}',
                      takenFrom TEXT,
                      changedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                    INSERT OR IGNORE INTO store_metadata (key, value) VALUES ('quoteSequence', '0');
                    """
            )
            for table in ["quotes", "quote_lines", "quote_versions"] {
                try db.execute(sql: changeLogTriggers(table))
            }
        }
        migrator.registerMigration("v17: source numbers, refused changes") { db in
            // An imported order or quote takes this site's next number; the number it had where it came from stays
            // beside it, for people to find it by.
            try db.execute(sql: "ALTER TABLE orders ADD COLUMN sourceNumber TEXT; ALTER TABLE quotes ADD COLUMN sourceNumber TEXT")
            // Changes the sync server refused: each went to the conflict inbox once and is not sent again, nor
            // restored as a parent, until it is edited here (a refusal sent again is refused again, for ever).
            try db.execute(
                sql: """
                    CREATE TABLE sync_refused (
                      tableName TEXT NOT NULL,
                      recordID TEXT NOT NULL,
                      reason TEXT NOT NULL,
                      refusedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                      PRIMARY KEY (tableName, recordID)) WITHOUT ROWID
                    """
            )
        }
        migrator.registerMigration("v18: the ledger is never deleted") { db in
            try db.execute(sql: ledgerGuards)
            try db.execute(sql: shipOnce)
        }
        migrator.registerMigration("v19: records held for a newer version") { db in
            // Downloaded records of a type this version does not know (a newer installation's table): kept whole,
            // and applied after an upgrade, rather than skipped while the zone's token moves past them.
            try db.execute(
                sql: """
                    CREATE TABLE sync_held (
                      zoneName TEXT NOT NULL,
                      recordName TEXT NOT NULL,
                      recordType TEXT NOT NULL,
                      body TEXT NOT NULL,
                      PRIMARY KEY (zoneName, recordName)) WITHOUT ROWID
                    """
            )
        }
        migrator.registerMigration("v20: what goes up again after a server restore") { db in
            // The server's time of each base, so that after a restore from a backup a store knows which versions the
            // server lost (changed after the newest change the backup holds), whoever wrote them.
            try db.execute(sql: "ALTER TABLE sync_records ADD COLUMN modified INTEGER")
            // Those versions, with their field clocks, until the restored server has taken them: a value sent again
            // keeps the clock it was written with, so it neither loses to older values nor beats later ones.
            try db.execute(
                sql: """
                    CREATE TABLE sync_resend (
                      tableName TEXT NOT NULL,
                      recordID TEXT NOT NULL,
                      fields TEXT NOT NULL,
                      PRIMARY KEY (tableName, recordID)) WITHOUT ROWID
                    """
            )
        }
        migrator.registerMigration("v21: a version sent again names its zone and its server time") { db in
            // Its server time lets the server tell it from a deletion made after it; its zone lets head office put
            // back a site's record that the site lost too.
            try db.execute(sql: "ALTER TABLE sync_resend ADD COLUMN zoneName TEXT")
            try db.execute(sql: "ALTER TABLE sync_resend ADD COLUMN modified INTEGER")
        }
        return migrator
    }

    /// Two summaries that triggers keep in step with the order lines, in the writer's own transaction, so a report
    /// never reads a stale total. Derived, so neither syncs nor has a change log: each store computes its own.
    /// - `order_totals`: each order's line count and ExtendedPrice total, for orders with lines. Period and
    ///   per-customer reports read 83k totals instead of summing 215k lines (top customers: 595 ms to 80 ms).
    /// - `sold_lines`: the lines of orders not cancelled, with their order's date. Its index sums a period's sales
    ///   per product in product order, without a sort (top products over all history: 280 ms to 55 ms).
    private static func createReportSummaries(_ db: Database) throws {
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

    /// Every sales report sums the lines' ExtendedPrice, whose float32 arithmetic cost five calls into Swift per line
    /// (0.5-1 s per report at scale 100). The store keeps it in a column, written with the line, and the index beside
    /// it lets a report sum an order's or a product's lines without reading the table. The CHECK held every writer
    /// to the one definition (v6 moved it into triggers, see `checkLineAmountsByTriggers`). (A generated column would be simpler, but SQLite 3.40 cannot read one from a covering
    /// index.) SQLite cannot add a column with such a CHECK, hence the rebuild; GRDB checks foreign keys at the end
    /// of the migration. The sqlite3 shell reads the file but cannot write lines, lacking the function: as well,
    /// since such writes would bypass the business rules.
    private static func storeLineAmounts(_ db: Database) throws {
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

    /// Every stored moment in `Timestamp`'s text, so moments compare as text: session expiry was written without
    /// milliseconds ("…:07Z"), which sorts after "…:07.500Z". Only rows in another form are touched.
    private static func normaliseTimestamps(_ db: Database) throws {
        let columns = [
            ("stock_movements", "createdAt"), ("change_log", "changedAt"), ("credentials", "changedAt"),
            ("access_tokens", "createdAt"), ("access_tokens", "expiresAt"),
        ]
        for (table, column) in columns {
            try db.execute(
                sql: """
                    UPDATE \(table) SET \(column) = strftime('%Y-%m-%dT%H:%M:%fZ', \(column))
                    WHERE \(column) IS NOT NULL AND strftime('%Y-%m-%dT%H:%M:%fZ', \(column)) IS NOT NULL
                      AND \(column) <> strftime('%Y-%m-%dT%H:%M:%fZ', \(column))
                    """
            )
        }
    }

    /// v4's CHECK called `sqlserver_line_cents`, which only the app registers, so `PRAGMA integrity_check` failed in
    /// the stock `sqlite3` tool and in backup verifiers. The same rule now lives in triggers, which run on writes only:
    /// any tool can check the file, and a writer without the function (or with a wrong amount) is still refused.
    /// SQLite cannot drop a CHECK, hence the rebuild; the triggers that name the table are dropped and made again.
    private static func checkLineAmountsByTriggers(_ db: Database) throws {
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

    private static func createClassicSchema(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        let version = "version INTEGER NOT NULL DEFAULT 1"
        let address = "address TEXT, city TEXT, region TEXT, postalCode TEXT, country TEXT"
        try db.execute(
            sql: """
                CREATE TABLE store_metadata (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);

                CREATE TABLE categories (
                  id INTEGER PRIMARY KEY, \(recordID),
                  name TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (trim(name) <> ''),
                  description TEXT,
                  picture BLOB, pictureFile TEXT UNIQUE, pictureType TEXT,
                  \(version));

                CREATE TABLE suppliers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''),
                  contactName TEXT, contactTitle TEXT, \(address), phone TEXT, fax TEXT, homePage TEXT,
                  \(version));
                CREATE INDEX suppliers_on_companyName ON suppliers(companyName);

                -- guide: begin products-table
                CREATE TABLE products (
                  id INTEGER PRIMARY KEY, \(recordID),
                  name TEXT NOT NULL CHECK (trim(name) <> ''),
                  supplierID INTEGER REFERENCES suppliers(id) ON DELETE RESTRICT,
                  categoryID INTEGER REFERENCES categories(id) ON DELETE RESTRICT,
                  quantityPerUnit TEXT,
                  unitPriceCents INTEGER NOT NULL DEFAULT 0 CHECK (unitPriceCents >= 0),
                  unitsInStock INTEGER NOT NULL DEFAULT 0 CHECK (unitsInStock >= 0),
                  unitsOnOrder INTEGER NOT NULL DEFAULT 0 CHECK (unitsOnOrder >= 0),
                  reorderLevel INTEGER NOT NULL DEFAULT 0 CHECK (reorderLevel >= 0),
                  discontinued BOOLEAN NOT NULL DEFAULT 0 CHECK (discontinued IN (0, 1)),
                  \(version));
                CREATE INDEX products_on_supplierID ON products(supplierID);
                CREATE INDEX products_on_categoryID ON products(categoryID, name);
                CREATE INDEX products_on_name ON products(name);
                -- guide: end products-table

                CREATE TABLE customers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  code TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (trim(code) <> ''),
                  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''),
                  contactName TEXT, contactTitle TEXT, \(address), phone TEXT, fax TEXT,
                  \(version));
                CREATE INDEX customers_on_companyName ON customers(companyName);

                CREATE TABLE customer_demographics (
                  id INTEGER PRIMARY KEY, \(recordID),
                  code TEXT NOT NULL UNIQUE, description TEXT);
                CREATE TABLE customer_demographic_links (
                  id INTEGER PRIMARY KEY, \(recordID),
                  customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
                  demographicID INTEGER NOT NULL REFERENCES customer_demographics(id) ON DELETE CASCADE,
                  UNIQUE (customerID, demographicID));
                CREATE INDEX customer_demographic_links_on_demographicID ON customer_demographic_links(demographicID);

                CREATE TABLE employees (
                  id INTEGER PRIMARY KEY, \(recordID),
                  lastName TEXT NOT NULL CHECK (trim(lastName) <> ''),
                  firstName TEXT NOT NULL CHECK (trim(firstName) <> ''),
                  title TEXT, titleOfCourtesy TEXT, birthDate TEXT, hireDate TEXT,
                  \(address), homePhone TEXT, extension TEXT,
                  photo BLOB, photoFile TEXT UNIQUE, photoType TEXT,
                  notes TEXT,
                  reportsTo INTEGER REFERENCES employees(id) ON DELETE RESTRICT,
                  photoPath TEXT,
                  \(version));
                CREATE INDEX employees_on_reportsTo ON employees(reportsTo);
                CREATE INDEX employees_on_lastName ON employees(lastName, firstName);

                CREATE TABLE shippers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  companyName TEXT NOT NULL CHECK (trim(companyName) <> ''), phone TEXT,
                  \(version));

                CREATE TABLE orders (
                  id INTEGER PRIMARY KEY, \(recordID),
                  number TEXT NOT NULL UNIQUE,
                  customerID INTEGER NOT NULL REFERENCES customers(id) ON DELETE RESTRICT,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE RESTRICT,
                  orderDate TEXT NOT NULL,
                  requiredDate TEXT,
                  shippedDate TEXT,
                  status TEXT NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'shipped', 'cancelled')),
                  shipVia INTEGER REFERENCES shippers(id) ON DELETE RESTRICT,
                  freightCents INTEGER NOT NULL DEFAULT 0 CHECK (freightCents >= 0),
                  shipName TEXT, shipAddress TEXT, shipCity TEXT, shipRegion TEXT, shipPostalCode TEXT, shipCountry TEXT,
                  \(version),
                  CHECK ((status = 'shipped') = (shippedDate IS NOT NULL)));
                CREATE INDEX orders_on_customerID ON orders(customerID, orderDate);
                CREATE INDEX orders_on_employeeID ON orders(employeeID, orderDate);
                CREATE INDEX orders_on_shipVia ON orders(shipVia);
                CREATE INDEX orders_on_orderDate ON orders(orderDate);
                CREATE INDEX orders_on_status ON orders(status, requiredDate);

                CREATE TABLE order_lines (
                  id INTEGER PRIMARY KEY, \(recordID),
                  orderID INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE RESTRICT,
                  unitPriceCents INTEGER NOT NULL CHECK (unitPriceCents >= 0),
                  quantity INTEGER NOT NULL CHECK (quantity > 0),
                  discount REAL NOT NULL DEFAULT 0 CHECK (discount >= 0 AND discount <= 1),
                  UNIQUE (orderID, productID));
                CREATE INDEX order_lines_on_productID ON order_lines(productID);

                CREATE TABLE regions (
                  id INTEGER PRIMARY KEY, \(recordID),
                  description TEXT NOT NULL);
                CREATE TABLE territories (
                  id INTEGER PRIMARY KEY, \(recordID),
                  code TEXT NOT NULL UNIQUE,
                  description TEXT NOT NULL,
                  regionID INTEGER NOT NULL REFERENCES regions(id) ON DELETE RESTRICT);
                CREATE INDEX territories_on_regionID ON territories(regionID);
                CREATE TABLE employee_territories (
                  id INTEGER PRIMARY KEY, \(recordID),
                  employeeID INTEGER NOT NULL REFERENCES employees(id) ON DELETE CASCADE,
                  territoryID INTEGER NOT NULL REFERENCES territories(id) ON DELETE CASCADE,
                  UNIQUE (employeeID, territoryID));
                CREATE INDEX employee_territories_on_territoryID ON employee_territories(territoryID);

                -- The audit trail of every stock change. Products' stock follows from it through the trigger below,
                -- so movements from several shops merge by simply adding them up.
                CREATE TABLE stock_movements (
                  id INTEGER PRIMARY KEY, \(recordID),
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  delta INTEGER NOT NULL CHECK (delta <> 0),
                  reason TEXT NOT NULL CHECK (reason IN ('initial', 'received', 'stockTake', 'shipped')),
                  orderID INTEGER REFERENCES orders(id) ON DELETE SET NULL,
                  employeeID INTEGER REFERENCES employees(id) ON DELETE SET NULL,
                  note TEXT,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                CREATE INDEX stock_movements_on_productID ON stock_movements(productID, createdAt);
                CREATE INDEX stock_movements_on_orderID ON stock_movements(orderID);
                CREATE INDEX stock_movements_on_employeeID ON stock_movements(employeeID);
                CREATE INDEX stock_movements_on_createdAt ON stock_movements(createdAt);

                CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements BEGIN
                  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                END;
                """
        )
    }

    /// Sign-in credentials and access tokens. Local to this store: they are never synced, and no secret is kept in
    /// the clear (bcrypt for passwords, SHA-256 for random tokens).
    private static func createAccounts(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE credentials (
                  employeeID INTEGER PRIMARY KEY REFERENCES employees(id) ON DELETE CASCADE,
                  login TEXT NOT NULL UNIQUE COLLATE NOCASE,
                  passwordHash TEXT NOT NULL,
                  changedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                CREATE TABLE access_tokens (
                  tokenHash TEXT PRIMARY KEY,
                  employeeID INTEGER NOT NULL REFERENCES employees(id) ON DELETE CASCADE,
                  kind TEXT NOT NULL CHECK (kind IN ('session', 'api')),
                  csrfToken TEXT,
                  label TEXT,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  expiresAt TEXT);
                CREATE INDEX access_tokens_employee ON access_tokens(employeeID);
                """
        )
    }

    /// Every local insert, update and delete of a synced row lands here in the same transaction.
    private static func createChangeLog(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE change_log (
                  seq INTEGER PRIMARY KEY, -- rowid order; the log is never emptied, so seq never goes back
                  tableName TEXT NOT NULL,
                  recordID TEXT NOT NULL,
                  operation TEXT NOT NULL CHECK (operation IN ('insert', 'update', 'delete')),
                  changedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                """
        )
        // The tables as they were when this migration shipped: later tables get their triggers where they are made.
        let tables = [
            "categories", "suppliers", "products", "customers", "customer_demographics", "customer_demographic_links",
            "employees", "shippers", "orders", "order_lines", "regions", "territories", "employee_territories",
            "stock_movements",
        ]
        for table in tables {
            try db.execute(sql: changeLogTriggers(table))
        }
    }

    /// What shop sync keeps beside the data (issue 16). The outbox is the change log itself: entries this store made
    /// (`origin = 'local'`) after `sync_state.uploadedThrough`. `txn` groups the entries of one domain transaction
    /// (the first entry's `seq`), so they upload as one atomic batch; rows written outside the domain (bulk loads)
    /// have none. Rows a download applied are marked `origin = 'sync'`: live pages still see them, the outbox not.
    private static func createSyncTables(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE change_log ADD COLUMN txn INTEGER;
                ALTER TABLE change_log ADD COLUMN origin TEXT NOT NULL DEFAULT 'local' CHECK (origin IN ('local', 'sync'));
                -- A row's newest entry (its clock, whether it has a change pending), without reading the whole log.
                CREATE INDEX change_log_on_recordID ON change_log(recordID, seq);

                -- Where this store syncs, its credential, tokens and progress: one value per key.
                CREATE TABLE sync_state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);

                -- Each synced row as the server last acknowledged it: the base of three-way merges, and the change tag
                -- an update or delete must name.
                CREATE TABLE sync_records (
                  tableName TEXT NOT NULL,
                  recordID TEXT NOT NULL,
                  zoneName TEXT NOT NULL,
                  changeTag TEXT NOT NULL,
                  fields TEXT NOT NULL, -- the server's fields, as JSON
                  PRIMARY KEY (tableName, recordID)) WITHOUT ROWID;

                -- Downloaded records that name a row not here yet (its parent comes in a later page).
                CREATE TABLE sync_waiting (
                  zoneName TEXT NOT NULL,
                  recordName TEXT NOT NULL,
                  body TEXT NOT NULL,
                  PRIMARY KEY (zoneName, recordName)) WITHOUT ROWID;

                -- The conflict inbox: every value a merge discarded, for a manager to review and perhaps restore.
                CREATE TABLE sync_conflicts (
                  id INTEGER PRIMARY KEY,
                  tableName TEXT NOT NULL,
                  recordID TEXT NOT NULL,
                  field TEXT NOT NULL,
                  keptValue TEXT, keptClock TEXT, keptSite TEXT,
                  lostValue TEXT, lostClock TEXT, lostSite TEXT,
                  reason TEXT NOT NULL,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  resolvedAt TEXT);
                CREATE INDEX sync_conflicts_open ON sync_conflicts(resolvedAt, id);

                -- Stock is kept per location. A movement with no location is this store's own and moves its shelf
                -- (products.unitsInStock, which must stay >= 0); another location's movements, arriving by sync, only
                -- add to that location's level here, so they can never break this store's invariant.
                ALTER TABLE stock_movements ADD COLUMN location TEXT;
                CREATE TABLE stock_levels (
                  location TEXT NOT NULL,
                  productID INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                  units INTEGER NOT NULL,
                  PRIMARY KEY (location, productID)) WITHOUT ROWID;
                DROP TRIGGER stock_movements_apply;
                CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements WHEN NEW.location IS NULL BEGIN
                  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                END;
                CREATE TRIGGER stock_movements_apply_elsewhere AFTER INSERT ON stock_movements WHEN NEW.location IS NOT NULL BEGIN
                  INSERT INTO stock_levels (location, productID, units) VALUES (NEW.location, NEW.productID, NEW.delta)
                  ON CONFLICT (location, productID) DO UPDATE SET units = units + excluded.units;
                END;
                """
        )
    }

    /// Stock sent from one location to another. The movements' reasons are a CHECK, which SQLite cannot alter, hence
    /// the rebuild of `stock_movements` (as v4 rebuilt the order lines), with the same rows, indexes and triggers.
    /// A transfer has at most one movement out (the sender's) and one in (the destination's).
    private static func createStockTransfers(_ db: Database) throws {
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

    /// Stock movements are the ledger every site's stock adds up from: no delete, and so no cascade (from a product,
    /// a transfer or an order), may remove one, here or on arrival by sync. A product with movements or stock
    /// anywhere is discontinued instead. Only wiping the whole store (`Store.deleteAllData`) lifts them, for its
    /// own transaction.
    static let ledgerGuards = """
        CREATE TRIGGER stock_movements_never_deleted BEFORE DELETE ON stock_movements BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a stock movement is never deleted; correct it with another movement');
        END;
        CREATE TRIGGER products_keep_their_ledger BEFORE DELETE ON products
        WHEN EXISTS (SELECT 1 FROM stock_movements WHERE productID = OLD.id)
          OR EXISTS (SELECT 1 FROM stock_levels WHERE productID = OLD.id AND units <> 0) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a product with stock movements is never deleted; discontinue it');
        END;
        CREATE TRIGGER stock_transfers_keep_their_ledger BEFORE DELETE ON stock_transfers
        WHEN EXISTS (SELECT 1 FROM stock_movements WHERE transferID = OLD.id) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a stock transfer with movements is never deleted');
        END;
        """

    /// An order line ships once: a second 'shipped' movement for it (a store restored from a backup executing the
    /// order again, or such a movement arriving by sync) is refused. A trigger rather than a unique index, so that a
    /// store holding such a pair already still opens.
    static let shipOnce = """
        CREATE TRIGGER stock_movements_ship_once BEFORE INSERT ON stock_movements
        WHEN NEW.reason = 'shipped' AND NEW.orderID IS NOT NULL AND EXISTS (SELECT 1 FROM stock_movements
          WHERE reason = 'shipped' AND orderID = NEW.orderID AND productID = NEW.productID) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: this order line has shipped already');
        END;
        """

    static let dropLedgerGuards = """
        DROP TRIGGER stock_movements_never_deleted; DROP TRIGGER products_keep_their_ledger;
        DROP TRIGGER stock_transfers_keep_their_ledger;
        """

    private static func changeLogTriggers(_ table: String) -> String {
        """
        CREATE TRIGGER \(table)_log_insert AFTER INSERT ON \(table) BEGIN
          INSERT INTO change_log (tableName, recordID, operation) VALUES ('\(table)', NEW.recordID, 'insert');
        END;
        CREATE TRIGGER \(table)_log_update AFTER UPDATE ON \(table) BEGIN
          INSERT INTO change_log (tableName, recordID, operation) VALUES ('\(table)', NEW.recordID, 'update');
        END;
        CREATE TRIGGER \(table)_log_delete AFTER DELETE ON \(table) BEGIN
          INSERT INTO change_log (tableName, recordID, operation) VALUES ('\(table)', OLD.recordID, 'delete');
        END;
        CREATE TRIGGER \(table)_recordID_immutable BEFORE UPDATE OF recordID ON \(table)
        WHEN NEW.recordID IS NOT OLD.recordID BEGIN
          SELECT RAISE(ABORT, 'recordID is immutable');
        END;
        """
    }

    /// Runs a bulk load with the insert triggers (change log, product search), the report summaries' triggers and the
    /// secondary indexes of synced tables lifted; then logs every new row with one statement per table, rebuilds the
    /// indexes by sorting, the search index and the report summaries in one pass each, and restores the triggers. All of it happens inside the caller's transaction, so no
    /// other connection ever sees a trigger or an index missing. Per-row triggers and random index inserts cost more
    /// than the rows themselves in loads of millions of rows.
    public static func bulkLoad<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        let before = try Dictionary(
            uniqueKeysWithValues: syncedTables.map { table in
                (table, try Int64.fetchOne(db, sql: "SELECT ifnull(max(id), 0) FROM \(table)") ?? 0)
            }
        )
        let tables = syncedTables.map { "'\($0)'" }.joined(separator: ",")
        // Indexes declared with CREATE INDEX have their SQL in the schema; UNIQUE constraints' own indexes do not.
        let lifted = try Row.fetchAll(
            db,
            sql: """
                SELECT type, name, sql FROM sqlite_master
                WHERE (type = 'index' AND sql IS NOT NULL AND tbl_name IN (\(tables)))
                   OR (type = 'trigger' AND (name LIKE '%\\_log\\_insert' ESCAPE '\\' OR name = 'products_fts_insert'
                                             OR name LIKE '%\\_summary\\_%' ESCAPE '\\'))
                """
        ).map { (type: $0["type"] as String, name: $0["name"] as String, sql: $0["sql"] as String) }
        for object in lifted { try db.execute(sql: "DROP \(object.type.uppercased()) \(object.name.quotedDatabaseIdentifier)") }

        let result = try body()

        try db.execute(sql: "INSERT INTO products_fts(products_fts) VALUES ('rebuild')")
        try rebuildReportSummaries(db)
        let now = Timestamp.now
        for table in syncedTables {
            try db.execute(
                sql: """
                    INSERT INTO change_log (tableName, recordID, operation, changedAt)
                    SELECT '\(table)', recordID, 'insert', ? FROM \(table) WHERE id > ? ORDER BY id
                    """,
                arguments: [now, before[table]]
            )
        }
        for object in lifted { try db.execute(sql: object.sql) }
        return result
    }

    /// Accent- and case-insensitive word and prefix search over product names.
    private static func createProductSearch(_ db: Database) throws {
        // Own triggers rather than GRDB's synchronize(withTable:), so that stock updates don't reindex names.
        try db.execute(
            sql: """
                -- guide: begin fts-table
                CREATE VIRTUAL TABLE products_fts USING fts5(
                  name, content='products', content_rowid='id',
                  tokenize='unicode61 remove_diacritics 2', prefix='2 3');
                INSERT INTO products_fts(products_fts) VALUES ('rebuild');
                CREATE TRIGGER products_fts_insert AFTER INSERT ON products BEGIN
                  INSERT INTO products_fts(rowid, name) VALUES (NEW.id, NEW.name);
                END;
                -- guide: end fts-table
                CREATE TRIGGER products_fts_delete AFTER DELETE ON products BEGIN
                  INSERT INTO products_fts(products_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
                END;
                CREATE TRIGGER products_fts_update AFTER UPDATE OF name ON products BEGIN
                  INSERT INTO products_fts(products_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
                  INSERT INTO products_fts(rowid, name) VALUES (NEW.id, NEW.name);
                END;
                """
        )
    }
}
