import GRDB

extension Schema {
    /// What shop sync keeps beside the data (issue 16). The outbox is the change log itself: entries this store made
    /// (`origin = 'local'`) after `sync_state.uploadedThrough`. `txn` groups the entries of one domain transaction
    /// (the first entry's `seq`), so they upload as one atomic batch; rows written outside the domain (bulk loads)
    /// have none. Rows a download applied are marked `origin = 'sync'`: live pages still see them, the outbox not.
    static func createSyncTables(_ db: Database) throws {
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
}
