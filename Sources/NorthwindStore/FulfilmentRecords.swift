import Foundation
import GRDB

/// One part of an order that left the shelf: its number within the order (1, 2, …), the day it shipped and who
/// shipped it. Written once, with its lines and their movements, by the site that owns the order.
public struct Shipment: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, Identifiable {
    public static let databaseTableName = "shipments"
    public var id: Int64?
    public var recordID: String
    public var orderID: Int64
    public var sequence: Int
    public var shippedDate: LocalDate
    public var employeeID: Int64?
    public var createdAt: Timestamp
    /// The key of the form or API call that shipped it, so that sending it twice ships once.
    public var requestKey: String?

    public init(recordID: String, orderID: Int64, sequence: Int, shippedDate: LocalDate, employeeID: Int64?, requestKey: String? = nil) {
        (self.id, self.recordID, self.orderID, self.sequence) = (nil, recordID, orderID, sequence)
        (self.shippedDate, self.employeeID, self.createdAt, self.requestKey) = (shippedDate, employeeID, .now, requestKey)
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, orderID, sequence, shippedDate, employeeID, createdAt, requestKey
    }
    public typealias Columns = CodingKeys
}

/// How many units of one order line a shipment carried.
public struct ShipmentLine: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, Identifiable {
    public static let databaseTableName = "shipment_lines"
    public var id: Int64?
    public var recordID: String
    public var shipmentID: Int64
    public var orderLineID: Int64
    public var quantity: Int

    public init(recordID: String, shipmentID: Int64, orderLineID: Int64, quantity: Int) {
        (self.id, self.recordID, self.shipmentID, self.orderLineID, self.quantity) = (nil, recordID, shipmentID, orderLineID, quantity)
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, shipmentID, orderLineID, quantity
    }
    public typealias Columns = CodingKeys
}
