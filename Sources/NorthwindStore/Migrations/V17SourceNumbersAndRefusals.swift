import GRDB

extension Schema {
    static func v17SourceNumbersAndRefusals(_ db: Database) throws {
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
}
