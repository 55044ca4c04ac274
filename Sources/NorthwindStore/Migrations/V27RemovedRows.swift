import GRDB

extension Schema {
    /// Rows of a shared zone that a deletion from the sync server removed here, as they were: a record that refers
    /// to one and arrives after its deletion (an order taken elsewhere for a customer deleted meanwhile) brings it
    /// back, as it would have kept it had it arrived first. Local to this store; kept 30 days.
    static func v27RemovedRows(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_removed (
                  tableName TEXT NOT NULL,
                  recordID TEXT NOT NULL,
                  zoneName TEXT NOT NULL,
                  body TEXT NOT NULL,
                  removedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  PRIMARY KEY (tableName, recordID));
                CREATE INDEX sync_removed_on_removedAt ON sync_removed(removedAt);
                """
        )
    }
}
