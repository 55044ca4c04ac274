import GRDB

extension Schema {
    static func v18LedgerGuards(_ db: Database) throws {
        try db.execute(sql: ledgerGuards)
        try db.execute(sql: shipOnce)
    }

    /// Stock movements are the ledger every site's stock adds up from: no delete, and so no cascade (from a product,
    /// a transfer or an order), may remove one, here or on arrival by sync. A product with movements or stock
    /// anywhere is discontinued instead. Only wiping the whole store (`Store.deleteAllData`) lifts them, for its
    /// own transaction.
    static let ledgerGuards = """
        CREATE TRIGGER stock_movements_never_deleted BEFORE DELETE ON stock_movements BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a stock movement is never deleted; correct it with another movement');
        END;
        CREATE TRIGGER products_keep_their_ledger BEFORE DELETE ON products
        WHEN EXISTS (SELECT 1 FROM stock_movements WHERE productID = OLD.id)
          OR EXISTS (SELECT 1 FROM stock_levels WHERE productID = OLD.id AND units <> 0) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a product with stock movements is never deleted; discontinue it');
        END;
        CREATE TRIGGER stock_transfers_keep_their_ledger BEFORE DELETE ON stock_transfers
        WHEN EXISTS (SELECT 1 FROM stock_movements WHERE transferID = OLD.id) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: a stock transfer with movements is never deleted');
        END;
        """

    /// An order line ships once: a second 'shipped' movement for it (a store restored from a backup executing the
    /// order again, or such a movement arriving by sync) is refused. A trigger rather than a unique index, so that a
    /// store holding such a pair already still opens.
    static let shipOnce = """
        CREATE TRIGGER stock_movements_ship_once BEFORE INSERT ON stock_movements
        WHEN NEW.reason = 'shipped' AND NEW.orderID IS NOT NULL AND EXISTS (SELECT 1 FROM stock_movements
          WHERE reason = 'shipped' AND orderID = NEW.orderID AND productID = NEW.productID) BEGIN
          SELECT RAISE(ABORT, 'northwind-ledger: this order line has shipped already');
        END;
        """

    static let dropLedgerGuards = """
        DROP TRIGGER stock_movements_never_deleted; DROP TRIGGER products_keep_their_ledger;
        DROP TRIGGER stock_transfers_keep_their_ledger;
        """
}
