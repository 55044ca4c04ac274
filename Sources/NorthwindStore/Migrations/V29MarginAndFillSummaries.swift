import GRDB

extension Schema {
    /// The gross margin and the fill rate, kept by triggers as the year summaries are (v26), so that neither reads
    /// every line, movement and shipment of the history (at scale 100: 724 ms and 308 ms). Derived; none syncs.
    /// - `product_year_margin`: per year of shipping and product, the lines of shipped orders, their sales, the cost
    ///   of their shipped movements and how many lines have a movement without a cost, or none.
    /// - `order_day_fill`: per order date, the orders not cancelled with lines, and the units ordered (with those a
    ///   cancellation took off).
    /// - `shipped_day_fill`: per order date and whole days from the order to its shipping, the units shipped.
    /// An order's figures depend on its lines, movements and shipments in ways that do not add up row by row (a line
    /// with no movement is uncosted; an order's first shipment replaces its shipped date): each trigger takes the
    /// order's figures away as they were before a change and adds them back as they are after it
    /// (`marginAndFillTriggers`).
    static func v29MarginAndFillSummaries(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE product_year_margin (
                  year INTEGER NOT NULL,
                  productID INTEGER NOT NULL,
                  lineCount INTEGER NOT NULL,
                  quantity INTEGER NOT NULL,
                  salesCents INTEGER NOT NULL,
                  costCents INTEGER NOT NULL,
                  uncostedLines INTEGER NOT NULL,
                  PRIMARY KEY (year, productID)) WITHOUT ROWID;
                CREATE TABLE order_day_fill (
                  orderDate TEXT NOT NULL PRIMARY KEY,
                  orders INTEGER NOT NULL,
                  orderedUnits INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE shipped_day_fill (
                  orderDate TEXT NOT NULL,
                  lagDays INTEGER NOT NULL,
                  units INTEGER NOT NULL,
                  PRIMARY KEY (orderDate, lagDays)) WITHOUT ROWID;
                """
        )
        try rebuildMarginAndFillSummaries(db)
        try db.execute(sql: marginAndFillTriggers)
    }

    /// Whole days from an order's date to `shipped`, rounded up, so that `lag <= n` exactly when `shipped <=
    /// date(orderDate, '+n days')`; a date that is not one counts as never shipped in time.
    private static func lagDays(_ shipped: String, order o: String) -> String {
        let difference = "(julianday(\(shipped)) - julianday(date(\(o).orderDate)))"
        return "ifnull(CAST(\(difference) AS INTEGER) + (\(difference) > CAST(\(difference) AS INTEGER)), 1000000000)"
    }

    /// Each shipped line's movements, by order and product: how many, how many have a cost, and what they cost.
    private static func shippedMovements(_ where: String) -> String {
        """
        SELECT orderID, productID, count(*) AS moved, count(unitCostCents) AS costed, SUM(-delta * unitCostCents) AS cost
        FROM stock_movements WHERE reason = 'shipped' AND \(`where`) GROUP BY orderID, productID
        """
    }

    /// The parts of an order's figures: its shipped lines' margin, its ordered units, and its units shipped.
    enum Figures: CaseIterable { case margin, ordered, shipped }

    /// A row an insert has just written, left out to work out an order's figures as they were before it.
    struct Without {
        var line = "NULL"
        var movement = "NULL"
        var shipment = "NULL"
    }

    /// Adds (`sign` "") or takes away ("-") the figures of the order whose id `id` gives, as the tables hold them now
    /// less the rows `without` names.
    private static func orderFigures(_ sign: String, _ id: String, _ figures: [Figures], without w: Without = Without()) -> String {
        let s = sign
        return figures.map { figure in
            switch figure {
            case .margin:
                return """
                    INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
                      SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, \(s)1, \(s)ol.quantity, \(s)ol.extendedPriceCents,
                             \(s)ifnull(m.cost, 0), \(s)(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
                      FROM orders o JOIN order_lines ol ON ol.orderID = o.id
                      LEFT JOIN (\(shippedMovements("orderID = \(id) AND id IS NOT \(w.movement)"))) m ON m.productID = ol.productID
                      WHERE o.id = \(id) AND o.status = 'shipped' AND ol.id IS NOT \(w.line)
                      ON CONFLICT DO UPDATE SET lineCount = lineCount + excluded.lineCount, quantity = quantity + excluded.quantity,
                        salesCents = salesCents + excluded.salesCents, costCents = costCents + excluded.costCents,
                        uncostedLines = uncostedLines + excluded.uncostedLines;
                    """
            case .ordered:
                return """
                    INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
                      SELECT orderDate, \(s)1, \(s)ordered FROM (
                        SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id AND id IS NOT \(w.line))
                                 + ifnull(o.cancelledUnits, 0) AS ordered
                        FROM orders o WHERE o.id = \(id) AND o.status <> 'cancelled')
                      WHERE ordered > 0
                      ON CONFLICT DO UPDATE SET orders = orders + excluded.orders, orderedUnits = orderedUnits + excluded.orderedUnits;
                    """
            case .shipped:
                return """
                    INSERT INTO shipped_day_fill (orderDate, lagDays, units)
                      SELECT o.orderDate, \(lagDays("s.shippedDate", order: "o")), \(s)SUM(l.quantity)
                      FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
                      WHERE o.id = \(id) AND o.status <> 'cancelled' AND s.id IS NOT \(w.shipment) GROUP BY 1, 2
                      UNION ALL
                      SELECT o.orderDate, \(lagDays("o.shippedDate", order: "o")), \(s)SUM(ol.quantity)
                      FROM orders o JOIN order_lines ol ON ol.orderID = o.id
                      WHERE o.id = \(id) AND o.status = 'shipped' AND ol.id IS NOT \(w.line)
                        AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id AND id IS NOT \(w.shipment))
                      GROUP BY 1, 2
                      ON CONFLICT DO UPDATE SET units = units + excluded.units;
                    """
            }
        }.joined(separator: "\n")
    }

    /// A BEFORE trigger that takes the figures of the orders `ids` gives away, and its AFTER twin that adds them back.
    /// `when` holds for both or for neither: it reads nothing the change itself writes.
    private static func aroundChange(
        _ name: String,
        _ event: String,
        when: String? = nil,
        ids: [String],
        _ figures: [Figures] = Figures.allCases
    ) -> String {
        let condition = when.map { "WHEN \($0) " } ?? ""
        return """
            CREATE TRIGGER \(name)_summary_before BEFORE \(event) \(condition)BEGIN
              \(ids.map { orderFigures("-", $0, figures) }.joined(separator: "\n"))
            END;
            CREATE TRIGGER \(name)_summary_after AFTER \(event) \(condition)BEGIN
              \(ids.map { orderFigures("", $0, figures) }.joined(separator: "\n"))
            END;
            """
    }

    /// An AFTER INSERT trigger that takes away the figures of the order `id` gives as they were without the new row,
    /// and adds them as they are. Not a BEFORE twin: an insert that a conflict clause skips (OR IGNORE, an upsert's
    /// update) runs BEFORE triggers but not AFTER ones.
    private static func afterInsert(
        _ name: String,
        on table: String,
        when: String? = nil,
        id: String,
        _ figures: [Figures],
        without: Without
    ) -> String {
        let condition = when.map { "WHEN \($0) " } ?? ""
        return """
            CREATE TRIGGER \(name)_summary_insert AFTER INSERT ON \(table) \(condition)BEGIN
              \(orderFigures("-", id, figures, without: without))
              \(orderFigures("", id, figures))
            END;
            """
    }

    /// Each trigger recomputes only the parts a change can move, and only when it can: an order is written with its
    /// lines while open, ships (movements, shipments, then its status), and a part shipped adds to what shipped.
    /// Executing an order costs a few statements, not a recomputation per row. Updates and deletes take the figures
    /// away before and add them after; a conflict clause on them (UPDATE OR IGNORE, OR REPLACE) is not supported, as
    /// for the year summaries (v26).
    static var marginAndFillTriggers: String {
        // A row moved to another order changes both; the second is the NULL of no order when it did not move.
        let moved = { (column: String) in "CASE WHEN NEW.\(column) IS NOT OLD.\(column) THEN NEW.\(column) END" }
        let shipped = { (order: String) in "(SELECT status FROM orders WHERE id = \(order)) = 'shipped'" }
        let noShipments = { (order: String) in "NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = \(order))" }
        return """
            CREATE TRIGGER orders_figures_summary_insert AFTER INSERT ON orders BEGIN
              \(orderFigures("", "NEW.id", Figures.allCases))
            END;
            CREATE TRIGGER orders_figures_summary_delete BEFORE DELETE ON orders BEGIN
              \(orderFigures("-", "OLD.id", Figures.allCases))
            END;
            \(aroundChange(
                "orders_margin",
                "UPDATE OF shippedDate, status ON orders",
                when: """
                    (OLD.status = 'shipped' OR NEW.status = 'shipped')
                      AND (NEW.shippedDate IS NOT OLD.shippedDate OR NEW.status IS NOT OLD.status)
                    """,
                ids: ["OLD.id"],
                [.margin]
            ))
            \(aroundChange(
                "orders_fill",
                "UPDATE OF orderDate, shippedDate, status, cancelledUnits ON orders",
                when: """
                    NEW.orderDate IS NOT OLD.orderDate OR (NEW.status = 'cancelled') IS NOT (OLD.status = 'cancelled')
                      OR NEW.cancelledUnits IS NOT OLD.cancelledUnits
                      OR (NEW.shippedDate IS NOT OLD.shippedDate AND \(noShipments("NEW.id")))
                    """,
                ids: ["OLD.id"],
                [.ordered, .shipped]
            ))
            \(afterInsert("order_lines_ordered", on: "order_lines", id: "NEW.orderID", [.ordered], without: Without(line: "NEW.id")))
            \(afterInsert(
                "order_lines_shipped",
                on: "order_lines",
                when: shipped("NEW.orderID"),
                id: "NEW.orderID",
                [.margin, .shipped],
                without: Without(line: "NEW.id")
            ))
            \(aroundChange("order_lines_ordered_delete", "DELETE ON order_lines", ids: ["OLD.orderID"], [.ordered]))
            \(aroundChange(
                "order_lines_shipped_delete",
                "DELETE ON order_lines",
                when: shipped("OLD.orderID"),
                ids: ["OLD.orderID"],
                [.margin, .shipped]
            ))
            \(aroundChange(
                "order_lines_figures_update",
                "UPDATE OF orderID, productID, quantity, extendedPriceCents ON order_lines",
                when: """
                    NEW.orderID IS NOT OLD.orderID OR NEW.productID IS NOT OLD.productID OR NEW.quantity IS NOT OLD.quantity
                      OR NEW.extendedPriceCents IS NOT OLD.extendedPriceCents
                    """,
                ids: ["OLD.orderID", moved("orderID")]
            ))
            \(afterInsert(
                "stock_movements_margin",
                on: "stock_movements",
                when: "NEW.reason = 'shipped' AND \(shipped("NEW.orderID"))",
                id: "NEW.orderID",
                [.margin],
                without: Without(movement: "NEW.id")
            ))
            \(aroundChange(
                "stock_movements_margin_update",
                "UPDATE OF orderID, productID, delta, reason, unitCostCents ON stock_movements",
                when: """
                    (OLD.reason = 'shipped' OR NEW.reason = 'shipped') AND (NEW.orderID IS NOT OLD.orderID
                      OR NEW.productID IS NOT OLD.productID OR NEW.delta IS NOT OLD.delta OR NEW.reason IS NOT OLD.reason
                      OR NEW.unitCostCents IS NOT OLD.unitCostCents)
                    """,
                ids: ["OLD.orderID", moved("orderID")],
                [.margin]
            ))
            \(afterInsert(
                "shipments_shipped",
                on: "shipments",
                when: "\(shipped("NEW.orderID")) AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = NEW.orderID AND id <> NEW.id)",
                id: "NEW.orderID",
                [.shipped],
                without: Without(shipment: "NEW.id")
            ))
            CREATE TRIGGER shipment_lines_shipped_summary_insert AFTER INSERT ON shipment_lines BEGIN
              INSERT INTO shipped_day_fill (orderDate, lagDays, units)
                SELECT o.orderDate, \(lagDays("h.shippedDate", order: "o")), NEW.quantity
                FROM shipments h JOIN orders o ON o.id = h.orderID WHERE h.id = NEW.shipmentID AND o.status <> 'cancelled'
                ON CONFLICT DO UPDATE SET units = units + excluded.units;
            END;
            """
    }

    /// Computes the margin and fill summaries afresh, with their triggers lifted (bulk loads, the migration).
    static func rebuildMarginAndFillSummaries(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM product_year_margin;
                DELETE FROM order_day_fill;
                DELETE FROM shipped_day_fill;
                INSERT INTO product_year_margin (year, productID, lineCount, quantity, salesCents, costCents, uncostedLines)
                  SELECT CAST(substr(o.shippedDate, 1, 4) AS INTEGER), ol.productID, count(*), SUM(ol.quantity),
                         SUM(ol.extendedPriceCents), SUM(ifnull(m.cost, 0)), SUM(ifnull(m.moved, 0) = 0 OR m.costed < m.moved)
                  FROM orders o JOIN order_lines ol ON ol.orderID = o.id
                  LEFT JOIN (\(shippedMovements("orderID IS NOT NULL"))) m ON m.orderID = o.id AND m.productID = ol.productID
                  WHERE o.status = 'shipped' GROUP BY 1, 2;
                INSERT INTO order_day_fill (orderDate, orders, orderedUnits)
                  SELECT orderDate, count(*), SUM(ordered) FROM (
                    SELECT o.orderDate, (SELECT SUM(quantity) FROM order_lines WHERE orderID = o.id)
                             + ifnull(o.cancelledUnits, 0) AS ordered
                    FROM orders o WHERE o.status <> 'cancelled')
                  WHERE ordered > 0 GROUP BY 1;
                INSERT INTO shipped_day_fill (orderDate, lagDays, units)
                  SELECT orderDate, lag, SUM(units) FROM (
                    SELECT o.orderDate, \(lagDays("s.shippedDate", order: "o")) AS lag, l.quantity AS units
                    FROM orders o JOIN shipments s ON s.orderID = o.id JOIN shipment_lines l ON l.shipmentID = s.id
                    WHERE o.status <> 'cancelled'
                    UNION ALL
                    SELECT o.orderDate, \(lagDays("o.shippedDate", order: "o")), ol.quantity
                    FROM orders o JOIN order_lines ol ON ol.orderID = o.id
                    WHERE o.status = 'shipped' AND NOT EXISTS (SELECT 1 FROM shipments WHERE orderID = o.id))
                  GROUP BY 1, 2;
                """
        )
    }
}
