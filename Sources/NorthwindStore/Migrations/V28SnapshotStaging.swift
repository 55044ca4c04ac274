import GRDB

extension Schema {
    /// A new shop's first download, staged: the records of every zone it reads, as the server sent them, until all
    /// are here and match the zones' checksums; then they load in one transaction. Local to this store, and empty
    /// outside a first download.
    static func v28SnapshotStaging(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_snapshot (
                  zoneName TEXT NOT NULL,
                  recordName TEXT NOT NULL,
                  recordType TEXT NOT NULL,
                  changeTag TEXT NOT NULL,
                  body TEXT NOT NULL,
                  PRIMARY KEY (zoneName, recordName)) WITHOUT ROWID;
                CREATE INDEX sync_snapshot_on_recordType ON sync_snapshot(recordType);
                """
        )
    }
}
