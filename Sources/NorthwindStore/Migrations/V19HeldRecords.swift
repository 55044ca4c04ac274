import GRDB

extension Schema {
    static func v19HeldRecords(_ db: Database) throws {
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
}
