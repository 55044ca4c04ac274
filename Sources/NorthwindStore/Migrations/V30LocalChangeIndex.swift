import GRDB

extension Schema {
    /// The outbox reads the change log's local entries after the last one sent. The log is never emptied, so at a
    /// store that mostly receives (head office, with every shop's orders) the rows after that point are nearly all
    /// received ones, which every sync scanned; an index of the local entries alone skips them.
    static func v30LocalChangeIndex(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX change_log_local ON change_log(seq) WHERE origin = 'local' AND NOT localOnly")
    }
}
