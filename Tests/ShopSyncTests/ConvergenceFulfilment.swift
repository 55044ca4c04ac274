import Foundation
import GRDB
import NorthwindStore

@testable import Northwind

// The convergence run's packers: orders shipped whole or in parts, backorders filled after receipts and transfers,
// the rest of an order shipped in part cancelled, at every site, online or not.
extension ConvergenceRun {
    /// Half the time what the shelf holds of one of this site's open orders ships ("Ship available"), else an order
    /// ships whole (`executeOrder`).
    func shipOrder(_ backoffice: Backoffice, site: String) async throws -> String {
        guard Bool.random(using: &random) else { return try await executeOrder(backoffice, site: site) }
        // Mostly an order the shelf can fill some of, as a packer would pick; now and then any (which may be refused).
        let code = siteCodes[site]!
        let partly = try await backoffice.store.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT number FROM orders o WHERE status = 'new' AND number LIKE ? AND EXISTS (
                      SELECT 1 FROM order_lines l JOIN products p ON p.id = l.productID WHERE l.orderID = o.id AND p.unitsInStock > 0
                        AND l.quantity > ifnull((SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = l.id), 0))
                    ORDER BY number
                    """,
                arguments: ["\(code)-%"]
            )
        }
        var pick = Int.random(in: 0..<4, using: &random) > 0 ? partly.randomElement(using: &random) : nil
        if pick == nil { pick = try await ownNewOrder(backoffice, site: site) }
        guard let number = pick else { return "no order to ship" }
        let shipment = try await backoffice.orders.shipAvailable(number: number)
        let parts = shipment.lines.map { "\($0.quantity) of \($0.productID)" }.joined(separator: ", ")
        return "ship available of order \(number): shipment \(shipment.shipment.sequence), \(parts)"
    }

    /// At every installation: no order line shipped beyond what it asks, every shipment line with exactly one
    /// movement, and a shipped order's lines shipped whole.
    func checkFulfilment() async throws {
        for site in sites {
            let (over, unmoved, incomplete) = try await stores[site]!.store.pool.read { db in
                (
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT l.recordID FROM order_lines l
                            WHERE (SELECT sum(s.quantity) FROM shipment_lines s WHERE s.orderLineID = l.id) > l.quantity
                            """
                    ),
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT s.recordID FROM shipment_lines s
                            WHERE (SELECT count(*) FROM stock_movements m WHERE m.shipmentLineID = s.id) <> 1
                            """
                    ),
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT o.recordID FROM orders o WHERE o.status = 'shipped'
                              AND EXISTS (SELECT 1 FROM shipments s WHERE s.orderID = o.id)
                              AND EXISTS (SELECT 1 FROM order_lines l WHERE l.orderID = o.id
                                AND l.quantity <> ifnull((SELECT sum(s.quantity) FROM shipment_lines s WHERE s.orderLineID = l.id), 0))
                            """
                    )
                )
            }
            if let line = over.first { throw Violation(description: "at \(site), order line \(line) shipped more than it asks") }
            if let line = unmoved.first { throw Violation(description: "at \(site), shipment line \(line) has not exactly one movement") }
            if let order = incomplete.first {
                throw Violation(description: "at \(site), order \(orderNumbers[order] ?? order) is shipped with a line not shipped whole")
            }
        }
    }
}

// Returns, invoices and credit notes: goods come back from a site's own shipments, and every installation holds each
// site's series whole.
extension ConvergenceRun {
    /// The packers' turn: mostly a shipment, now and then a return.
    func fulfil(_ backoffice: Backoffice, site: String) async throws -> String {
        Int.random(in: 0..<7, using: &random) < 5 ? try await shipOrder(backoffice, site: site) : try await takeReturn(backoffice, site: site)
    }

