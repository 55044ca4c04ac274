import GRDB

extension Schema {
    /// Invoices and credit notes a sync set aside: a number of a site's series given twice (a store put back whole to
    /// an older copy issued it again), where the earlier document keeps the number at every installation and the
    /// later one leaves the ledger, whole, for the inbox. `reissuedAs` is the number its site issued the shipment's
    /// invoice under again. The ledger's delete guards let a set-aside row go, and nothing else. Its number stays
    /// taken: the next of its series is counted past it.
    static func v32SetAside(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_set_aside (
                  tableName TEXT NOT NULL,
                  recordID TEXT NOT NULL,
                  zoneName TEXT NOT NULL,
                  number TEXT,
                  site TEXT,
                  kind TEXT,
                  year INTEGER,
                  counter INTEGER,
                  shipmentRecordID TEXT,
                  keptBy TEXT,
                  reissuedAs TEXT,
                  setAsideAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  PRIMARY KEY (tableName, recordID));
                """
        )
        try db.execute(sql: setAsideGuards)
    }

    /// The delete guards of invoices and their lines, with the one way out: a set-aside record.
    static let setAsideGuards = """
        DROP TRIGGER invoices_never_deleted;
        CREATE TRIGGER invoices_never_deleted BEFORE DELETE ON invoices
        WHEN NOT EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = 'invoices' AND recordID = OLD.recordID) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice or credit note is never deleted');
        END;
        DROP TRIGGER invoice_lines_never_deleted;
        CREATE TRIGGER invoice_lines_never_deleted BEFORE DELETE ON invoice_lines
        WHEN NOT EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = 'invoice_lines' AND recordID = OLD.recordID) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: an issued invoice''s line is never deleted');
        END;
        """
}
