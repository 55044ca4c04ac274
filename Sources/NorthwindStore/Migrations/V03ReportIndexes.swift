import GRDB

extension Schema {
    /// The sales reports select a year of shipped orders: without this index SQLite reads every order line
    /// by product first (about 3x slower at scale 100). Partial, since open orders are never in a range.
    static func v3ReportIndexes(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX orders_on_shippedDate ON orders(shippedDate) WHERE shippedDate IS NOT NULL")
    }
}
