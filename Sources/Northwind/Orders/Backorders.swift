import Foundation
import GRDB
import NorthwindStore

/// A sent purchase order that will bring a backordered product: its number, when it is expected, and how many
/// units it still awaits.
public struct CoveringPurchase: Sendable, Codable, Equatable {
    public var number: String
    public var expectedDate: LocalDate?
    public var awaiting: Int
}

/// One backordered line: what the customer still waits for, whether the shelf can fill it now, and if not, which
/// purchase order will.
public struct BackorderLine: Sendable, Codable, Equatable {
    public var orderNumber: String
    public var customerCode: String
    public var customerName: String
    public var orderDate: LocalDate
    public var requiredDate: LocalDate?
    /// The site that ships it, when that is not this one (head office sees every site's backorders). Its `line`
    /// then counts nothing on this shelf as fillable, and `coveredBy` is nil: this location's stock and purchase
    /// orders are not that site's.
    public var site: String?
    public var line: LineFulfilment
    /// The earliest-expected sent purchase order of this location that still awaits the product; nil when the shelf
    /// can fill the line now, or nothing is on order.
    public var coveredBy: CoveringPurchase?
}

extension Orders {
    /// The backorder queue: every line still to ship of the orders shipped in part that this store holds, most urgent first
    /// (required date, then order date). An order that has shipped nothing is not backordered: it is new, and
    /// waits on the orders list.
    public func backorders(limit: Int = 50, offset: Int = 0) async throws(NorthwindError) -> Page<BackorderLine> {
        try checkPaging(limit: limit, offset: offset)
        return try await measuredRead("backorders") { db in
            let open = """
                FROM orders o JOIN order_lines l ON l.orderID = o.id JOIN products p ON p.id = l.productID
                  JOIN customers c ON c.id = o.customerID
                WHERE o.status = 'new' AND EXISTS (SELECT 1 FROM shipments s WHERE s.orderID = o.id)
                  AND l.quantity > \(Self.shippedSQL("l.id"))
                """
            let total = try Int.fetchOne(db, sql: "SELECT count(*) \(open)") ?? 0
            let ownZone = try Self.ownZone(db)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.number, c.code, c.companyName, o.orderDate, o.requiredDate, l.id, l.productID, p.name, l.quantity,
                      p.unitsInStock, \(Self.shippedSQL("l.id")),
                      (SELECT r.zoneName FROM sync_records r WHERE r.tableName = 'orders' AND r.recordID = o.recordID) \(open)
                    ORDER BY o.requiredDate IS NULL, o.requiredDate, o.orderDate, o.id, l.id LIMIT ? OFFSET ?
                    """,
                arguments: [limit, offset]
            )
            let items = try rows.map { row in
                let zone: String? = row[11]
                let site = ownZone != nil && zone != nil && zone != ownZone ? zone.map { String($0.dropFirst("site-".count)) } : nil
                let line = LineFulfilment(
                    orderLineID: row[5],
                    productID: row[6],
                    productName: row[7],
                    ordered: row[8],
                    shipped: row[10],
                    inStock: site == nil ? row[9] : 0
                )
                return BackorderLine(
                    orderNumber: row[0],
                    customerCode: row[1],
                    customerName: row[2],
                    orderDate: row[3],
                    requiredDate: row[4],
                    site: site,
                    line: line,
                    coveredBy: site == nil && line.fillable < line.open ? try Self.coveringPurchase(productID: line.productID, db) : nil
                )
            }
            return Page(items: items, total: total, offset: offset, limit: limit)
        }
    }

    static func coveringPurchase(productID: Int64, _ db: Database) throws -> CoveringPurchase? {
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT po.number, po.expectedDate, l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
                      WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0) AS awaiting
                    FROM purchase_order_lines l JOIN purchase_orders po ON po.id = l.purchaseOrderID
                    WHERE l.productID = ? AND po.location IS NULL AND po.status IN ('sent', 'partiallyReceived') AND awaiting > 0
                    ORDER BY po.expectedDate IS NULL, po.expectedDate, po.id LIMIT 1
                    """
            ),
            arguments: [productID]
        )
        guard let row else { return nil }
        return CoveringPurchase(number: row[0], expectedDate: row[1], awaiting: row[2])
    }

    /// How many of this site's orders shipped in part the shelf here could now complete, each on its own (two that
    /// need the same last units both count). Another site's orders ship from that site's shelf, so they never count.
    public func backorderedOrdersFillableNow() async throws(NorthwindError) -> Int {
        try await measuredRead("backorders fillable") { db in
            let ownZone = try Self.ownZone(db)
            return try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM orders o
                    WHERE o.status = 'new' AND EXISTS (SELECT 1 FROM shipments s WHERE s.orderID = o.id)
                      AND NOT EXISTS (SELECT 1 FROM order_lines l JOIN products p ON p.id = l.productID WHERE l.orderID = o.id
                        AND l.quantity - \(Self.shippedSQL("l.id")) > max(p.unitsInStock, 0))
                      AND (?1 IS NULL OR NOT EXISTS (SELECT 1 FROM sync_records r
                        WHERE r.tableName = 'orders' AND r.recordID = o.recordID AND r.zoneName <> ?1))
                    """,
                arguments: [ownZone]
            ) ?? 0
        }
    }
}
