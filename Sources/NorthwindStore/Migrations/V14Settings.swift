import GRDB

extension Schema {
    /// Settings written at this installation (issue 17): its own values, and each user's. A value is canonical
    /// text, as the catalogue in the domain checks it. Each change notes itself in the change log, local only, so
    /// that a running server (and an open settings page) sees a change made by the CLI or another server. (Named
    /// apart from the synced tables' `_log_` triggers, which bulk loads lift and replay.)
    static func v14Settings(_ db: Database) throws {
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
}
