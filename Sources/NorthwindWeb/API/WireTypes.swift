import Foundation
import Hummingbird
import Northwind
import NorthwindStore

// The JSON shapes of /api/v1, as openapi.json describes them, and of the CLI's --json: one home per wire shape.
// Store records never go on the wire. Money travels as a decimal string, dates and moments as ISO 8601.

public struct Items<Item: Encodable & Sendable>: ResponseEncodable, Sendable {
    public var items: [Item]
    public init(items: [Item]) { self.items = items }
}

/// One page of a list. `nextCursor` is the `cursor` (an offset) for the next page, absent on the last page.
public struct ItemsPage<Item: Encodable & Sendable>: ResponseEncodable, Sendable {
    public var items: [Item]
    public var total: Int?
    public var limit: Int
    public var offset: Int
    public var nextCursor: String?

    public init(_ page: Page<Item>) {
        items = page.items
        total = page.total >= 0 ? page.total : nil
        limit = page.limit
        offset = page.offset
        let next = page.offset + page.items.count
        nextCursor = page.total >= 0 && next < page.total ? String(next) : nil
    }
}

public struct MeBody: ResponseEncodable, Sendable {
    public var employeeID: Int64
    public var name: String
    public var login: String
    public var title: String?
    public var isManager: Bool
}

public struct Summary: ResponseEncodable, Sendable {
    public var newOrders: Int
    public var lowStockProducts: Int
    public init(_ summary: ShopSummary) {
        (newOrders, lowStockProducts) = (summary.newOrders, summary.lowStockProducts)
    }
}

public struct ProductBody: ResponseEncodable, Sendable {
    public var id: Int64
    public var recordID: String
    public var name: String
    public var categoryID: Int64?
    public var categoryName: String?
    public var supplierID: Int64?
    public var supplierName: String?
    public var quantityPerUnit: String?
    public var unitPrice: String
    public var unitsInStock: Int
    public var unitsOnOrder: Int
    public var reorderLevel: Int
    public var discontinued: Bool
    public var lowStock: Bool
    public var version: Int

    public init(_ row: ProductRow) {
        let p = row.product
        (id, recordID, name, categoryID, categoryName) = (p.id ?? 0, p.recordID, p.name, p.categoryID, row.categoryName)
        (supplierID, supplierName, quantityPerUnit) = (p.supplierID, row.supplierName, p.quantityPerUnit)
        (unitPrice, unitsInStock, unitsOnOrder) = (p.unitPrice.description, p.unitsInStock, p.unitsOnOrder)
        (reorderLevel, discontinued, lowStock, version) = (p.reorderLevel, p.discontinued, p.isLowStock, p.version)
    }
}

/// A money amount as a client may send it: "18.50" (preferred, exact) or 18.5.
public struct MoneyInput: Decodable, Sendable {
    public var text: String
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self.text = text
        } else if let amount = try? container.decode(Decimal.self) {
            self.text = "\(amount)"
        } else {
            // A number Decimal cannot hold (1e308) is still a number: let the amount's check name it, not a 400.
            self.text = "\(try container.decode(Double.self))"
        }
    }
}

