import GRDB

extension Schema {
    /// Every stored moment in `Timestamp`'s text, so moments compare as text: session expiry was written without
    /// milliseconds ("…:07Z"), which sorts after "…:07.500Z". Only rows in another form are touched.
    static func normaliseTimestamps(_ db: Database) throws {
        let columns = [
            ("stock_movements", "createdAt"), ("change_log", "changedAt"), ("credentials", "changedAt"),
            ("access_tokens", "createdAt"), ("access_tokens", "expiresAt"),
        ]
        for (table, column) in columns {
            try db.execute(
                sql: """
                    UPDATE \(table) SET \(column) = strftime('%Y-%m-%dT%H:%M:%fZ', \(column))
                    WHERE \(column) IS NOT NULL AND strftime('%Y-%m-%dT%H:%M:%fZ', \(column)) IS NOT NULL
                      AND \(column) <> strftime('%Y-%m-%dT%H:%M:%fZ', \(column))
                    """
            )
        }
    }
}
