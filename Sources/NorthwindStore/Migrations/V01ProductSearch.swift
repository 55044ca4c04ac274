import GRDB

extension Schema {
    /// Accent- and case-insensitive word and prefix search over product names.
    static func createProductSearch(_ db: Database) throws {
        // Own triggers rather than GRDB's synchronize(withTable:), so that stock updates don't reindex names.
        try db.execute(
            sql: """
                -- guide: begin fts-table
                CREATE VIRTUAL TABLE products_fts USING fts5(
                  name, content='products', content_rowid='id',
                  tokenize='unicode61 remove_diacritics 2', prefix='2 3');
                INSERT INTO products_fts(products_fts) VALUES ('rebuild');
                CREATE TRIGGER products_fts_insert AFTER INSERT ON products BEGIN
                  INSERT INTO products_fts(rowid, name) VALUES (NEW.id, NEW.name);
                END;
                -- guide: end fts-table
                CREATE TRIGGER products_fts_delete AFTER DELETE ON products BEGIN
                  INSERT INTO products_fts(products_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
                END;
                CREATE TRIGGER products_fts_update AFTER UPDATE OF name ON products BEGIN
                  INSERT INTO products_fts(products_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
                  INSERT INTO products_fts(rowid, name) VALUES (NEW.id, NEW.name);
                END;
                """
        )
    }
}
