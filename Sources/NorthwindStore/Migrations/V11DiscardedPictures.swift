import GRDB

extension Schema {
    /// Pictures now sync as assets. When a merge discards one, its bytes stay here, so that a manager can restore
    /// it from the conflict inbox; they go when no open conflict names them.
    static func v11DiscardedPictures(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_conflict_assets (
                  sha256 TEXT PRIMARY KEY NOT NULL,
                  contentType TEXT NOT NULL,
                  bytes BLOB NOT NULL
                ) WITHOUT ROWID
                """
        )
    }
}
