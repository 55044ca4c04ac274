import Foundation
import Northwind
import NorthwindStore

// The JSON shapes of /api/v1 and of the CLI's --json are the types swift-openapi-generator builds from openapi.yaml
// (`Components.Schemas`); this file only fills them from the domain's values. Store records never go on the wire.
// Money travels as a decimal string, dates and moments as ISO 8601.

typealias ProductBody = Components.Schemas.Product
typealias OrderBody = Components.Schemas.Order
typealias OrderSummaryBody = Components.Schemas.OrderSummary
typealias MovementBody = Components.Schemas.Movement
typealias TransferBody = Components.Schemas.Transfer
typealias ReportSummaryBody = Components.Schemas.ReportSummary

extension Components.Schemas.Product {
    init(_ row: ProductRow) {
        let p = row.product
        self.init(
            categoryID: p.categoryID.map(Int.init),
            categoryName: row.categoryName,
            discontinued: p.discontinued,
            id: Int(p.id ?? 0),
            lowStock: row.isLowStock,
            name: p.name,
            quantityPerUnit: p.quantityPerUnit,
            recordID: p.recordID,
            reorderLevel: p.reorderLevel,
            supplierID: p.supplierID.map(Int.init),
            supplierName: row.supplierName,
            unitPrice: p.unitPrice.description,
            unitsInStock: p.unitsInStock,
            unitsOnOrder: p.unitsOnOrder,
            version: p.version
        )
    }
}

extension Components.Schemas.Movement {
    init(_ movement: StockMovement) {
        self.init(
            createdAt: movement.createdAt.description,
            delta: movement.delta,
            id: Int(movement.id ?? 0),
            note: movement.note,
            reason: .wire(movement.reason)
        )
    }
}

extension Components.Schemas.Transfer {
    init(_ status: TransferStatus) {
        let t = status.transfer
        self.init(
            from: t.fromLocation,
            id: Int(t.id ?? 0),
            inTransit: status.isInTransit,
            note: t.note,
            productID: Int(t.productID),
            productName: status.productName,
            quantity: t.quantity,
            received: status.received,
            receivedAt: status.receivedAt?.description,
            recordID: t.recordID,
            sentAt: t.sentAt.description,
            shortBy: status.shortBy,
            to: t.toLocation
        )
    }
}

extension Components.Schemas.OrderSummary {
    init(_ summary: OrderSummary) {
        let o = summary.order
        self.init(
            customerCode: summary.customerCode,
            customerName: summary.customerName,
            employeeName: summary.employeeName,
            number: o.number,
            orderDate: o.orderDate.description,
            requiredDate: o.requiredDate?.description,
            shippedDate: o.shippedDate?.description,
            status: .wire(o.status),
            supplyable: summary.isSupplyable,
            total: summary.total.description
        )
    }
}

extension Components.Schemas.Order {
    init(_ detail: OrderDetail) {
        let o = detail.order
        self.init(
            customerCode: detail.customer.code,
            customerName: detail.customer.companyName,
            employeeID: o.employeeID.map(Int.init),
            employeeName: detail.employee?.fullName,
            freight: o.freight.description,
            lines: detail.lines.map {
                Components.Schemas.OrderLine(
                    discount: $0.line.discount,
                    inStock: $0.inStock,
                    productID: Int($0.line.productID),
                    productName: $0.productName,
                    quantity: $0.line.quantity,
                    short: $0.short,
                    total: $0.total.description,
                    unitPrice: $0.line.unitPrice.description
                )
            },
            number: o.number,
            orderDate: o.orderDate.description,
            requiredDate: o.requiredDate?.description,
            shipVia: o.shipVia.map(Int.init),
            shippedDate: o.shippedDate?.description,
            shipperName: detail.shipper?.companyName,
            status: .wire(o.status),
            subtotal: detail.subtotal.description,
            supplyable: detail.isSupplyable,
            total: detail.total.description,
            version: o.version
        )
    }
}

extension Components.Schemas.ReportSummary {
    init(_ report: ReportDefinition) {
        self.init(
            name: report.name,
            original: report.original,
            parameters: report.parameters.map {
                Components.Schemas.ReportParameter(
                    defaultValue: $0.defaultValue,
                    help: $0.help,
                    kind: .wire($0.kind),
                    name: $0.name,
                    required: $0.isRequired
                )
            },
            summary: report.summary
        )
    }
}

