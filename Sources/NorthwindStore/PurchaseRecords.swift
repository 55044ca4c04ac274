import Foundation
import GRDB

/// Where a purchase order stands. Receipt progress is part of it (partly or fully received), written by the site
/// that owns the order in the transaction that books the receipt.
public enum PurchaseOrderStatus: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    /// Being written: its lines may change, and nothing is on order yet.
    case draft
    /// Sent to the supplier: its lines are fixed, and what they still await is on order.
    case sent
    case partiallyReceived
    case received
    /// Nothing more is awaited; what was received stays received.
    case cancelled
}

/// An order to a supplier, in the zone of the site that wrote it.
public struct PurchaseOrder: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "purchase_orders"
    public var id: Int64?
    public var recordID: String
    /// "7KQ2XM-P12": the site's code and a number of the site's own series.
    public var number: String
    public var supplierID: Int64
    public var status: PurchaseOrderStatus
    /// Made from the units on order a store held before purchase orders were kept (`unitsOnOrder`): no cost.
    public var opening: Bool
    public var expectedDate: LocalDate?
    public var note: String?
    public var employeeID: Int64?
    public var createdAt: Timestamp
    public var sentAt: Timestamp?
    public var closedAt: Timestamp?
    /// Another site's code for an order that arrived by sync; nil for this store's own.
    public var location: String?
    public var version: Int

    public init(number: String, supplierID: Int64, expectedDate: LocalDate? = nil, note: String? = nil, employeeID: Int64? = nil) {
        recordID = newRecordID()
        self.number = number
        self.supplierID = supplierID
        status = .draft
        opening = false
        self.expectedDate = expectedDate
        self.note = note
        self.employeeID = employeeID
        createdAt = .now
        version = 1
    }

    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, number, supplierID, status, opening, expectedDate, note, employeeID, createdAt, sentAt, closedAt
        case location, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// What a purchase order asks of its supplier for one product.
public struct PurchaseOrderLine: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "purchase_order_lines"
    public var id: Int64?
    public var recordID: String
    public var purchaseOrderID: Int64
    public var position: Int
    public var productID: Int64
    public var quantity: Int
    /// nil only on an opening order's lines, whose cost nobody knows.
    public var unitCost: Money?

    public init(purchaseOrderID: Int64, position: Int, productID: Int64, quantity: Int, unitCost: Money?) {
        recordID = newRecordID()
        self.purchaseOrderID = purchaseOrderID
        self.position = position
        self.productID = productID
        self.quantity = quantity
        self.unitCost = unitCost
    }

    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, purchaseOrderID, position, productID, quantity
        case unitCost = "unitCostCents"
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
