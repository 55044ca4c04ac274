import Foundation
import GRDB

/// A product with the names of its category and supplier, as lists show it.
public struct ProductRow: Codable, Sendable, FetchableRecord {
    public var product: Product
    public var categoryName: String?
    public var supplierName: String?
}

/// How a product list is filtered, sorted and paged.
public struct ProductQuery: Sendable {
    public enum Sort: String, Sendable, CaseIterable, Codable {
        case name, price, stock, id
    }
    public var categoryID: Int64?
    public var supplierID: Int64?
    /// nil lists both.
    public var discontinued: Bool?
    /// Only products whose stock plus units on order is at or below their reorder level.
    public var lowStock = false
    public var sort: Sort = .name
    public var descending = false
    public var limit = 50
    public var offset = 0
    public init() {}
}

extension Backoffice {
    public func listProducts(_ query: ProductQuery = ProductQuery()) async throws(NorthwindError) -> Page<ProductRow> {
        try checkPaging(limit: query.limit, offset: query.offset)
        return try await read { db in
            var request = Product.all()
            if let categoryID = query.categoryID { request = request.filter(Product.Columns.categoryID == categoryID) }
            if let supplierID = query.supplierID { request = request.filter(Product.Columns.supplierID == supplierID) }
            if let discontinued = query.discontinued { request = request.filter(Product.Columns.discontinued == discontinued) }
            if query.lowStock { request = request.lowStock() }
            let total = try request.fetchCount(db)
            let column: Product.Columns = switch query.sort {
            case .name: .name
            case .price: .unitPrice
            case .stock: .unitsInStock
            case .id: .id
            }
            let ordering: [any SQLOrderingTerm] = query.descending ? [column.desc, Product.Columns.id.desc] : [column.asc, Product.Columns.id.asc]
            let items = try ProductRow.fetchAll(db, request.withNames().order(ordering).limit(query.limit, offset: query.offset))
            return Page(items: items, total: total, offset: query.offset, limit: query.limit)
        }
    }

    /// Word and prefix search over product names, ignoring case and accents: "cote" finds "Côte de Blaye".
    public func searchProducts(_ text: String, limit: Int = 20) async throws(NorthwindError) -> [ProductRow] {
        try checkPaging(limit: limit, offset: 0)
        guard let pattern = FTS5Pattern(matchingAllPrefixesIn: text) else { return [] }
        return try await read { db in try Self.searchProducts(pattern, limit: limit, db) }
    }

    static func searchProducts(_ pattern: FTS5Pattern, limit: Int, _ db: Database) throws -> [ProductRow] {
        let sql = """
            SELECT products.*, categories.name AS categoryName, suppliers.companyName AS supplierName
            FROM products_fts
            JOIN products ON products.id = products_fts.rowid
            LEFT JOIN categories ON categories.id = products.categoryID
            LEFT JOIN suppliers ON suppliers.id = products.supplierID
            WHERE products_fts MATCH ?
            ORDER BY products_fts.rank, products.name
            LIMIT ?
            """
        return try ProductRow.fetchAll(db, sql: sql, arguments: [pattern, limit])
    }

    public func product(id: Int64) async throws(NorthwindError) -> ProductRow {
        try await read { db in try Self.productRow(id: id, db) }
    }

    static func productRow(id: Int64, _ db: Database) throws -> ProductRow {
        guard let row = try ProductRow.fetchOne(db, Product.filter(key: id).withNames()) else {
            throw NorthwindError.notFound(entity: "product", key: "#\(id)")
        }
        return row
    }

    /// Adds a product. Its `unitsInStock` becomes the opening balance, recorded as an "initial" movement.
    public func createProduct(_ product: Product, employeeID: Int64? = nil) async throws(NorthwindError) -> Product {
        var product = product
        try product.normalizeAndValidate().throwIfAny()
        if product.unitsInStock < 0 { throw .invalid("unitsInStock", "must not be negative") }
        let draft = product
        return try await write { db in
            try Self.checkReferences(draft, db)
            var inserted = draft
            inserted.id = nil
            inserted.version = 1
            inserted.unitsInStock = 0
            try inserted.insert(db)
            if draft.unitsInStock > 0, let id = inserted.id {
                var movement = StockMovement(productID: id, delta: draft.unitsInStock, reason: .initial, employeeID: employeeID)
                try movement.insert(db)
                inserted.unitsInStock = draft.unitsInStock
            }
            return inserted
        }
    }

    /// Saves edited details. Stock is not a detail: it changes only through `receiveStock`, `adjustStock` and shipping.
    /// `product.version` must be the version that was read, or the save is refused with what the other person changed.
    public func updateProduct(_ product: Product) async throws(NorthwindError) -> Product {
        guard let id = product.id else { throw .invalid("id", "is required to update a product") }
        var product = product
        try product.normalizeAndValidate().throwIfAny()
        let edited = product
        return try await write { db in
            let current = try Self.productRow(id: id, db).product
            guard current.version == edited.version else {
                var theirs = current
                theirs.unitsInStock = edited.unitsInStock
                throw NorthwindError.conflict(Self.conflictMessage("product", current.name, theirs: theirs, mine: edited))
            }
            guard edited.unitsInStock == current.unitsInStock else {
                throw NorthwindError.invalid("unitsInStock", "changes only by receiving stock or by a stock take (adjust), not by editing the product")
            }
            try Self.checkReferences(edited, db)
            var saved = edited
            saved.recordID = current.recordID
            saved.version = current.version + 1
            try saved.update(db)
            return saved
        }
    }

