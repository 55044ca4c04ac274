import Foundation
import GRDB
import Northwind
import NorthwindStore

/// Loads the classic Northwind into a store, all or nothing.
///
/// Reads Microsoft's T-SQL script, the SQLite or PostgreSQL conversions (through `ClassicScript`), or a SQLite
/// database file with the classic schema. Access stored pictures OLE-wrapped; they are unwrapped into real images.
/// Classic ids are kept, and an imported order's number is its classic OrderID ("10248").
public enum ClassicImporter {
    public struct Report: Sendable, Codable {
        public var format: String
        public var counts: [DemoData.TableCount]
    }

    public static func importFile(atPath path: String, into store: Store, replace: Bool) throws(NorthwindError) -> Report {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .importFailed("Cannot read \(path): no such file, or it is not readable.")
        }
        let dataset: ClassicDataset
        let format: String
        if data.starts(with: Array("SQLite format 3".utf8)) {
            dataset = try readDatabase(atPath: path)
            format = "SQLite database"
        } else {
            guard let text = String(data: data, encoding: .utf8) ?? String(data: data, encoding: .utf16) else {
                throw .importFailed("\(path) is neither a SQLite database nor a text SQL script.")
            }
            do {
                dataset = try ClassicScript.parse(text)
            } catch {
                throw .importFailed("\(path), \(error.description)")
            }
            format =
                switch dataset.dialect {
                case .transactSQL: "Microsoft T-SQL script"
                case .sqlite: "SQLite script"
                case .postgres: "PostgreSQL script"
                }
        }
        guard !(dataset.tables["Products"] ?? []).isEmpty else {
            throw .importFailed("\(path) holds no Northwind products: is it the classic Northwind?")
        }
        return Report(format: format, counts: try load(dataset, into: store, replace: replace, source: path))
    }

    /// Reads a SQLite file with the classic schema into the same neutral form the scripts parse into.
    static func readDatabase(atPath path: String) throws(NorthwindError) -> ClassicDataset {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in
                var tables: [String: [ClassicRow]] = [:]
                for canonical in canonicalTables {
                    let aliases = canonical == "Region" ? ["Region", "Regions"] : [canonical]
                    guard let name = try aliases.first(where: { try db.tableExists($0) }) else { continue }
                    let rows = try Table(name).fetchAll(db)
                    tables[canonical] = rows.enumerated().map { index, row in
                        var values: [String: ClassicValue] = [:]
                        for (column, dbValue) in row {
                            values[column] =
                                switch dbValue.storage {
                                case .null: .null
                                case .int64(let n): .integer(n)
                                case .double(let d): .number(String(d))
                                case .string(let s): .text(s)
                                case .blob(let b): .blob(Array(b))
                                }
                        }
                        return ClassicRow(line: index + 1, values: values)
                    }
                }
                return ClassicDataset(tables: tables, dialect: .sqlite)
            }
        } catch {
            throw .importFailed("Cannot read the SQLite database \(path): \(error)")
        }
    }

    static let canonicalTables = [
        "Categories", "Suppliers", "Products", "Customers", "CustomerDemographics", "CustomerCustomerDemo", "Employees",
        "Shippers", "Region", "Territories", "EmployeeTerritories", "Orders", "Order Details",
    ]

    static func load(_ dataset: ClassicDataset, into store: Store, replace: Bool, source: String) throws(NorthwindError) -> [DemoData.TableCount] {
        do {
            let load = BulkLoadOptions(
                replace: replace,
                refusal:
                    "The store at \(store.configuration.path) already holds data; import with --replace to overwrite it, or choose another --store."
            )
            return try store.bulkLoad(load) { db in
                var loader = Loader(db: db, dataset: dataset, binaries: store.binaries, source: source)
                return try loader.run()
            }
        } catch {
            throw NorthwindError.translating(error)
        }
    }
}

/// Maps classic rows to our tables, naming the table and line of any value that does not fit.
private struct Loader {
    let db: Database
    let dataset: ClassicDataset
    let binaries: ExternalStorage
    let source: String
    var customerIDs: [String: Int64] = [:]
    var territoryIDs: [String: Int64] = [:]
    var demographicIDs: [String: Int64] = [:]
    var counts: [DemoData.TableCount] = []

