import GRDB

extension Schema {
    static func v20ResendAfterServerRestore(_ db: Database) throws {
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
}