/// A domain enum's case as the document spells it. The document lists every case, which a test checks, so a
/// missing one is a programming error caught before release.
protocol WireEnum: RawRepresentable<String> {}

extension WireEnum {
    static func wire<Value: RawRepresentable<String>>(_ value: Value) -> Self {
        guard let wire = Self(rawValue: value.rawValue) else { preconditionFailure("openapi.yaml lacks \(Self.self).\(value.rawValue)") }
        return wire
    }
}

extension Components.Schemas.Movement.ReasonPayload: WireEnum {}
extension Components.Schemas.OrderSummary.StatusPayload: WireEnum {}
extension Components.Schemas.Order.StatusPayload: WireEnum {}
extension Components.Schemas.ReportParameter.KindPayload: WireEnum {}

// MARK: Pages

/// A page of a list, as every generated `…Page` schema spells it. `nextCursor` is the `cursor` (an offset) for the
/// next page, absent on the last page; `total` is absent when a lookup does not count.
protocol APIPage: Encodable, Sendable {
    associatedtype Item
    init(items: [Item], limit: Int, nextCursor: String?, offset: Int, total: Int?)
}

extension APIPage {
    init<Value>(_ page: Page<Value>, _ transform: (Value) -> Item) {
        let next = page.offset + page.items.count
        self.init(
            items: page.items.map(transform),
            limit: page.limit,
            nextCursor: page.total >= 0 && next < page.total ? String(next) : nil,
            offset: page.offset,
            total: page.total >= 0 ? page.total : nil
        )
    }
}

extension Components.Schemas.ProductPage: APIPage {}
extension Components.Schemas.OrderPage: APIPage {}
extension Components.Schemas.CategoryPage: APIPage {}
extension Components.Schemas.SupplierPage: APIPage {}
extension Components.Schemas.CustomerPage: APIPage {}
extension Components.Schemas.EmployeePage: APIPage {}
extension Components.Schemas.ShipperPage: APIPage {}

// MARK: Managed records

/// A managed record kind and its generated wire type.
protocol APIRecord: ManagedRecord {
    associatedtype Body: Encodable & Sendable
    associatedtype PageBody: APIPage where PageBody.Item == Body
    var body: Body { get }
}

extension NorthwindStore.Category: APIRecord {
    var body: Components.Schemas.Category {
        .init(description: description, id: Int(id ?? 0), name: name, recordID: recordID, version: version)
    }
    typealias PageBody = Components.Schemas.CategoryPage
}

extension Supplier: APIRecord {
    var body: Components.Schemas.Supplier {
        .init(
            address: address,
            city: city,
            companyName: companyName,
            contactName: contactName,
            contactTitle: contactTitle,
            country: country,
            fax: fax,
            homePage: homePage,
            id: Int(id ?? 0),
            phone: phone,
            postalCode: postalCode,
            recordID: recordID,
            region: region,
            version: version
        )
    }
    typealias PageBody = Components.Schemas.SupplierPage
}

extension Customer: APIRecord {
    var body: Components.Schemas.Customer {
        .init(
            address: address,
            city: city,
            code: code,
            companyName: companyName,
            contactName: contactName,
            contactTitle: contactTitle,
            country: country,
            fax: fax,
            id: Int(id ?? 0),
            phone: phone,
            postalCode: postalCode,
            recordID: recordID,
            region: region,
            version: version
        )
    }
    typealias PageBody = Components.Schemas.CustomerPage
}

extension Employee: APIRecord {
    var body: Components.Schemas.Employee {
        .init(
            address: address,
            birthDate: birthDate?.description,
            city: city,
            country: country,
            _extension: self.extension,
            firstName: firstName,
            hireDate: hireDate?.description,
            homePhone: homePhone,
            id: Int(id ?? 0),
            lastName: lastName,
            notes: notes,
            photoPath: photoPath,
            postalCode: postalCode,
            recordID: recordID,
            region: region,
            reportsTo: reportsTo.map(Int.init),
            title: title,
            titleOfCourtesy: titleOfCourtesy,
            version: version
        )
    }
    typealias PageBody = Components.Schemas.EmployeePage
}

extension Shipper: APIRecord {
    var body: Components.Schemas.Shipper {
        .init(companyName: companyName, id: Int(id ?? 0), phone: phone, recordID: recordID, version: version)
    }
    typealias PageBody = Components.Schemas.ShipperPage
}

