import Foundation
import GRDB

// One Codable struct per table. Integer ids are local keys; `recordID` is the stable id that sync uses.
// `version` counts user edits, for optimistic concurrency (stock changes do not bump it).

public struct Category: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "categories"
    public var id: Int64?
    public var recordID: String
    public var name: String
    public var description: String?
    public var version: Int

    public init(
        id: Int64? = nil,
        recordID: String = newRecordID(),
        name: String,
        description: String? = nil,
        version: Int = 1
    ) {
        (self.id, self.recordID, self.name, self.description, self.version) = (id, recordID, name, description, version)
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, name, description, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

public struct Supplier: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "suppliers"
    public var id: Int64?
    public var recordID: String
    public var companyName: String
    public var contactName: String?
    public var contactTitle: String?
    public var address: String?
    public var city: String?
    public var region: String?
    public var postalCode: String?
    public var country: String?
    public var phone: String?
    public var fax: String?
    public var homePage: String?
    public var version: Int

    public init(id: Int64? = nil, companyName: String) {
        recordID = newRecordID()
        version = 1
        self.id = id
        self.companyName = companyName
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, companyName, contactName, contactTitle, address, city, region, postalCode, country, phone,
            fax, homePage, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

// guide: begin product-record
public struct Product: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "products"
    public var id: Int64?
    public var recordID: String
    public var name: String
    public var supplierID: Int64?
    public var categoryID: Int64?
    public var quantityPerUnit: String?
    public var unitPrice: Money
    /// Changed only through stock movements, never by editing the product.
    public var unitsInStock: Int
    public var unitsOnOrder: Int
    public var reorderLevel: Int
    public var discontinued: Bool
    public var version: Int
    // guide: end product-record

    public init(
        id: Int64? = nil,
        name: String,
        supplierID: Int64? = nil,
        categoryID: Int64? = nil,
        quantityPerUnit: String? = nil,
        unitPrice: Money = .zero,
        unitsInStock: Int = 0,
        unitsOnOrder: Int = 0,
        reorderLevel: Int = 0,
        discontinued: Bool = false
    ) {
        recordID = newRecordID()
        version = 1
        self.id = id
        self.name = name
        self.supplierID = supplierID
        self.categoryID = categoryID
        self.quantityPerUnit = quantityPerUnit
        self.unitPrice = unitPrice
        self.unitsInStock = unitsInStock
        self.unitsOnOrder = unitsOnOrder
        self.reorderLevel = reorderLevel
        self.discontinued = discontinued
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, name, supplierID, categoryID, quantityPerUnit
        case unitPrice = "unitPriceCents"
        case unitsInStock, unitsOnOrder, reorderLevel, discontinued, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// Decodes by position: `SELECT *` (or `products.*` first) follows the table's column order, and migrations only
    /// ever append columns. Faster than Codable on the hottest paths.
    public init(row: Row) throws {
        id = try row.decode(atIndex: 0)
        recordID = try row.decode(atIndex: 1)
        name = try row.decode(atIndex: 2)
        supplierID = try row.decode(atIndex: 3)
        categoryID = try row.decode(atIndex: 4)
        quantityPerUnit = try row.decode(atIndex: 5)
        unitPrice = Money(cents: try row.decode(atIndex: 6))
        unitsInStock = try row.decode(atIndex: 7)
        unitsOnOrder = try row.decode(atIndex: 8)
        reorderLevel = try row.decode(atIndex: 9)
        discontinued = try row.decode(atIndex: 10)
        version = try row.decode(atIndex: 11)
    }

}

public struct Customer: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "customers"
    public var id: Int64?
    public var recordID: String
    /// The short code staff use on the phone, e.g. "VINET".
    public var code: String
    public var companyName: String
    public var contactName: String?
    public var contactTitle: String?
    public var address: String?
    public var city: String?
    public var region: String?
    public var postalCode: String?
    public var country: String?
    public var phone: String?
    public var fax: String?
    public var version: Int

    public init(id: Int64? = nil, code: String, companyName: String) {
        recordID = newRecordID()
        version = 1
        self.id = id
        self.code = code
        self.companyName = companyName
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, code, companyName, contactName, contactTitle, address, city, region, postalCode, country,
            phone, fax, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    /// Decodes by position, as `Product.init(row:)` does.
    public init(row: Row) throws {
        (id, recordID, code, companyName, contactName, contactTitle) = try (
            row.decode(atIndex: 0), row.decode(atIndex: 1), row.decode(atIndex: 2), row.decode(atIndex: 3), row.decode(atIndex: 4),
            row.decode(atIndex: 5)
        )
        (address, city, region, postalCode, country, phone, fax, version) = try (
            row.decode(atIndex: 6), row.decode(atIndex: 7), row.decode(atIndex: 8), row.decode(atIndex: 9), row.decode(atIndex: 10),
            row.decode(atIndex: 11), row.decode(atIndex: 12), row.decode(atIndex: 13)
        )
    }
}

public struct Employee: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "employees"
    public var id: Int64?
    public var recordID: String
    public var lastName: String
    public var firstName: String
    public var title: String?
    public var titleOfCourtesy: String?
    public var birthDate: LocalDate?
    public var hireDate: LocalDate?
    public var address: String?
    public var city: String?
    public var region: String?
    public var postalCode: String?
    public var country: String?
    public var homePhone: String?
    public var `extension`: String?
    public var notes: String?
    public var reportsTo: Int64?
    public var photoPath: String?
    public var version: Int

    public init(id: Int64? = nil, firstName: String, lastName: String, title: String? = nil) {
        recordID = newRecordID()
        version = 1
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.title = title
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, lastName, firstName, title, titleOfCourtesy, birthDate, hireDate, address, city, region,
            postalCode, country, homePhone, `extension`, notes, reportsTo, photoPath, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    /// Decodes by position, as `Product.init(row:)` does; columns 15–17 hold the photo, read through `ExternalStorage`.
    public init(row: Row) throws {
        (id, recordID, lastName, firstName, title, titleOfCourtesy) = try (
            row.decode(atIndex: 0), row.decode(atIndex: 1), row.decode(atIndex: 2), row.decode(atIndex: 3), row.decode(atIndex: 4),
            row.decode(atIndex: 5)
        )
        (birthDate, hireDate, address, city, region, postalCode) = try (
            row.decode(atIndex: 6), row.decode(atIndex: 7), row.decode(atIndex: 8), row.decode(atIndex: 9), row.decode(atIndex: 10),
            row.decode(atIndex: 11)
        )
        (country, homePhone, `extension`, notes, reportsTo, photoPath, version) = try (
            row.decode(atIndex: 12), row.decode(atIndex: 13), row.decode(atIndex: 14), row.decode(atIndex: 18), row.decode(atIndex: 19),
            row.decode(atIndex: 20), row.decode(atIndex: 21)
        )
    }
    public var fullName: String { "\(firstName) \(lastName)" }
}

public struct Shipper: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "shippers"
    public var id: Int64?
    public var recordID: String
    public var companyName: String
    public var phone: String?
    public var version: Int

    public init(id: Int64? = nil, companyName: String, phone: String? = nil) {
        recordID = newRecordID()
        version = 1
        self.id = id
        self.companyName = companyName
        self.phone = phone
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, companyName, phone, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    /// Decodes by position, as `Product.init(row:)` does.
    public init(row: Row) throws {
        (id, recordID, companyName, phone, version) = try (
            row.decode(atIndex: 0), row.decode(atIndex: 1), row.decode(atIndex: 2), row.decode(atIndex: 3), row.decode(atIndex: 4)
        )
    }
}

public enum OrderStatus: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
    /// Taken but not shipped yet.
    case new
    case shipped
    case cancelled
}

public struct Order: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "orders"
    public var id: Int64?
    public var recordID: String
    /// The order number shown to people; unique across every installation (see `Store.nextOrderNumber`).
    public var number: String
    public var customerID: Int64
    public var employeeID: Int64?
    public var orderDate: LocalDate
    public var requiredDate: LocalDate?
    public var shippedDate: LocalDate?
    public var status: OrderStatus
    public var shipVia: Int64?
    public var freight: Money
    public var shipName: String?
    public var shipAddress: String?
    public var shipCity: String?
    public var shipRegion: String?
    public var shipPostalCode: String?
    public var shipCountry: String?
    public var version: Int

    public init(
        id: Int64? = nil,
        number: String,
        customerID: Int64,
        employeeID: Int64?,
        orderDate: LocalDate,
        requiredDate: LocalDate? = nil,
        shippedDate: LocalDate? = nil,
        status: OrderStatus = .new,
        shipVia: Int64? = nil,
        freight: Money = .zero
    ) {
        recordID = newRecordID()
        version = 1
        self.id = id
        self.number = number
        self.customerID = customerID
        self.employeeID = employeeID
        self.orderDate = orderDate
        self.requiredDate = requiredDate
        self.shippedDate = shippedDate
        self.status = status
        self.shipVia = shipVia
        self.freight = freight
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, number, customerID, employeeID, orderDate, requiredDate, shippedDate, status, shipVia
        case freight = "freightCents"
        case shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry, version
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    /// Decodes by position, as `Product.init(row:)` does.
    public init(row: Row) throws {
        id = try row.decode(atIndex: 0)
        recordID = try row.decode(atIndex: 1)
        number = try row.decode(atIndex: 2)
        customerID = try row.decode(atIndex: 3)
        employeeID = try row.decode(atIndex: 4)
        orderDate = try Self.date(row, 5)
        requiredDate = try row.decode(atIndex: 6)
        shippedDate = try row.decode(atIndex: 7)
        status = try row.decode(atIndex: 8)
        shipVia = try row.decode(atIndex: 9)
        freight = Money(cents: try row.decode(atIndex: 10))
        shipName = try row.decode(atIndex: 11)
        shipAddress = try row.decode(atIndex: 12)
        shipCity = try row.decode(atIndex: 13)
        shipRegion = try row.decode(atIndex: 14)
        shipPostalCode = try row.decode(atIndex: 15)
        shipCountry = try row.decode(atIndex: 16)
        version = try row.decode(atIndex: 17)
    }
    private static func date(_ row: Row, _ index: Int) throws -> LocalDate {
        guard let date: LocalDate = try row.decode(atIndex: index) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "orders.orderDate is not a yyyy-MM-dd date")
        }
        return date
    }
    /// Encodes without `Codable`, which costs more than the insert on the order-taking path.
    public func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.recordID] = recordID
        container[Columns.number] = number
        container[Columns.customerID] = customerID
        container[Columns.employeeID] = employeeID
        container[Columns.orderDate] = orderDate
        container[Columns.requiredDate] = requiredDate
        container[Columns.shippedDate] = shippedDate
        container[Columns.status] = status
        container[Columns.shipVia] = shipVia
        container[Columns.freight] = freight
        container[Columns.shipName] = shipName
        container[Columns.shipAddress] = shipAddress
        container[Columns.shipCity] = shipCity
        container[Columns.shipRegion] = shipRegion
        container[Columns.shipPostalCode] = shipPostalCode
        container[Columns.shipCountry] = shipCountry
        container[Columns.version] = version
    }
}

