import GRDB

extension Schema {
    /// Every local insert, update and delete of a synced row lands here in the same transaction.
    static func createChangeLog(_ db: Database) throws {
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
}
