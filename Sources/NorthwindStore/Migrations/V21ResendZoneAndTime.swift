import GRDB

extension Schema {
    static func v21ResendZoneAndTime(_ db: Database) throws {
        // Its server time lets the server tell it from a deletion made after it; its zone lets head office put
        // back a site's record that the site lost too.
        try db.execute(sql: "ALTER TABLE sync_resend ADD COLUMN zoneName TEXT")
        try db.execute(sql: "ALTER TABLE sync_resend ADD COLUMN modified INTEGER")
    }
}
