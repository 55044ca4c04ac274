import GRDB

extension Schema {
    /// A product's stock is this location's and never travels; its movements do. The change-log entry its stock
    /// update makes is for live pages only: the outbox passes over it, and it neither makes the product "changed
    /// here" for a merge nor dates the product's own edits.
    static func v12StockUpdatesStayHere(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE change_log ADD COLUMN localOnly BOOLEAN NOT NULL DEFAULT 0;
                DROP TRIGGER stock_movements_apply;
                CREATE TRIGGER stock_movements_apply AFTER INSERT ON stock_movements WHEN NEW.location IS NULL BEGIN
                  UPDATE products SET unitsInStock = unitsInStock + NEW.delta WHERE id = NEW.productID;
                  UPDATE change_log SET localOnly = 1 WHERE seq = (SELECT max(seq) FROM change_log) AND tableName = 'products';
                END;
                """
        )
    }
}
