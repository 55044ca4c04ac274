import Foundation
import GRDB
import NorthwindStore

extension Orders {
    /// SQL for the units of an order line (`line` names its id) that shipments have carried so far.
    static func shippedSQL(_ line: String) -> String {
        "ifnull((SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = \(line)), 0)"
    }

    /// This installation's own zone, whose orders it ships; nil in a store that has joined no company (every
    /// order is its own).
    static func ownZone(_ db: Database) throws -> String? {
        try ShopSync.membership(db).map { SyncTable.siteZone($0.siteCode) }
    }

    /// An order's lines as shipped so far. An order shipped before shipments were kept (the classic data, or an
    /// execution by an older version) has no shipment: it shipped whole, on its shipped date.
    static func fulfilment(_ order: Order, _ db: Database) throws -> OrderFulfilment {
        let shipments = try Self.shipments(orderID: order.id, orderNumber: order.number, db)
        let wholeBeforeShipments = order.status == .shipped && shipments.isEmpty
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT l.id, l.productID, p.name, l.quantity, p.unitsInStock,
                      \(shippedSQL("l.id")) AS shipped
                    FROM order_lines l JOIN products p ON p.id = l.productID
                    WHERE l.orderID = ? ORDER BY l.id
                    """
            ),
            arguments: [order.id]
        )
        let lines = rows.map { row in
            LineFulfilment(
                orderLineID: row[0],
                productID: row[1],
                productName: row[2],
                ordered: row[3],
                shipped: wholeBeforeShipments ? row[3] : row[5],
                inStock: row[4]
            )
        }
        let status: FulfilmentStatus =
            switch order.status {
            case .new: shipments.isEmpty ? .new : .partlyShipped
            case .shipped: .shipped
            case .cancelled: .cancelled
            }
        let complete = try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT ifnull(completeShipmentsOnly, 0) FROM customers WHERE id = ?"),
            arguments: [order.customerID]
        )
        return OrderFulfilment(
            orderNumber: order.number,
            status: status,
            completeShipmentsOnly: complete ?? false,
            lines: lines,
            shipments: shipments
        )
    }

    static func shipments(orderID: Int64?, orderNumber: String, _ db: Database) throws -> [ShipmentDetail] {
        let shipments = try Shipment.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM shipments WHERE orderID = ? ORDER BY sequence"),
            arguments: [orderID]
        )
        // Each shipment says where it left the order: shipped once every line's units had left.
        let ordered = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, quantity FROM order_lines WHERE orderID = ?"), arguments: [orderID])
        var open = Dictionary(uniqueKeysWithValues: ordered.map { ($0[0] as Int64, $0[1] as Int) })
        return try shipments.map { shipment in
            for row in try Row.fetchAll(
                db.cachedStatement(sql: "SELECT orderLineID, quantity FROM shipment_lines WHERE shipmentID = ?"),
                arguments: [shipment.id]
            ) {
                open[row[0], default: 0] -= row[1]
            }
            let orderStatus: FulfilmentStatus = open.values.allSatisfy { $0 <= 0 } ? .shipped : .partlyShipped
            let lines = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT l.productID, p.name, s.quantity FROM shipment_lines s
                        JOIN order_lines l ON l.id = s.orderLineID JOIN products p ON p.id = l.productID
                        WHERE s.shipmentID = ? ORDER BY l.id
                        """
                ),
                arguments: [shipment.id]
            ).map { ShipmentLineDetail(productID: $0[0], productName: $0[1], quantity: $0[2]) }
            let invoice = try String.fetchOne(
                db.cachedStatement(sql: "SELECT number FROM invoices WHERE shipmentID = ? AND kind = 'invoice'"),
                arguments: [shipment.id]
            )
            return ShipmentDetail(shipment: shipment, orderNumber: orderNumber, lines: lines, orderStatus: orderStatus, invoiceNumber: invoice)
        }
    }

    static func shipment(id: Int64?, _ db: Database) throws -> ShipmentDetail {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT s.orderID, o.number FROM shipments s JOIN orders o ON o.id = s.orderID WHERE s.id = ?"),
                arguments: [id]
            )
        else { throw NorthwindError.notFound(entity: "shipment", key: "#\(id ?? 0)") }
        let all = try shipments(orderID: row[0], orderNumber: row[1], db)
        guard let shipment = all.first(where: { $0.shipment.id == id }) else {
            throw NorthwindError.notFound(entity: "shipment", key: "#\(id ?? 0)")
        }
        return shipment
    }

    /// The shipment an earlier call with this key made, if any.
    static func shipment(orderID: Int64?, requestKey: String, _ db: Database) throws -> ShipmentDetail? {
        guard
            let id = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM shipments WHERE orderID = ? AND requestKey = ?"),
                arguments: [orderID, requestKey]
            )
        else { return nil }
        return try shipment(id: id, db)
    }

    /// One shipment by its order's number and its number within the order (1, 2, …).
    public func shipment(orderNumber: String, sequence: Int) async throws(NorthwindError) -> ShipmentDetail {
        try await read { db in
            let order = try Self.fetchOrder(number: orderNumber, db)
            guard
                let shipment = try Self.shipments(orderID: order.id, orderNumber: order.number, db).first(where: { $0.shipment.sequence == sequence })
            else { throw NorthwindError.notFound(entity: "shipment", key: "\(order.number)/\(sequence)") }
            return shipment
        }
    }
}
