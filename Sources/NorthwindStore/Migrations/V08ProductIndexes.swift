import GRDB

extension Schema {
    static func v8ProductIndexes(_ db: Database) throws {
        // "Ten Most Expensive Products" walks this index and folds names only for the first prices and their
        // ties (SQLite sorts the rest of the ORDER BY in blocks of one price, and stops at the LIMIT), instead of
        // folding every name in the catalogue.
        try db.execute(sql: "CREATE INDEX products_on_unitPriceCents ON products(unitPriceCents)")
        // Search orders its candidates by name through this narrow index rather than the table's wide rows.
        try db.execute(sql: "CREATE INDEX products_on_id_name ON products(id, name)")
    }
}