/// The fields of a product a client may set. On PATCH, absent fields keep their values; `version` is required.
public struct ProductInput: Decodable, Sendable {
    public var name: String?
    public var categoryID: Int64??
    public var supplierID: Int64??
    public var quantityPerUnit: String??
    public var unitPrice: MoneyInput?
    public var unitsInStock: Int?
    public var unitsOnOrder: Int?
    public var reorderLevel: Int?
    public var discontinued: Bool?
    public var version: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, categoryID, supplierID, quantityPerUnit, unitPrice, unitsInStock, unitsOnOrder, reorderLevel
        case discontinued, version
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, of: "product")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // An explicit null clears an optional field; a missing key leaves it alone.
        name = try c.optional(String.self, .name)
        categoryID = try c.nullable(Int64.self, .categoryID)
        supplierID = try c.nullable(Int64.self, .supplierID)
        quantityPerUnit = try c.nullable(String.self, .quantityPerUnit)
        unitPrice = try c.optional(MoneyInput.self, .unitPrice)
        unitsInStock = try c.wholeNumber(.unitsInStock, in: Limits.units)
        unitsOnOrder = try c.wholeNumber(.unitsOnOrder, in: Limits.units)
        reorderLevel = try c.wholeNumber(.reorderLevel, in: Limits.units)
        discontinued = try c.optional(Bool.self, .discontinued)
        version = try c.wholeNumber(.version, in: 1...Int.max)
    }

    func apply(to product: inout Product, creating: Bool) throws(NorthwindError) {
        var parser = FieldParser()
        if let name { product.name = name }
        if let categoryID { product.categoryID = categoryID }
        if let supplierID { product.supplierID = supplierID }
        if let quantityPerUnit { product.quantityPerUnit = quantityPerUnit }
        if let unitPrice, let price = parser.money(unitPrice.text, "unitPrice", required: true) { product.unitPrice = price }
        if let unitsInStock {
            if creating {
                product.unitsInStock = unitsInStock
            } else if unitsInStock != product.unitsInStock {
                parser.errors.append(.init("unitsInStock", "changes only by receiving stock or by a stock take, not by editing the product"))
            }
        }
        if let unitsOnOrder { product.unitsOnOrder = unitsOnOrder }
        if let reorderLevel { product.reorderLevel = reorderLevel }
        if let discontinued { product.discontinued = discontinued }
        try parser.throwIfAny()
    }
}

public struct MovementBody: Encodable, Sendable {
    public var id: Int64
    public var delta: Int
    public var reason: String
    public var note: String?
    public var createdAt: Timestamp
    public init(_ movement: StockMovement) {
        (id, delta, reason, note, createdAt) = (
            movement.id ?? 0, movement.delta, movement.reason.rawValue, movement.note,
            movement.createdAt
        )
    }
}

public struct OrderSummaryBody: Encodable, Sendable {
    public var number: String
    public var status: String
    public var customerCode: String
    public var customerName: String
    public var employeeName: String?
    public var orderDate: String
    public var requiredDate: String?
    public var shippedDate: String?
    public var total: String
    public var supplyable: Bool

    public init(_ summary: OrderSummary) {
        let o = summary.order
        (number, status, customerCode, customerName) = (o.number, o.status.rawValue, summary.customerCode, summary.customerName)
        (employeeName, orderDate) = (summary.employeeName, o.orderDate.description)
        (requiredDate, shippedDate) = (o.requiredDate?.description, o.shippedDate?.description)
        (total, supplyable) = (summary.total.description, summary.isSupplyable)
    }
}

public struct OrderBody: ResponseEncodable, Sendable {
    public struct Line: Encodable, Sendable {
        public var productID: Int64
        public var productName: String
        public var unitPrice: String
        public var quantity: Int
        public var discount: Double
        public var total: String
        public var inStock: Int
        public var short: Int
    }
    public var number: String
    public var status: String
    public var version: Int
    public var customerCode: String
    public var customerName: String
    public var employeeID: Int64?
    public var employeeName: String?
    public var orderDate: String
    public var requiredDate: String?
    public var shippedDate: String?
    public var shipVia: Int64?
    public var shipperName: String?
    public var freight: String
    public var subtotal: String
    public var total: String
    public var supplyable: Bool
    public var lines: [Line]

    public init(_ detail: OrderDetail) {
        let o = detail.order
        (number, status, version) = (o.number, o.status.rawValue, o.version)
        (customerCode, customerName) = (detail.customer.code, detail.customer.companyName)
        (employeeID, employeeName) = (o.employeeID, detail.employee?.fullName)
        (orderDate, requiredDate, shippedDate) = (o.orderDate.description, o.requiredDate?.description, o.shippedDate?.description)
        (shipVia, shipperName, freight) = (o.shipVia, detail.shipper?.companyName, o.freight.description)
        (subtotal, total, supplyable) = (detail.subtotal.description, detail.total.description, detail.isSupplyable)
        lines = detail.lines.map {
            Line(
                productID: $0.line.productID,
                productName: $0.productName,
                unitPrice: $0.line.unitPrice.description,
                quantity: $0.line.quantity,
                discount: $0.line.discount,
                total: $0.total.description,
                inStock: $0.inStock,
                short: $0.short
            )
        }
    }
}

