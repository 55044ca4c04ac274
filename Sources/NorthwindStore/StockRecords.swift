import Foundation
import GRDB

// The stock ledger's records: movements (what moved a shelf, and why) and transfers between locations.

public enum StockMovementReason: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    /// The opening balance of a new or imported product.
    case initial
    case received
    case stockTake
    case shipped
    /// Sent to another location (`StockTransfer`): this shelf's side of a transfer.
    case transferOut
    /// Received from another location: as many units as arrived, which may be fewer than were sent.
    case transferIn
    /// Goods received against a purchase order's line, at its unit cost.
    case purchaseReceipt
    /// A receipt taken back (booked in error): it names the receipt (`reversesID`) and takes its units out.
    case receiptReversal
    /// Goods a customer sent back, against a shipment line (`returnLineID`).
    case returned
}

public struct StockMovement: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "stock_movements"
    public var id: Int64?
    public var recordID: String
    public var productID: Int64
    public var delta: Int
    public var reason: StockMovementReason
    public var orderID: Int64?
    public var employeeID: Int64?
    public var note: String?
    public var createdAt: Timestamp
    /// The transfer this movement sends or receives; nil for every other reason.
    public var transferID: Int64?
    /// The purchase order line a receipt (or its reversal) books against.
    public var purchaseLineID: Int64?
    /// A receipt's unit cost (nil when the line has none, as an opening order's); a shipment's cost at the time of
    /// sale.
    public var unitCost: Money?
    /// The moving average cost of the product at this location after this movement; nil when it left it unchanged.
    public var averageCost: Money?
    /// The key of the form or API call that booked a receipt, so that sending it twice books it once.
    public var requestKey: String?
    /// Why more was received than the line still awaited; nil for a receipt within it.
    public var overReceipt: String?
    /// The receipt a reversal takes back.
    public var reversesID: Int64?
    /// The shipment line a `shipped` movement carries out; nil for an execution before shipments (v23).
    public var shipmentLineID: Int64?
    /// The return line a `returned` movement books back.
    public var returnLineID: Int64?

    public init(
        productID: Int64,
        delta: Int,
        reason: StockMovementReason,
        orderID: Int64? = nil,
        employeeID: Int64? = nil,
        note: String? = nil,
        createdAt: Timestamp = .now,
        transferID: Int64? = nil
    ) {
        recordID = newRecordID()
        self.productID = productID
        self.delta = delta
        self.reason = reason
        self.orderID = orderID
        self.employeeID = employeeID
        self.note = note
        self.createdAt = createdAt
        self.transferID = transferID
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, productID, delta, reason, orderID, employeeID, note, createdAt, transferID, purchaseLineID
        case unitCost = "unitCostCents"
        case averageCost = "averageCostCents"
        case requestKey, overReceipt, reversesID, shipmentLineID, returnLineID
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    public init(row: Row) throws {
        id = row[Columns.id]
        recordID = row[Columns.recordID]
        productID = row[Columns.productID]
        delta = row[Columns.delta]
        reason = row[Columns.reason]
        orderID = row[Columns.orderID]
        employeeID = row[Columns.employeeID]
        note = row[Columns.note]
        createdAt = row[Columns.createdAt]
        transferID = row[Columns.transferID]
        purchaseLineID = row[Columns.purchaseLineID]
        unitCost = row[Columns.unitCost]
        averageCost = row[Columns.averageCost]
        requestKey = row[Columns.requestKey]
        overReceipt = row[Columns.overReceipt]
        reversesID = row[Columns.reversesID]
        shipmentLineID = row[Columns.shipmentLineID]
        returnLineID = row[Columns.returnLineID]
    }

    /// Encodes without `Codable`, as `Order` does.
    public func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.recordID] = recordID
        container[Columns.productID] = productID
        container[Columns.delta] = delta
        container[Columns.reason] = reason
        container[Columns.orderID] = orderID
        container[Columns.employeeID] = employeeID
        container[Columns.note] = note
        container[Columns.createdAt] = createdAt
        container[Columns.transferID] = transferID
        container[Columns.purchaseLineID] = purchaseLineID
        container[Columns.unitCost] = unitCost
        container[Columns.averageCost] = averageCost
        container[Columns.requestKey] = requestKey
        container[Columns.overReceipt] = overReceipt
        container[Columns.reversesID] = reversesID
        container[Columns.shipmentLineID] = shipmentLineID
        container[Columns.returnLineID] = returnLineID
    }
}

/// Units of a product sent from one location to another. Written once, by the sender, with its movement out; the
/// destination's movement in (`transferID`) says it arrived, and with how many units.
public struct StockTransfer: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "stock_transfers"
    public var id: Int64?
    public var recordID: String
    public var productID: Int64
    public var quantity: Int
    /// Site codes of the sending and the receiving installation.
    public var fromLocation: String
    public var toLocation: String
    public var employeeID: Int64?
    public var note: String?
    public var sentAt: Timestamp

    public init(
        productID: Int64,
        quantity: Int,
        fromLocation: String,
        toLocation: String,
        employeeID: Int64? = nil,
        note: String? = nil,
        sentAt: Timestamp = .now
    ) {
        recordID = newRecordID()
        self.productID = productID
        self.quantity = quantity
        self.fromLocation = fromLocation
        self.toLocation = toLocation
        self.employeeID = employeeID
        self.note = note
        self.sentAt = sentAt
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, productID, quantity, fromLocation, toLocation, employeeID, note, sentAt
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
