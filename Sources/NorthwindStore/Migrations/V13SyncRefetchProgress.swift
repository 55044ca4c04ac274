import GRDB

extension Schema {
    /// A zone fetched again from scratch notes the names it received, page by page, in the pages' transactions,
    /// so that a sync cut off halfway still removes, when taken up again, the rows the server no longer has.
    static func v13SyncRefetchProgress(_ db: Database) throws {
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
}
