import Foundation
import Hummingbird
import Northwind
import NorthwindStore

// The JSON shapes of /api/v1, as openapi.json describes them. Money travels as a decimal string.

struct Items<Item: Encodable & Sendable>: ResponseEncodable, Sendable {
    var items: [Item]
}

/// One page of a list. `nextCursor` is the `cursor` (an offset) for the next page, absent on the last page.
struct ItemsPage<Item: Encodable & Sendable>: ResponseEncodable, Sendable {
    var items: [Item]
    var total: Int?
    var limit: Int
    var offset: Int
    var nextCursor: String?

    init(_ page: Page<Item>) {
        items = page.items
        total = page.total >= 0 ? page.total : nil
        limit = page.limit
        offset = page.offset
        let next = page.offset + page.items.count
        nextCursor = page.total >= 0 && next < page.total ? String(next) : nil
    }
}

struct MeBody: ResponseEncodable, Sendable {
    var employeeID: Int64
    var name: String
    var login: String
    var title: String?
    var isManager: Bool
}

struct Summary: ResponseEncodable, Sendable {
    var newOrders: Int
    var lowStockProducts: Int
    init(_ summary: ShopSummary) {
        (newOrders, lowStockProducts) = (summary.newOrders, summary.lowStockProducts)
    }
}

struct ProductBody: ResponseEncodable, Sendable {
    var id: Int64
    var recordID: String
    var name: String
    var categoryID: Int64?
    var categoryName: String?
    var supplierID: Int64?
    var supplierName: String?
    var quantityPerUnit: String?
    var unitPrice: String
    var unitsInStock: Int
    var unitsOnOrder: Int
    var reorderLevel: Int
    var discontinued: Bool
    var lowStock: Bool
    var version: Int

    init(_ row: ProductRow) {
        let p = row.product
        (id, recordID, name, categoryID, categoryName) = (p.id ?? 0, p.recordID, p.name, p.categoryID, row.categoryName)
        (supplierID, supplierName, quantityPerUnit) = (p.supplierID, row.supplierName, p.quantityPerUnit)
        (unitPrice, unitsInStock, unitsOnOrder) = (p.unitPrice.description, p.unitsInStock, p.unitsOnOrder)
        (reorderLevel, discontinued, lowStock, version) = (p.reorderLevel, p.discontinued, p.isLowStock, p.version)
    }
}

/// A money amount as a client may send it: "18.50" (preferred, exact) or 18.5.
struct MoneyInput: Decodable, Sendable {
    var text: String
    init(from decoder: any Decoder) throws {
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
struct ProductInput: Decodable, Sendable {
    var name: String?
    var categoryID: Int64??
    var supplierID: Int64??
    var quantityPerUnit: String??
    var unitPrice: MoneyInput?
    var unitsInStock: Int?
    var unitsOnOrder: Int?
    var reorderLevel: Int?
    var discontinued: Bool?
    var version: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, categoryID, supplierID, quantityPerUnit, unitPrice, unitsInStock, unitsOnOrder, reorderLevel
        case discontinued, version
    }

    init(from decoder: any Decoder) throws {
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

struct MovementBody: Encodable, Sendable {
    var id: Int64
    var delta: Int
    var reason: String
    var note: String?
    var createdAt: Timestamp
    init(_ movement: StockMovement) {
        (id, delta, reason, note, createdAt) = (
            movement.id ?? 0, movement.delta, movement.reason.rawValue, movement.note,
            movement.createdAt
        )
    }
}

struct OrderSummaryBody: Encodable, Sendable {
    var number: String
    var status: String
    var customerCode: String
    var customerName: String
    var employeeName: String?
    var orderDate: String
    var requiredDate: String?
    var shippedDate: String?
    var total: String
    var supplyable: Bool

    init(_ summary: OrderSummary) {
        let o = summary.order
        (number, status, customerCode, customerName) = (o.number, o.status.rawValue, summary.customerCode, summary.customerName)
        (employeeName, orderDate) = (summary.employeeName, o.orderDate.description)
        (requiredDate, shippedDate) = (o.requiredDate?.description, o.shippedDate?.description)
        (total, supplyable) = (summary.total.description, summary.isSupplyable)
    }
}

struct OrderBody: ResponseEncodable, Sendable {
    struct Line: Encodable, Sendable {
        var productID: Int64
        var productName: String
        var unitPrice: String
        var quantity: Int
        var discount: Double
        var total: String
        var inStock: Int
        var short: Int
    }
    var number: String
    var status: String
    var version: Int
    var customerCode: String
    var customerName: String
    var employeeID: Int64?
    var employeeName: String?
    var orderDate: String
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var shipperName: String?
    var freight: String
    var subtotal: String
    var total: String
    var supplyable: Bool
    var lines: [Line]

    init(_ detail: OrderDetail) {
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
struct OrderInput: Decodable, Sendable {
    struct Line: Decodable, Sendable {
        var productID: Int64
        var quantity: Int
        var discount: Double?

        enum CodingKeys: String, CodingKey, CaseIterable { case productID, quantity, discount }

        init(from decoder: any Decoder) throws {
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
    var customerCode: String
    var employeeID: Int64?
    var requiredDate: String?
    var shipVia: Int64?
    var freight: MoneyInput?
    var lines: [Line]

    enum CodingKeys: String, CodingKey, CaseIterable { case customerCode, employeeID, requiredDate, shipVia, freight, lines }

    init(from decoder: any Decoder) throws {
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