    /// Some units of a line of one of this site's shipments come back (now and then more than is left, refused).
    func takeReturn(_ backoffice: Backoffice, site: String) async throws -> String {
        let code = siteCodes[site]!
        let candidates = try await backoffice.store.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT o.number, h.sequence, l.productID,
                      s.quantity - ifnull((SELECT sum(quantity) FROM return_lines WHERE shipmentLineID = s.id), 0) AS left
                    FROM shipment_lines s JOIN shipments h ON h.id = s.shipmentID JOIN orders o ON o.id = h.orderID
                    JOIN order_lines l ON l.id = s.orderLineID
                    WHERE o.number LIKE ? ORDER BY o.number, h.sequence, l.productID
                    """,
                arguments: ["\(code)-%"]
            ).map { ($0[0] as String, $0[1] as Int, $0[2] as Int64, $0[3] as Int) }
        }
        guard let (order, sequence, product, left) = candidates.randomElement(using: &random) else { return "no shipment to take a return of" }
        let quantity = Int.random(in: 0..<5, using: &random) == 0 ? left + 1 : Int.random(in: 1...max(left, 1), using: &random)
        let returned = try await backoffice.invoicing.takeReturn(
            orderNumber: order,
            shipmentSequence: sequence,
            lines: [ShipLine(productID: product, quantity: quantity)]
        )
        return "return of \(quantity) of \(product) from order \(order) shipment \(sequence): credit note \(returned.creditNoteNumber ?? "none")"
    }

    /// At every installation: each site's invoices and credit notes numbered 1..n per year with no gap or repeat
    /// (a number a sync set aside, its document in the inbox, counts as given),
    /// one invoice per shipment and one credit note per return, every return line with exactly one movement, and
    /// no shipment line credited or returned beyond what it carried.
    func checkInvoices() async throws {
        for site in sites {
            let problems = try await stores[site]!.store.pool.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT 'series ' || site || ' ' || kind || ' ' || year || ' holds ' || count(*) || ' documents numbered up to '
                          || max(counter) FROM (SELECT site, kind, year, counter FROM invoices
                            UNION SELECT site, kind, year, counter FROM sync_set_aside WHERE tableName = 'invoices')
                          GROUP BY site, kind, year HAVING count(*) <> max(counter)
                        UNION ALL
                        SELECT 'series ' || site || ' ' || kind || ' ' || year || ' holds a number twice' FROM invoices
                          GROUP BY site, kind, year HAVING count(DISTINCT counter) <> count(*)
                        UNION ALL
                        SELECT 'number ' || i.number || ' was set aside and given again' FROM sync_set_aside s JOIN invoices i
                          ON i.site = s.site AND i.kind = s.kind AND i.year = s.year AND i.counter = s.counter
                          WHERE s.tableName = 'invoices' AND i.recordID IS NOT s.keptBy
                        UNION ALL
                        SELECT 'shipment ' || h.recordID || ' has ' || (SELECT count(*) FROM invoices i WHERE i.shipmentID = h.id
                          AND i.kind = 'invoice') || ' invoices' FROM shipments h
                          WHERE (SELECT count(*) FROM invoices i WHERE i.shipmentID = h.id AND i.kind = 'invoice') <> 1
                        UNION ALL
                        SELECT 'return ' || r.recordID || ' has no single credit note' FROM returns r
                          WHERE (SELECT count(*) FROM invoices i WHERE i.returnID = r.id) <> 1
                        UNION ALL
                        SELECT 'return line ' || r.recordID || ' has not exactly one movement' FROM return_lines r
                          WHERE (SELECT count(*) FROM stock_movements m WHERE m.returnLineID = r.id) <> 1
                        UNION ALL
                        SELECT 'shipment line ' || s.recordID || ' is credited or returned beyond what it carried' FROM shipment_lines s
                          WHERE ifnull((SELECT sum(quantity) FROM return_lines WHERE shipmentLineID = s.id), 0) > s.quantity
                            OR ifnull((SELECT sum(l.quantity) FROM invoice_lines l JOIN invoices i ON i.id = l.invoiceID
                              WHERE i.kind = 'creditNote' AND l.shipmentLineID = s.id), 0) > s.quantity
                        """
                )
            }
            if let problem = problems.first { throw Violation(description: "at \(site), \(problem)") }
        }
    }
}