    /// Deletes a product that no order line mentions.
    public func deleteProduct(id: Int64) async throws(NorthwindError) {
        try await write { db in
            let product = try Self.productRow(id: id, db).product
            let lines = try OrderLine.filter(OrderLine.Columns.productID == id).fetchCount(db)
            guard lines == 0 else {
                throw NorthwindError.inUse("Product '\(product.name)' is used by \(lines) order line\(lines == 1 ? "" : "s"); discontinue it instead of deleting it.")
            }
            _ = try Product.deleteOne(db, key: id)
        }
    }

    /// Books goods in: stock rises, and units on order fall by as much as arrived.
    public func receiveStock(productID: Int64, quantity: Int, employeeID: Int64? = nil, note: String? = nil) async throws(NorthwindError) -> Product {
        guard quantity > 0 else { throw .invalid("quantity", "must be a positive number of units") }
        return try await write { db in
            let product = try Self.productRow(id: productID, db).product
            try Self.checkEmployee(employeeID, db)
            var movement = StockMovement(productID: productID, delta: quantity, reason: .received, employeeID: employeeID, note: clean(note))
            try movement.insert(db)
            let arrivedOnOrder = min(quantity, product.unitsOnOrder)
            if arrivedOnOrder > 0 {
                try db.execute(sql: "UPDATE products SET unitsOnOrder = unitsOnOrder - ? WHERE id = ?", arguments: [arrivedOnOrder, productID])
            }
            return try Self.productRow(id: productID, db).product
        }
    }

    /// Records a stock take: the counted quantity replaces the stock, and the difference becomes a movement.
    public func adjustStock(productID: Int64, countedQuantity: Int, employeeID: Int64? = nil, note: String? = nil) async throws(NorthwindError) -> Product {
        guard countedQuantity >= 0 else { throw .invalid("countedQuantity", "must not be negative") }
        return try await write { db in
            let product = try Self.productRow(id: productID, db).product
            try Self.checkEmployee(employeeID, db)
            let delta = countedQuantity - product.unitsInStock
            if delta != 0 {
                var movement = StockMovement(productID: productID, delta: delta, reason: .stockTake, employeeID: employeeID, note: clean(note))
                try movement.insert(db)
            }
            return try Self.productRow(id: productID, db).product
        }
    }

    /// The product's stock movements, newest first.
    public func stockMovements(productID: Int64, limit: Int = 50) async throws(NorthwindError) -> [StockMovement] {
        try checkPaging(limit: limit, offset: 0)
        return try await read { db in
            _ = try Self.productRow(id: productID, db)
            return try StockMovement.filter(StockMovement.Columns.productID == productID)
                .order(StockMovement.Columns.createdAt.desc, StockMovement.Columns.id.desc)
                .limit(limit).fetchAll(db)
        }
    }

    static func checkReferences(_ product: Product, _ db: Database) throws {
        var errors: [NorthwindError.FieldError] = []
        if let id = product.categoryID, try Category.fetchOne(db, key: id) == nil {
            errors.append(.init("categoryID", "no category #\(id) exists"))
        }
        if let id = product.supplierID, try Supplier.fetchOne(db, key: id) == nil {
            errors.append(.init("supplierID", "no supplier #\(id) exists"))
        }
        try errors.throwIfAny()
    }

    static func checkEmployee(_ id: Int64?, _ db: Database) throws {
        if let id, try Employee.fetchOne(db, key: id) == nil {
            throw NorthwindError.invalid("employeeID", "no employee #\(id) exists")
        }
    }
}

extension Product {
    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        required(&name, "name", &errors, max: 80)
        quantityPerUnit = clean(quantityPerUnit)
        if unitPrice.cents < 0 { errors.append(.init("unitPrice", "must not be negative")) }
        if unitsOnOrder < 0 { errors.append(.init("unitsOnOrder", "must not be negative")) }
        if reorderLevel < 0 { errors.append(.init("reorderLevel", "must not be negative")) }
        return errors
    }
}

extension DerivableRequest<Product> {
    /// Northwind's low-stock rule: units in stock plus units on order at or below the reorder level.
    public func lowStock() -> Self {
        filter(sql: "unitsInStock + unitsOnOrder <= reorderLevel")
    }
}

extension QueryInterfaceRequest<Product> {
    func withNames() -> QueryInterfaceRequest<Product> {
        annotated(withOptional: Product.category.select(Category.Columns.name.forKey("categoryName")))
            .annotated(withOptional: Product.supplier.select(Supplier.Columns.companyName.forKey("supplierName")))
    }
}

extension ProductRow {
    public init(row: Row) throws {
        product = try Product(row: row)
        categoryName = row["categoryName"]
        supplierName = row["supplierName"]
    }
}
