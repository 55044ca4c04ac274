import Foundation
import GRDB
import NorthwindStore

@testable import Northwind

// The convergence run's buyers: purchase orders sent, received in parts (at times beyond them) and reversed,
// at every site, online or not.
extension ConvergenceRun {
    /// A buyer's work, offline or not: send a purchase order, receive part of one (now and then more than it awaits,
    /// with a reason), or reverse a receipt.
    func buy(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        let open = try await backoffice.purchasing.list(PurchaseOrderQuery()).items.filter {
            $0.order.location == nil && ($0.order.status == .sent || $0.order.status == .partiallyReceived)
        }
        let action = Int.random(in: 0..<5, using: &random)
        if action < 3, let summary = open.randomElement(using: &random) {
            let order = try await backoffice.purchasing.purchaseOrder(number: summary.order.number)
            guard let line = order.lines.filter({ $0.outstanding > 0 }).randomElement(using: &random) else { return "nothing awaited" }
            let quantity = Int.random(in: 1...(line.outstanding + 2), using: &random)
            let over = quantity > line.outstanding ? "extra units in the case" : nil
            _ = try await backoffice.purchasing.receive(
                number: order.order.number,
                lines: [ReceiptLine(productID: line.line.productID, quantity: quantity, overReceipt: over)],
                requestKey: "\(site)-\(step)"
            )
            return "purchase receipt of \(quantity) of \(line.line.recordID) on \(order.order.recordID)\(over == nil ? "" : " (over)")"
        }
        if action == 3 {
            let receipts = try await backoffice.store.pool.read { db in
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT m.id FROM stock_movements m JOIN products p ON p.id = m.productID
                        WHERE m.reason = 'purchaseReceipt' AND m.location IS NULL AND p.unitsInStock >= m.delta
                          AND NOT EXISTS (SELECT 1 FROM stock_movements r WHERE r.reversesID = m.id) ORDER BY m.id
                        """
                )
            }
            guard let receipt = receipts.randomElement(using: &random) else { return "no receipt to reverse" }
            let order = try await backoffice.purchasing.reverse(receiptID: receipt)
            return "purchase reversal on \(order.order.recordID)"
        }
        let products = try await backoffice.store.pool.read { db in
            try Product.filter(Column("discontinued") == false && Column("supplierID") != nil).order(Column("id")).fetchAll(db)
        }
        guard let product = products.randomElement(using: &random), let id = product.id, let supplier = product.supplierID else {
            return "nothing to buy"
        }
        let cost = Money(cents: Int.random(in: 100...2_000, using: &random))
        let quantity = Int.random(in: 1...30, using: &random)
        let draft = PurchaseOrderDraft(supplierID: supplier, lines: [PurchaseLineDraft(productID: id, quantity: quantity, unitCost: cost)])
        let written = try await backoffice.purchasing.create(draft)
        let sent = try await backoffice.purchasing.send(number: written.order.number)
        return "purchase order sent for \(quantity) of \(product.recordID) at \(cost): \(sent.order.recordID)"
    }
}