// MARK: The CLI's --json

/// The API's JSON for the CLI's `--json`: the same generated types, so the two cannot drift apart.
public enum Wire {
    public static func product(_ row: ProductRow) -> some Encodable & Sendable { ProductBody(row) }
    public static func products(_ rows: [ProductRow]) -> some Encodable & Sendable {
        Components.Schemas.ProductList(items: rows.map(ProductBody.init))
    }
    public static func products(_ page: Page<ProductRow>) -> some Encodable & Sendable { Components.Schemas.ProductPage(page, ProductBody.init) }
    public static func movements(_ movements: [StockMovement]) -> some Encodable & Sendable { movements.map(MovementBody.init) }
    public static func order(_ detail: OrderDetail) -> some Encodable & Sendable { OrderBody(detail) }
    public static func orders(_ page: Page<OrderSummary>) -> some Encodable & Sendable { Components.Schemas.OrderPage(page, OrderSummaryBody.init) }
    public static func reports(_ reports: [ReportDefinition]) -> some Encodable & Sendable { reports.map(ReportSummaryBody.init) }
    public static func transfers(_ transfers: [TransferStatus]) -> some Encodable & Sendable {
        Components.Schemas.TransferList(items: transfers.map(TransferBody.init))
    }

    /// A managed record (category, supplier, customer, employee or shipper) as the API sends it.
    public static func record<R: ManagedRecord>(_ record: R) -> any Encodable & Sendable {
        guard let known = record as? any APIRecord else { preconditionFailure("\(R.self) has no API shape") }
        return known.body
    }

    public static func records<R: ManagedRecord>(_ page: Page<R>) -> any Encodable & Sendable {
        guard let kind = R.self as? any APIRecord.Type else { preconditionFailure("\(R.self) has no API shape") }
        return kind.pageBody(page)
    }
}

extension APIRecord {
    /// `page`, whose items are of this kind, as the kind's generated page type.
    static func pageBody<T>(_ page: Page<T>) -> any Encodable & Sendable {
        PageBody(Page(items: page.items.compactMap { $0 as? Self }, total: page.total, offset: page.offset, limit: page.limit), \.body)
    }
}

// MARK: Request bodies

/// A money amount as a client may send it: "18.50" (preferred, exact) or 18.5.
struct MoneyInput: Codable, Hashable, Sendable {
    var text: String
    init(_ text: String) { self.text = text }
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
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// The fields of a product a client may set (`ProductInput` and `ProductPatch` in the document). On PATCH, absent
/// fields keep their values, null clears an optional one, and `version` is required.
struct ProductInput: Decodable, Hashable, Sendable {
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
        // Units on order are what sent purchase orders still await: read-only, so a value sent back (perhaps one read
        // before a receipt changed it) is passed over, never saved.
        _ = unitsOnOrder
        if let reorderLevel { product.reorderLevel = reorderLevel }
        if let discontinued { product.discontinued = discontinued }
        try parser.throwIfAny()
    }
}

/// A new order. `employeeID` defaults to whoever is signed in; `discount` is a fraction (0.15 for 15%).
struct OrderInput: Decodable, Hashable, Sendable {
    struct Line: Decodable, Hashable, Sendable {
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

/// A managed record's fields as a client sends them (the `…Input` and `…Patch` schemas of categories, suppliers and
/// customers): each a string, a whole number (an id) or null, plus the `version` a PATCH read. Which names and
/// kinds a record takes is its `RecordField` table's call.
struct RecordInput: Decodable, Hashable, Sendable {
    struct Field: Hashable, Sendable {
        var name: String
        var value: FieldInput
    }
    var fields: [Field] = []
    var version: Int?

    init(from decoder: any Decoder) throws {
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
                fields.append(Field(name: key.stringValue, value: .null))
            } else if let text = try? container.decode(String.self, forKey: key) {
                fields.append(Field(name: key.stringValue, value: .text(text)))
            } else if let number = try? container.decode(Int64.self, forKey: key) {
                fields.append(Field(name: key.stringValue, value: .number(number)))
            } else {
                throw NorthwindError.invalid(key.stringValue, "must be a string, a whole number or null")
            }
        }
    }

    /// The fields, set on `record`: all or nothing.
    func apply<R: ManagedRecord>(to record: inout R) throws(NorthwindError) {
        try record.set(fields.map { ($0.name, $0.value) })
    }
}