    init(db: Database, dataset: ClassicDataset, binaries: ExternalStorage, source: String) {
        self.db = db
        self.dataset = dataset
        self.binaries = binaries
        self.source = source
    }

    /// One classic row being read, so every error can say where it came from.
    struct Fields {
        let table: String
        let row: ClassicRow
        let source: String

        func fail(_ message: String) -> NorthwindError {
            .importFailed("\(source), \(table) row at line \(row.line): \(message)")
        }
        func text(_ column: String) throws -> String? {
            switch row.values[column] ?? .null {
            case .null: return nil
            case .text(let s):
                let trimmed = s.trimmingCharacters(in: .whitespacesAndNewlines)
                return trimmed.isEmpty ? nil : trimmed
            case .integer(let n): return String(n)
            case .number(let s): return s
            case .blob: throw fail("\(column) holds binary data where text was expected")
            }
        }
        func requiredText(_ column: String) throws -> String {
            guard let value = try text(column) else { throw fail("\(column) is missing") }
            return value
        }
        func int(_ column: String) throws -> Int64? {
            switch row.values[column] ?? .null {
            case .null: return nil
            case .integer(let n): return n
            case .number(let s), .text(let s):
                if let n = Int64(s.trimmingCharacters(in: .whitespaces)) { return n }
                if let d = Double(s), let n = Int64(exactly: d) { return n }
                throw fail("\(column) '\(s)' is not a whole number")
            case .blob: throw fail("\(column) holds binary data where a number was expected")
            }
        }
        func requiredInt(_ column: String) throws -> Int64 {
            guard let value = try int(column) else { throw fail("\(column) is missing") }
            return value
        }
        func money(_ column: String) throws -> Money? {
            guard let literal = try text(column) else { return nil }
            guard let amount = Decimal(string: literal, locale: Locale(identifier: "en_US_POSIX")) else {
                throw fail("\(column) '\(literal)' is not an amount")
            }
            guard let money = Money(amount) else { throw fail("\(column) '\(literal)' is too large an amount") }
            return money
        }
        func double(_ column: String) throws -> Double? {
            guard let literal = try text(column) else { return nil }
            guard let value = Double(literal) else { throw fail("\(column) '\(literal)' is not a number") }
            return value
        }
        func date(_ column: String) throws -> LocalDate? {
            guard let literal = try text(column) else { return nil }
            guard let date = LocalDate(literal) else { throw fail("\(column) '\(literal)' is not a date") }
            return date
        }
        func bool(_ column: String) throws -> Bool {
            switch try text(column)?.lowercased() {
            case nil, "0", "false", "f": return false
            case "1", "true", "t", "-1": return true
            case let other?: throw fail("\(column) '\(other)' is not a yes/no value")
            }
        }
        func image(_ column: String) throws -> BinaryContent? {
            guard case .blob(let bytes) = row.values[column] ?? .null, !bytes.isEmpty else { return nil }
            guard let image = Picture.unwrap(bytes) else { return nil }
            return BinaryContent(bytes: Data(image.bytes), contentType: image.contentType)
        }
    }

    func rows(_ table: String) -> [Fields] {
        (dataset.tables[table] ?? []).map { Fields(table: table, row: $0, source: source) }
    }

