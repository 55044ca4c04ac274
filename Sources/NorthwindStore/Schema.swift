import GRDB

/// The store's versioned migrations. A shipped migration is never edited; add a new one instead.
/// Migrations speak SQL only, so that they never depend on app types that change later.
public enum Schema {
    /// Tables whose rows sync between installations: each has a `recordID` and change-log triggers.
    static let syncedTables = [
        "categories", "suppliers", "products", "customers", "customer_demographics", "customer_demographic_links",
        "employees", "shippers", "orders", "order_lines", "regions", "territories", "employee_territories",
        "purchase_orders", "purchase_order_lines", "stock_transfers", "shipments", "shipment_lines", "returns", "return_lines",
        "invoices", "invoice_lines", "stock_movements", "quotes", "quote_lines",
        "quote_versions", "record_offers", "record_offer_answers",
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
        migrator.registerMigration("v3: report indexes", migrate: v3ReportIndexes)
        // guide: end migrations
        migrator.registerMigration("v4: order line amounts", migrate: storeLineAmounts)
        migrator.registerMigration("v5: report summaries", migrate: createReportSummaries)
        migrator.registerMigration("v6: line amounts checked by triggers", migrate: checkLineAmountsByTriggers)
        migrator.registerMigration("v7: one timestamp format", migrate: normaliseTimestamps)
        migrator.registerMigration("v8: product indexes for reports and search", migrate: v8ProductIndexes)
        migrator.registerMigration("v9: sync", migrate: createSyncTables)
        migrator.registerMigration("v10: stock transfers", migrate: createStockTransfers)
        migrator.registerMigration("v11: pictures a merge discarded", migrate: v11DiscardedPictures)
        migrator.registerMigration("v12: stock updates stay here", migrate: v12StockUpdatesStayHere)
        migrator.registerMigration("v13: sync refetch progress", migrate: v13SyncRefetchProgress)
        migrator.registerMigration("v14: settings", migrate: v14Settings)
        migrator.registerMigration("v15: user settings sync", migrate: v15UserSettingsSync)
        migrator.registerMigration("v16: quotes", migrate: v16Quotes)
        migrator.registerMigration("v17: source numbers, refused changes", migrate: v17SourceNumbersAndRefusals)
        migrator.registerMigration("v18: the ledger is never deleted", migrate: v18LedgerGuards)
        migrator.registerMigration("v19: records held for a newer version", migrate: v19HeldRecords)
        migrator.registerMigration("v20: what goes up again after a server restore", migrate: v20ResendAfterServerRestore)
        migrator.registerMigration("v21: a version sent again names its zone and its server time", migrate: v21ResendZoneAndTime)
        migrator.registerMigration("v22: purchasing", migrate: v22Purchasing)
        migrator.registerMigration("v23: shipments", migrate: v23Fulfilment)
        migrator.registerMigration("v24: invoices, returns and credit notes", migrate: v24Invoices)
        migrator.registerMigration("v25: offers of records their writer and the sync server lost", migrate: v25RecordOffers)
        migrator.registerMigration("v26: sales per year", migrate: v26YearSummaries)
        migrator.registerMigration("v27: rows a deletion from the sync server removed", migrate: v27RemovedRows)
        migrator.registerMigration("v28: a first download staged", migrate: v28SnapshotStaging)
        migrator.registerMigration("v29: gross margin and fill rate kept by triggers", migrate: v29MarginAndFillSummaries)
        migrator.registerMigration("v30: an index of the change log's local entries", migrate: v30LocalChangeIndex)
        migrator.registerMigration("v31: each zone's checksum kept by triggers", migrate: v31ZoneSums)
        migrator.registerMigration("v32: invoices a sync set aside", migrate: v32SetAside)
        return migrator
    }

    static func changeLogTriggers(_ table: String) -> String {
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

    /// Runs `body` (a bulk load, a new shop's first download) with the report summaries' and the product search's
    /// per-row triggers lifted, then computes both afresh in one pass each and restores the triggers, all in the
    /// caller's transaction. The summaries' trigger cascade cost more than the order lines themselves.
    public static func rebuildingSummaries<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try lifting(db, "type = 'trigger' AND (name = 'products_fts_insert' OR name LIKE '%\\_summary\\_%' ESCAPE '\\')") {
            let result = try body()
            try db.execute(sql: "INSERT INTO products_fts(products_fts) VALUES ('rebuild')")
            try rebuildSalesSummaries(db)
            try rebuildMarginAndFillSummaries(db)
            return result
        }
    }

    /// Runs `body` with the change log's insert triggers lifted, then logs every row it inserted in a synced table
    /// with one statement per table (as local changes: a download marks its own, `finishApply`). A trigger program
    /// per row cost as much as the row.
    public static func loggingInsertsAtOnce<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        let before = try Dictionary(
            uniqueKeysWithValues: syncedTables.map { table in
                (table, try Int64.fetchOne(db, sql: "SELECT ifnull(max(id), 0) FROM \(table)") ?? 0)
            }
        )
        return try lifting(db, "type = 'trigger' AND name LIKE '%\\_log\\_insert' ESCAPE '\\'") {
            let result = try body()
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
            return result
        }
    }

    /// Drops the schema objects `condition` selects from `sqlite_master`, runs `body`, and creates them again, in the
    /// caller's transaction, so that no other connection ever sees one missing.
    private static func lifting<T>(_ db: Database, _ condition: String, _ body: () throws -> T) throws -> T {
        let lifted = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_master WHERE \(condition)")
            .map { (type: $0["type"] as String, name: $0["name"] as String, sql: $0["sql"] as String) }
        for object in lifted { try db.execute(sql: "DROP \(object.type.uppercased()) \(object.name.quotedDatabaseIdentifier)") }
        let result = try body()
        for object in lifted { try db.execute(sql: object.sql) }
        return result
    }

    /// Runs a bulk load with the insert triggers (change log, product search), the report summaries' triggers and the
    /// secondary indexes of synced tables lifted; then logs every new row with one statement per table, rebuilds the
    /// indexes by sorting, the search index and the report summaries in one pass each, and restores the triggers. All
    /// of it happens inside the caller's transaction, so no other connection ever sees a trigger or an index missing.
    /// Per-row triggers and random index inserts cost more than the rows themselves in loads of millions of rows.
    public static func bulkLoad<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        let tables = syncedTables.map { "'\($0)'" }.joined(separator: ",")
        // Indexes declared with CREATE INDEX have their SQL in the schema; UNIQUE constraints' own indexes do not.
        let result = try lifting(db, "type = 'index' AND sql IS NOT NULL AND tbl_name IN (\(tables))") {
            try loggingInsertsAtOnce(db) { try rebuildingSummaries(db) { try body() } }
        }
        // Loaded figures of units on order get their source, as the migration gave a store's own.
        try openingPurchaseOrders(db, onlyProductsMadeHere: false)
        return result
    }

}