public struct OrderLine: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "order_lines"
    public var id: Int64?
    public var recordID: String
    public var orderID: Int64
    public var productID: Int64
    public var unitPrice: Money
    public var quantity: Int
    /// A fraction in 0...1, as the classic schema has it.
    public var discount: Double

    public init(
        id: Int64? = nil,
        orderID: Int64,
        productID: Int64,
        unitPrice: Money,
        quantity: Int,
        discount: Double = 0
    ) {
        recordID = newRecordID()
        self.id = id
        self.orderID = orderID
        self.productID = productID
        self.unitPrice = unitPrice
        self.quantity = quantity
        self.discount = discount
    }
    public enum CodingKeys: String, CodingKey, ColumnExpression, CaseIterable {
        case id, recordID, orderID, productID
        case unitPrice = "unitPriceCents"
        case quantity, discount
    }
    public typealias Columns = CodingKeys
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    /// Decodes by position, as `Product.init(row:)` does.
    public init(row: Row) throws {
        id = try row.decode(atIndex: 0)
        recordID = try row.decode(atIndex: 1)
        orderID = try row.decode(atIndex: 2)
        productID = try row.decode(atIndex: 3)
        unitPrice = Money(cents: try row.decode(atIndex: 4))
        quantity = try row.decode(atIndex: 5)
        discount = try row.decode(atIndex: 6)
    }
    /// Encodes without `Codable`, as `Order` does.
    public func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.recordID] = recordID
        container[Columns.orderID] = orderID
        container[Columns.productID] = productID
        container[Columns.unitPrice] = unitPrice
        container[Columns.quantity] = quantity
        container[Columns.discount] = discount
        container["extendedPriceCents"] = extendedPrice
    }

    /// The amount the classic reports sum: `CONVERT(money, UnitPrice*Quantity*(1-Discount)/100)*100` with SQL
    /// Server's float32 steps. It can differ from `total` by a cent; the store keeps it in `extendedPriceCents`.
    /// `Int.max` cents when the line is out of range, which the store refuses to write.
    public var extendedPrice: Money {
        let cents = ReportFunctions.extendedPriceCents(
            unitPriceCents: Int64(unitPrice.cents),
            quantity: Int64(quantity),
            discount: discount
        )
        return Money(cents: cents.map(Int.init) ?? .max)
    }

    /// unitPrice × quantity × (1 − discount), rounded half up to the cent, in integers: the discount is read to the
    /// millionth (discounts are whole percents or their halves), so no binary fraction reaches the sum. Never traps,
    /// whatever the store holds: the amount saturates, and the multiplication by the discount factor is split so that
    /// it cannot overflow where the amount itself does not.
    public var total: Money {
        let fraction = discount.isNaN ? 0 : min(max(discount, 0), 1)
        let factor = 1_000_000 - Int((fraction * 1_000_000).rounded())
        let amount = unitPrice.cents.saturatingMultiply(quantity)
        guard amount != .max, amount != .min else { return Money(cents: amount) }
        // amount × factor / 1,000,000 = q × factor + r × factor / 1,000,000, where amount = q × 1,000,000 + r.
        let (q, r) = amount.quotientAndRemainder(dividingBy: 1_000_000)
        return Money(cents: (q * factor).saturatingAdd((r * factor + 500_000) / 1_000_000))
    }
}

public struct Region: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "regions"
    public var id: Int64?
    public var recordID: String
    public var description: String
    public init(id: Int64? = nil, description: String) {
        recordID = newRecordID()
        self.id = id
        self.description = description
    }
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

public struct Territory: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable {
    public static let databaseTableName = "territories"
    public var id: Int64?
    public var recordID: String
    public var code: String
    public var description: String
    public var regionID: Int64
    public init(id: Int64? = nil, code: String, description: String, regionID: Int64) {
        recordID = newRecordID()
        self.id = id
        self.code = code
        self.description = description
        self.regionID = regionID
    }
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
