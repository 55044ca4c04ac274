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

/// Goods a customer sent back from one shipment: its number within the shipment, the day, who took it in, and why.
public struct Return: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, Identifiable {
    public static let databaseTableName = "returns"
    public var id: Int64?
    public var recordID: String
    public var shipmentID: Int64
    public var sequence: Int
    public var returnedDate: LocalDate
    public var employeeID: Int64?
    public var reason: String?
    public var createdAt: Timestamp
    /// The key of the form or API call that booked it, so that sending it twice books it once.
    public var requestKey: String?

    public init(
        recordID: String,
        shipmentID: Int64,
        sequence: Int,
        returnedDate: LocalDate,
        employeeID: Int64?,
        reason: String?,
        requestKey: String?
    ) {
        (self.id, self.recordID, self.shipmentID, self.sequence, self.returnedDate) = (nil, recordID, shipmentID, sequence, returnedDate)
        (self.employeeID, self.reason, self.createdAt, self.requestKey) = (employeeID, reason, .now, requestKey)
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, shipmentID, sequence, returnedDate, employeeID, reason, createdAt, requestKey
    }
    public typealias Columns = CodingKeys
}

/// How many units of one shipment line came back.
public struct ReturnLine: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, Identifiable {
    public static let databaseTableName = "return_lines"
    public var id: Int64?
    public var recordID: String
    public var returnID: Int64
    public var shipmentLineID: Int64
    public var quantity: Int

    public init(recordID: String, returnID: Int64, shipmentLineID: Int64, quantity: Int) {
        (self.id, self.recordID, self.returnID, self.shipmentLineID, self.quantity) = (nil, recordID, returnID, shipmentLineID, quantity)
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, returnID, shipmentLineID, quantity
    }
    public typealias Columns = CodingKeys
}

public enum InvoiceKind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case invoice, creditNote

    /// As a heading says it.
    public var words: String { self == .invoice ? "Invoice" : "Credit note" }
}

/// How an invoice rounds its tax: each line's, or each rate's on the sum of its lines' nets.
public enum TaxRounding: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    case line, rate
}

/// An issued invoice (one per shipment) or credit note (one per return), as it was issued: its number in its
/// site's series for the year, both parties as they were that day, its totals and its printable rendition.
public struct Invoice: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, Identifiable {
    public static let databaseTableName = "invoices"
    public var id: Int64?
    public var recordID: String
    public var kind: InvoiceKind
    public var site: String
    public var year: Int
    public var counter: Int
    public var number: String
    public var orderID: Int64
    public var shipmentID: Int64
    public var returnID: Int64?
    /// The invoice a credit note corrects.
    public var correctsID: Int64?
    public var issuedDate: LocalDate
    /// JSON of `InvoiceParty`, as it was on the day.
    public var seller: String
    public var buyer: String
    public var rounding: TaxRounding
    public var net: Money
    public var tax: Money
    public var gross: Money
    /// The printable HTML, as issued.
    public var rendition: String
    public var createdAt: Timestamp

    public init(
        recordID: String,
        kind: InvoiceKind,
        site: String,
        year: Int,
        counter: Int,
        number: String,
        orderID: Int64,
        shipmentID: Int64,
        returnID: Int64?,
        correctsID: Int64?,
        issuedDate: LocalDate,
        seller: String,
        buyer: String,
        rounding: TaxRounding,
        net: Money,
        tax: Money,
        gross: Money,
        rendition: String,
        createdAt: Timestamp
    ) {
        (self.id, self.recordID, self.kind, self.site, self.year, self.counter) = (nil, recordID, kind, site, year, counter)
        (self.number, self.orderID, self.shipmentID, self.returnID, self.correctsID) = (number, orderID, shipmentID, returnID, correctsID)
        (self.issuedDate, self.seller, self.buyer, self.rounding) = (issuedDate, seller, buyer, rounding)
        (self.net, self.tax, self.gross, self.rendition, self.createdAt) = (net, tax, gross, rendition, createdAt)
    }

    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, kind, site, year, counter, number, orderID, shipmentID, returnID, correctsID, issuedDate
        case seller, buyer, rounding
        case net = "netCents"
        case tax = "taxCents"
        case gross = "grossCents"
        case rendition, createdAt
    }
    public typealias Columns = CodingKeys
}

/// One line of an invoice or credit note: what, how many, at what price and discount, its net and its tax rate. Its
/// tax is kept when the invoice rounds per line.
public struct InvoiceLine: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, Identifiable {
    public static let databaseTableName = "invoice_lines"
    public var id: Int64?
    public var recordID: String
    public var invoiceID: Int64
    public var position: Int
    public var shipmentLineID: Int64?
    public var productID: Int64?
    public var description: String
    public var quantity: Int
    public var unitPrice: Money
    public var discountBasisPoints: Int
    public var net: Money
    public var taxBasisPoints: Int
    public var taxName: String
    public var tax: Money?

    public init(
        recordID: String,
        invoiceID: Int64,
        position: Int,
        shipmentLineID: Int64?,
        productID: Int64?,
        description: String,
        quantity: Int,
        unitPrice: Money,
        discountBasisPoints: Int,
        net: Money,
        taxBasisPoints: Int,
        taxName: String,
        tax: Money?
    ) {
        (self.id, self.recordID, self.invoiceID, self.position, self.shipmentLineID) = (nil, recordID, invoiceID, position, shipmentLineID)
        (self.productID, self.description, self.quantity, self.unitPrice) = (productID, description, quantity, unitPrice)
        (self.discountBasisPoints, self.net, self.taxBasisPoints, self.taxName, self.tax) = (discountBasisPoints, net, taxBasisPoints, taxName, tax)
    }

    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, invoiceID, position, shipmentLineID, productID, description, quantity
        case unitPrice = "unitPriceCents"
        case discountBasisPoints
        case net = "netCents"
        case taxBasisPoints, taxName
        case tax = "taxCents"
    }
    public typealias Columns = CodingKeys
}