    /// Inserts, turning a constraint failure into an error that names the row.
    func insert<R: MutablePersistableRecord>(_ record: inout R, _ fields: Fields) throws {
        do {
            try record.insert(db)
        } catch let error as DatabaseError {
            // The write gate names each field and its rule; say those, not the gate's own wording.
            if case .invalid(let errors) = NorthwindError.translating(error) {
                throw fields.fail(errors.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
            }
            throw fields.fail("it does not fit the schema (\(error.message ?? "constraint failed"))")
        }
    }

    mutating func count(_ table: String, _ n: Int) { counts.append(.init(table: table, rows: n)) }

    /// The same limits as every other way in (`Limits`), named with the row that broke them.
    func check(_ errors: [NorthwindError.FieldError?], _ fields: Fields) throws {
        if let error = errors.compactMap({ $0 }).first { throw fields.fail("\(error.field) \(error.message)") }
    }

    mutating func run() throws -> [DemoData.TableCount] {
        try importCatalogue()
        try importPeople()
        try importShipping()
        try importOrders()
        if let violation = try db.foreignKeyViolations().next() {
            throw NorthwindError.importFailed("\(source): a \(violation.originTable) row refers to a record the file does not contain.")
        }
        return counts
    }

    /// Categories, suppliers and products, with an opening stock movement for each product's stock.
    private mutating func importCatalogue() throws {
        let categories = rows("Categories")
        for f in categories {
            var category = Category(
                id: try f.requiredInt("CategoryID"),
                name: try f.requiredText("CategoryName"),
                description: try f.text("Description")
            )
            try insert(&category, f)
            if let picture = try f.image("Picture") {
                try binaries.save(db, picture, table: "categories", attribute: "picture", id: category.id ?? 0)
            }
        }
        count("categories", categories.count)

        let suppliers = rows("Suppliers")
        for f in suppliers {
            var s = Supplier(id: try f.requiredInt("SupplierID"), companyName: try f.requiredText("CompanyName"))
            (s.contactName, s.contactTitle, s.address, s.city) = (
                try f.text("ContactName"), try f.text("ContactTitle"), try f.text("Address"), try f.text("City")
            )
            (s.region, s.postalCode, s.country, s.phone) = (
                try f.text("Region"), try f.text("PostalCode"), try f.text("Country"), try f.text("Phone")
            )
            (s.fax, s.homePage) = (try f.text("Fax"), try f.text("HomePage"))
            try insert(&s, f)
        }
        count("suppliers", suppliers.count)

        let products = rows("Products")
        for f in products {
            var p = Product(
                id: try f.requiredInt("ProductID"),
                name: try f.requiredText("ProductName"),
                supplierID: try f.int("SupplierID"),
                categoryID: try f.int("CategoryID"),
                quantityPerUnit: try f.text("QuantityPerUnit"),
                unitPrice: try f.money("UnitPrice") ?? .zero,
                unitsOnOrder: Int(try f.int("UnitsOnOrder") ?? 0),
                reorderLevel: Int(try f.int("ReorderLevel") ?? 0),
                discontinued: try f.bool("Discontinued")
            )
            let stock = Int(try f.int("UnitsInStock") ?? 0)
            try check(p.normalizeAndValidate() + [Limits.check(stock, Limits.units, "UnitsInStock")], f)
            try insert(&p, f)
            if stock != 0 {
                var opening = StockMovement(productID: p.id ?? 0, delta: stock, reason: .initial, note: "Imported opening balance")
                try insert(&opening, f)
            }
        }
        count("products", products.count)
    }

    /// Customers with their demographics, and employees.
    private mutating func importPeople() throws {
        let customers = rows("Customers")
        for f in customers {
            let code = try f.requiredText("CustomerID")
            var c = Customer(code: code, companyName: try f.requiredText("CompanyName"))
            (c.contactName, c.contactTitle, c.address, c.city) = (
                try f.text("ContactName"), try f.text("ContactTitle"), try f.text("Address"), try f.text("City")
            )
            (c.region, c.postalCode, c.country, c.phone, c.fax) = (
                try f.text("Region"), try f.text("PostalCode"), try f.text("Country"), try f.text("Phone"), try f.text("Fax")
            )
            try insert(&c, f)
            customerIDs[code.uppercased()] = c.id
        }
        count("customers", customers.count)

        let demographics = rows("CustomerDemographics")
        for f in demographics {
            let code = try f.requiredText("CustomerTypeID")
            var insert = BulkInsert(db, into: "customer_demographics", columns: ["code", "description"], batch: 1)
            try insert.append([code, try f.text("CustomerDesc")])
            demographicIDs[code] = db.lastInsertedRowID
        }
        for f in rows("CustomerCustomerDemo") {
            guard let customer = customerIDs[try f.requiredText("CustomerID").uppercased()],
                let demographic = demographicIDs[try f.requiredText("CustomerTypeID")]
            else { throw f.fail("refers to an unknown customer or demographic") }
            var insert = BulkInsert(db, into: "customer_demographic_links", columns: ["customerID", "demographicID"], batch: 1)
            try insert.append([customer, demographic])
        }

        let employees = rows("Employees")
        for f in employees {
            var e = Employee(
                id: try f.requiredInt("EmployeeID"),
                firstName: try f.requiredText("FirstName"),
                lastName: try f.requiredText("LastName"),
                title: try f.text("Title")
            )
            (e.titleOfCourtesy, e.birthDate, e.hireDate) = (try f.text("TitleOfCourtesy"), try f.date("BirthDate"), try f.date("HireDate"))
            (e.address, e.city, e.region, e.postalCode, e.country) = (
                try f.text("Address"), try f.text("City"), try f.text("Region"), try f.text("PostalCode"), try f.text("Country")
            )
            (e.homePhone, e.extension, e.notes, e.reportsTo, e.photoPath) = (
                try f.text("HomePhone"), try f.text("Extension"), try f.text("Notes"), try f.int("ReportsTo"), try f.text("PhotoPath")
            )
            try insert(&e, f)
            if let photo = try f.image("Photo") {
                try binaries.save(db, photo, table: "employees", attribute: "photo", id: e.id ?? 0)
            }
        }
        count("employees", employees.count)
    }

    /// Shippers, regions, territories and who covers them.
    private mutating func importShipping() throws {
        let shippers = rows("Shippers")
        for f in shippers {
            var s = Shipper(id: try f.requiredInt("ShipperID"), companyName: try f.requiredText("CompanyName"), phone: try f.text("Phone"))
            try insert(&s, f)
        }
        count("shippers", shippers.count)

        let regions = rows("Region")
        for f in regions {
            var r = Region(id: try f.requiredInt("RegionID"), description: try f.requiredText("RegionDescription"))
            try insert(&r, f)
        }
        count("regions", regions.count)

        let territories = rows("Territories")
        for f in territories {
            let code = try f.requiredText("TerritoryID")
            var t = Territory(code: code, description: try f.requiredText("TerritoryDescription"), regionID: try f.requiredInt("RegionID"))
            try insert(&t, f)
            territoryIDs[code] = t.id
        }
        count("territories", territories.count)

        let assignments = rows("EmployeeTerritories")
        for f in assignments {
            guard let territory = territoryIDs[try f.requiredText("TerritoryID")] else { throw f.fail("refers to an unknown territory") }
            var insert = BulkInsert(db, into: "employee_territories", columns: ["employeeID", "territoryID"], batch: 1)
            try insert.append([try f.requiredInt("EmployeeID"), territory])
        }
        count("employee territories", assignments.count)
    }

    /// Orders and their lines.
    private mutating func importOrders() throws {
        let orders = rows("Orders")
        for f in orders {
            let id = try f.requiredInt("OrderID")
            let code = try f.requiredText("CustomerID")
            guard let customerID = customerIDs[code.uppercased()] else { throw f.fail("CustomerID '\(code)' is not a known customer") }
            guard let orderDate = try f.date("OrderDate") else { throw f.fail("OrderDate is missing") }
            let shipped = try f.date("ShippedDate")
            var o = Order(
                id: id,
                number: String(id),
                customerID: customerID,
                employeeID: try f.int("EmployeeID"),
                orderDate: orderDate,
                requiredDate: try f.date("RequiredDate"),
                shippedDate: shipped,
                status: shipped == nil ? .new : .shipped,
                shipVia: try f.int("ShipVia"),
                freight: try f.money("Freight") ?? .zero
            )
            (o.shipName, o.shipAddress, o.shipCity, o.shipRegion) = (
                try f.text("ShipName"), try f.text("ShipAddress"), try f.text("ShipCity"), try f.text("ShipRegion")
            )
            (o.shipPostalCode, o.shipCountry) = (try f.text("ShipPostalCode"), try f.text("ShipCountry"))
            try check([Limits.check(o.freight, Limits.money, "Freight")], f)
            try insert(&o, f)
        }
        count("orders", orders.count)

        let lines = rows("Order Details")
        for f in lines {
            var line = OrderLine(
                orderID: try f.requiredInt("OrderID"),
                productID: try f.requiredInt("ProductID"),
                unitPrice: try f.money("UnitPrice") ?? .zero,
                quantity: Int(try f.requiredInt("Quantity")),
                discount: try f.double("Discount") ?? 0
            )
            try check(
                [
                    Limits.check(line.unitPrice, Limits.money, "UnitPrice"), Limits.check(line.quantity, Limits.lineQuantity, "Quantity"),
                    (0...1).contains(line.discount) ? nil : .init("Discount", "must be a fraction from 0 to 1"),
                ],
                f
            )
            try insert(&line, f)
        }
        count("order lines", lines.count)
    }
}
