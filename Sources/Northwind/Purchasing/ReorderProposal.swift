import Foundation
import GRDB
import NorthwindStore

/// What to order from one supplier.
public struct ReorderProposal: Sendable {
    public var supplierID: Int64
    public var supplierName: String
    /// Days from sending to the first receipt, on average over this supplier's past orders here; nil before any.
    public var leadTimeDays: Double?
    public var lines: [ProposalLine]
}

/// A product at or below its reorder level, and how many to order to bring it up to the target.
public struct ProposalLine: Sendable {
    public var productID: Int64
    public var productName: String
    public var unitsInStock: Int
    public var unitsOnOrder: Int
    public var reorderLevel: Int
    public var quantity: Int
    /// The unit cost of its latest receipt here; nil when it has never been received.
    public var lastCost: Money?
}

extension Purchasing {
    /// Every product here that is not discontinued, has a supplier, and whose stock plus what is on order is at or
    /// below its reorder level, with a quantity that brings it up to `purchasing.targetCover` times that level;
    /// grouped by supplier, by name.
    public func proposal() async throws(NorthwindError) -> [ReorderProposal] {
        let cover = rules.targetCover
        return try await read { db in try Self.proposal(cover: cover, db) }
    }

    /// Turns the proposal into draft purchase orders, one per supplier, at each product's last cost (a line with
    /// none waits for one before its order is sent). Returns the drafts; none when nothing needs ordering.
    public func draftsFromProposal(employeeID: Int64? = nil) async throws(NorthwindError) -> [PurchaseOrderDetail] {
        let cover = rules.targetCover
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            try Catalogue.checkEmployee(employeeID, db)
            let site = try StoreMetadata.siteCode(db)
            return try Self.proposal(cover: cover, db).map { proposal in
                var order = PurchaseOrder(
                    number: try Schema.nextPurchaseNumber(db, site: site),
                    supplierID: proposal.supplierID,
                    employeeID: employeeID
                )
                order.note = "From the reorder proposal"
                try order.insert(db)
                try Self.insertLines(
                    proposal.lines.map { PurchaseLineDraft(productID: $0.productID, quantity: $0.quantity, unitCost: $0.lastCost) },
                    orderID: order.id ?? 0,
                    db
                )
                return try Self.detail(number: order.number, db)
            }
        }
    }

    static func proposal(cover: Decimal, _ db: Database) throws -> [ReorderProposal] {
        // The target in whole units: cover × level, rounded up (a cover of 1.5 on a level of 5 is 8).
        let coverHundredths = NSDecimalNumber(decimal: cover * 100).intValue
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT p.id, p.name, p.unitsInStock, p.unitsOnOrder, p.reorderLevel, p.supplierID, s.companyName,
                  ((p.reorderLevel * ? + 99) / 100) - (p.unitsInStock + p.unitsOnOrder) AS quantity,
                  (SELECT m.unitCostCents FROM stock_movements m WHERE m.productID = p.id AND m.location IS NULL
                     AND m.reason = 'purchaseReceipt' AND m.unitCostCents IS NOT NULL ORDER BY m.id DESC LIMIT 1) AS lastCost
                FROM products p JOIN suppliers s ON s.id = p.supplierID
                WHERE NOT p.discontinued AND p.unitsInStock + p.unitsOnOrder <= p.reorderLevel
                  -- A product on one of this site's drafts is being ordered already: proposing it again would order
                  -- it twice (a second click on "Create purchase orders").
                  AND NOT EXISTS (SELECT 1 FROM purchase_order_lines l JOIN purchase_orders o ON o.id = l.purchaseOrderID
                                  WHERE l.productID = p.id AND o.status = 'draft' AND o.location IS NULL)
                ORDER BY s.companyName, s.id, p.name, p.id
                """,
            arguments: [coverHundredths]
        )
        var proposals: [ReorderProposal] = []
        for row in rows {
            let quantity: Int = row["quantity"]
            guard quantity > 0 else { continue }
            let supplierID: Int64 = row["supplierID"]
            let line = ProposalLine(
                productID: row["id"],
                productName: row["name"],
                unitsInStock: row["unitsInStock"],
                unitsOnOrder: row["unitsOnOrder"],
                reorderLevel: row["reorderLevel"],
                quantity: min(quantity, Limits.lineQuantity.upperBound),
                lastCost: (row["lastCost"] as Int?).map(Money.init(cents:))
            )
            if proposals.last?.supplierID == supplierID {
                proposals[proposals.count - 1].lines.append(line)
            } else {
                proposals.append(
                    ReorderProposal(
                        supplierID: supplierID,
                        supplierName: row["companyName"],
                        leadTimeDays: try leadTime(supplierID: supplierID, db),
                        lines: [line]
                    )
                )
            }
        }
        return proposals
    }

    /// Average days from sending an order of this supplier's to its first receipt here.
    static func leadTime(supplierID: Int64, _ db: Database) throws -> Double? {
        try Double.fetchOne(
            db,
            sql: """
                SELECT avg(julianday(first) - julianday(p.sentAt)) FROM purchase_orders p
                JOIN (SELECT l.purchaseOrderID AS orderID, min(m.createdAt) AS first FROM stock_movements m
                      JOIN purchase_order_lines l ON l.id = m.purchaseLineID
                      WHERE m.reason = 'purchaseReceipt' GROUP BY l.purchaseOrderID) r ON r.orderID = p.id
                WHERE p.supplierID = ? AND p.location IS NULL AND NOT p.opening AND p.sentAt IS NOT NULL
                """,
            arguments: [supplierID]
        )
    }
}
