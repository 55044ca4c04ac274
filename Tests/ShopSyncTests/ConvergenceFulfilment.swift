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
