import GRDB

extension Schema {
    static func v16Quotes(_ db: Database) throws {
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
}