/// A new order. `employeeID` defaults to whoever is signed in; `discount` is a fraction (0.15 for 15%).
public struct OrderInput: Decodable, Sendable {
    public struct Line: Decodable, Sendable {
        public var productID: Int64
        public var quantity: Int
        public var discount: Double?

        enum CodingKeys: String, CodingKey, CaseIterable { case productID, quantity, discount }

        public init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self, of: "an order line")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            productID = try c.decode(Int64.self, forKey: .productID)
            guard let quantity = try c.wholeNumber(.quantity, in: Limits.lineQuantity) else {
                throw NorthwindError.invalid(fieldName(c.codingPath + [CodingKeys.quantity]), "is required")
            }
            self.quantity = quantity
            discount = try c.optional(Double.self, .discount)
        }
    }
    public var customerCode: String
    public var employeeID: Int64?
    public var requiredDate: String?
    public var shipVia: Int64?
    public var freight: MoneyInput?
    public var lines: [Line]

    enum CodingKeys: String, CodingKey, CaseIterable { case customerCode, employeeID, requiredDate, shipVia, freight, lines }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, of: "an order")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        customerCode = try c.decode(String.self, forKey: .customerCode)
        employeeID = try c.optional(Int64.self, .employeeID)
        requiredDate = try c.optional(String.self, .requiredDate)
        shipVia = try c.optional(Int64.self, .shipVia)
        freight = try c.optional(MoneyInput.self, .freight)
        lines = try c.decode([Line].self, forKey: .lines)
    }

    func draft(defaultEmployee: Int64) throws(NorthwindError) -> OrderDraft {
        var parser = FieldParser()
        let required = parser.date(requiredDate, "requiredDate")
        let freightAmount = freight.flatMap { parser.money($0.text, "freight", required: true) } ?? .zero
        try parser.throwIfAny()
        return OrderDraft(
            customerCode: customerCode,
            employeeID: employeeID ?? defaultEmployee,
            requiredDate: required,
            shipVia: shipVia,
            freight: freightAmount,
            lines: lines.map { OrderLineDraft(productID: $0.productID, quantity: $0.quantity, discount: $0.discount ?? 0) }
        )
    }
}

/// A managed record's fields as a client sends them: each a string, a whole number (an id) or null, plus the
/// `version` a PATCH read. Which names and kinds a record takes is its `RecordField` table's call.
public struct RecordInput: Decodable, Sendable {
    public var fields: [(name: String, value: FieldInput)] = []
    public var version: Int?

    public init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: AnyCodingKey.self) else {
            throw WebError.badRequest("The body must be a JSON object of the record's fields.")
        }
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            if key.stringValue == "version" {
                guard let version = try? container.decode(Int.self, forKey: key) else {
                    throw NorthwindError.invalid("version", "must be the whole number you read")
                }
                self.version = version
            } else if try container.decodeNil(forKey: key) {
                fields.append((key.stringValue, .null))
            } else if let text = try? container.decode(String.self, forKey: key) {
                fields.append((key.stringValue, .text(text)))
            } else if let number = try? container.decode(Int64.self, forKey: key) {
                fields.append((key.stringValue, .number(number)))
            } else {
                throw NorthwindError.invalid(key.stringValue, "must be a string, a whole number or null")
            }
        }
    }
}

/// A managed record as the API sends it: its ids, its fields from its `RecordField` table, and its version.
/// Absent optional fields are left out, as the API document says.
public struct RecordBody<R: ManagedRecord>: ResponseEncodable, Sendable {
    public let record: R

    public init(_ record: R) { self.record = record }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(record.id ?? 0, forKey: AnyCodingKey(stringValue: "id"))
        try container.encode(record.recordID, forKey: AnyCodingKey(stringValue: "recordID"))
        for field in R.fields {
            let key = AnyCodingKey(stringValue: field.name)
            switch field.value(record) {
            case .null: continue
            case let .text(text): try container.encode(text, forKey: key)
            case let .number(number): try container.encode(number, forKey: key)
            }
        }
        try container.encode(record.version, forKey: AnyCodingKey(stringValue: "version"))
    }
}
