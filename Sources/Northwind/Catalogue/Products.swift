import Foundation
import GRDB
import NorthwindStore

/// A product with the names of its category and supplier, as lists show it.
public struct ProductRow: Codable, Sendable, FetchableRecord {
    public var product: Product
    public var categoryName: String?
    public var supplierName: String?
    /// `stock.lowStockMargin` when the row was read.
    public var lowStockMargin = 0

    /// Low on stock by this shop's rule: `Product.isLowStock(margin:)` with the margin in force.
    public var isLowStock: Bool { product.isLowStock(margin: lowStockMargin) }

    enum CodingKeys: String, CodingKey {
        case product, categoryName, supplierName
    }
}

/// One location's stock of a product: an installation, by its site code.
public struct LocationStock: Sendable, Hashable {
    public var location: String
    public var units: Int
    /// This installation, whose shelf is `Product.unitsInStock`.
    public var isHere: Bool
}

/// How a product list is filtered, sorted and paged.
public struct ProductQuery: Sendable {
    public enum Sort: String, Sendable, CaseIterable, Codable {
        case name, price, stock, id
    }
    /// Words to search product names for, each as a prefix, ignoring case and accents (as `search`), among the first
    /// `Catalogue.listSearchCap` matches; the filters, the sort and the paging apply to those.
    public var text: String?
    public var categoryID: Int64?
    public var supplierID: Int64?
    /// nil lists both.
    public var discontinued: Bool?
    /// Only products whose stock plus units on order is at or below their reorder level (plus the shop's margin,
    /// `stock.lowStockMargin`).
    public var lowStock = false
    public var sort: Sort = .name
    public var descending = false
    public var limit = 50
    public var offset = 0
    public init() {}
}

extension Catalogue {
    public func list(_ query: ProductQuery = ProductQuery()) async throws(NorthwindError) -> Page<ProductRow> {
        try checkPaging(limit: query.limit, offset: query.offset)
        let margin = rules.lowStockMargin
        // Plain SQL so that each filter combination compiles once and is reused from the statement cache.
        var conditions: [String] = []
        var arguments: StatementArguments = []
        let pattern = query.text.flatMap(Self.prefixPattern)
        if query.text != nil && pattern == nil { return Page(items: [], total: 0, offset: query.offset, limit: query.limit) }
        if let pattern {
            // The first matches the index yields, as `search` takes its candidates: a one-letter prefix matches most
            // of the catalogue, and counting and sorting all of it on every keystroke would cost the page its speed.
            conditions.append("products.id IN (SELECT rowid FROM products_fts WHERE products_fts MATCH ? LIMIT ?)")
            arguments += [pattern, Self.listSearchCap]
        }
        if let categoryID = query.categoryID {
            conditions.append("products.categoryID = ?")
            arguments += [categoryID]
        }
        if let supplierID = query.supplierID {
            conditions.append("products.supplierID = ?")
            arguments += [supplierID]
        }
        if let discontinued = query.discontinued {
            conditions.append("products.discontinued = ?")
            arguments += [discontinued]
        }
        if query.lowStock {
            conditions.append(Product.lowStockSQL)
            arguments += [margin]
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let column =
            switch query.sort {
            case .name: "products.name"
            case .price: "products.unitPriceCents"
            case .stock: "products.unitsInStock"
            case .id: "products.id"
            }
        let direction = query.descending ? "DESC" : "ASC"
        let (countArguments, pageArguments) = (arguments, arguments + [query.limit, query.offset])
        // With no filter the total is itself the number of matches looked at; with one, it cannot tell.
        let capCheck = pattern != nil && conditions.count > 1 ? pattern : nil
        return try await measuredRead("products \(whereClause) \(column) \(direction)") { db in
            let total = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM products \(whereClause)"), arguments: countArguments) ?? 0
            let items = try fetchAll(
                ProductRow.self,
                db,
                sql: """
                    \(Self.productRowSelect) \(whereClause)
                    ORDER BY \(column) \(direction), products.id \(direction) LIMIT ? OFFSET ?
                    """,
                pageArguments
            )
            var page = Page(items: items.map { $0.judged(margin: margin) }, total: total, offset: query.offset, limit: query.limit)
            if let capCheck {
                let looked = try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM products_fts WHERE products_fts MATCH ? LIMIT ?)"),
                    arguments: [capCheck, Self.listSearchCap]
                )
                page.capped = looked == Self.listSearchCap
            } else if pattern != nil {
                page.capped = total == Self.listSearchCap
            }
            return page
        }
    }

    public static let productRowSelect = """
        SELECT products.*, categories.name AS categoryName, suppliers.companyName AS supplierName
        FROM products
        LEFT JOIN categories ON categories.id = products.categoryID
        LEFT JOIN suppliers ON suppliers.id = products.supplierID
        """

    static let productByID = productRowSelect + " WHERE products.id = ?"

    // guide: begin search-sql
    /// The first matches the index yields, ordered by name: the first `limit` of them, out of at most
    /// `searchCandidates(limit)`. Ranking (bm25) or ordering every match of a short prefix costs time in proportion to
    /// the catalogue; a bounded number of candidates keeps a keystroke's cost the same at any size, and a person
    /// typing narrows the words long before the candidates run out. Candidates are ordered through the narrow index
    /// `products(id, name)`, and only the page's rows are joined to their category and supplier.
    public static let searchSQL = """
        SELECT products.*, categories.name AS categoryName, suppliers.companyName AS supplierName
        FROM (SELECT candidates.id, candidates.name
              FROM (SELECT rowid FROM products_fts WHERE products_fts MATCH ? LIMIT ?) AS matches
              JOIN products AS candidates INDEXED BY products_on_id_name ON candidates.id = matches.rowid
              ORDER BY candidates.name, candidates.id
              LIMIT ?) AS page
        JOIN products ON products.id = page.id
        LEFT JOIN categories ON categories.id = products.categoryID
        LEFT JOIN suppliers ON suppliers.id = products.supplierID
        ORDER BY page.name, page.id
        """
    // guide: end search-sql

    /// How many matches a list with search text looks at, at most: enough to page through, bounded so a keystroke
    /// costs the same at any catalogue size.
    public static let listSearchCap = 1000

    /// How many matches a search of `limit` results orders: at least 50, so a short list is picked from a few.
    public static func searchCandidates(_ limit: Int) -> Int { max(50, limit) }

    /// Word and prefix search over product names, ignoring case and accents: "cote" finds "Côte de Blaye".
    /// Results come in name order.
    public func search(_ text: String, limit: Int = 20) throws(NorthwindError) -> [ProductRow] {
        try checkPaging(limit: limit, offset: 0)
        guard let pattern = Self.prefixPattern(text) else { return [] }
        let margin = rules.lowStockMargin
        return try quickRead { db in
            try fetchAll(ProductRow.self, db, sql: Self.searchSQL, [pattern, Self.searchCandidates(limit), limit])
        }.map { $0.judged(margin: margin) }
    }

    // guide: begin prefix-pattern
    /// `"cote"* "de"*`: every word, as a prefix. Built by hand because GRDB's `FTS5Pattern` opens an in-memory
    /// database to tokenize, which costs more than the search itself. Splitting on anything but letters and digits
    /// leaves no FTS5 syntax in the words, so quoting them is enough.
    static func prefixPattern(_ text: String) -> String? {
        let words = text.split { !($0.isLetter || $0.isNumber) }
        guard !words.isEmpty else { return nil }
        return words.prefix(16).map { "\"\($0)\"*" }.joined(separator: " ")
    }
    // guide: end prefix-pattern

    public func product(id: Int64) throws(NorthwindError) -> ProductRow {
        try quickRead { db in try Self.productRow(id: id, db) }.judged(margin: rules.lowStockMargin)
    }

    static func productRow(id: Int64, _ db: Database) throws -> ProductRow {
        guard let row = try fetchOne(ProductRow.self, db, sql: productByID, [id]) else {
            throw NorthwindError.notFound(entity: "product", key: "#\(id)")
        }
        return row
    }

    /// Adds a product. Its `unitsInStock` becomes the opening balance, recorded as an "initial" movement.
    public func create(_ product: Product, employeeID: Int64? = nil) async throws(NorthwindError) -> Product {
        var product = product
        // The opening stock is checked here: an edit never changes stock, so it is no field of the product's own rules.
        try (product.normalizeAndValidate() + [Limits.check(product.unitsInStock, Limits.units, "unitsInStock")].compactMap { $0 })
            .throwIfAny()
        let draft = product
        return try await write { db in
            try Self.checkReferences(draft, db)
            var inserted = draft
            inserted.id = nil
            inserted.version = 1
            inserted.unitsInStock = 0
            inserted.unitsOnOrder = 0
            try inserted.insert(db)
            if draft.unitsInStock > 0, let id = inserted.id {
                var movement = StockMovement(productID: id, delta: draft.unitsInStock, reason: .initial, employeeID: employeeID)
                try movement.insert(db)
                inserted.unitsInStock = draft.unitsInStock
            }
            return inserted
        }
    }

    // guide: begin update-product
    /// Saves edited details. Stock is not a detail: it changes only through `stock.receive`, `stock.adjust` and shipping;
    /// nor are units on order, which purchase orders make.
    /// `product.version` must be the version that was read, or the save is refused with what the other person changed.
    public func update(_ product: Product) async throws(NorthwindError) -> Product {
        guard let id = product.id else { throw .invalid("id", "is required to update a product") }
        var product = product
        try product.normalizeAndValidate().throwIfAny()
        let edited = product
        if let zone = SyncTable.sharedZone(of: "products") { await refreshBeforeEdit?(zone) }
        return try await write { db in
            let current = try Self.productRow(id: id, db).product
            guard current.version == edited.version else {
                var theirs = current
                theirs.unitsInStock = edited.unitsInStock
                throw NorthwindError.conflict(Records.conflictMessage("product", current.name, theirs: theirs, mine: edited))
            }
            guard edited.unitsInStock == current.unitsInStock else {
                throw NorthwindError.invalid(
                    "unitsInStock",
                    "changes only by receiving stock or by a stock take (adjust), not by editing the product"
                )
            }
            try Self.checkReferences(edited, db)
            var saved = edited
            // Units on order are derived from purchase orders: an edit never sets them.
            saved.unitsOnOrder = current.unitsOnOrder
            saved.recordID = current.recordID
            saved.version = current.version + 1
            try saved.update(db)
            return saved
        }
    }
    // guide: end update-product

    /// Deletes a product that no order line mentions.
    public func delete(id: Int64) async throws(NorthwindError) {
        try await write { db in
            let product = try Self.productRow(id: id, db).product
            let lines = try OrderLine.filter(OrderLine.Columns.productID == id).fetchCount(db)
            guard lines == 0 else {
                throw NorthwindError.inUse(
                    "Product '\(product.name)' is used by \(lines) order line\(lines == 1 ? "" : "s"); discontinue it instead of deleting it."
                )
            }
            let purchased = try Int.fetchOne(db, sql: "SELECT count(*) FROM purchase_order_lines WHERE productID = ?", arguments: [id]) ?? 0
            guard purchased == 0 else {
                throw NorthwindError.inUse(
                    "Product '\(product.name)' is on \(purchased) purchase order line\(purchased == 1 ? "" : "s"); discontinue it instead of deleting it."
                )
            }
            // The ledger every site's stock adds up from is never deleted (the store refuses it too).
            let movements = try Int.fetchOne(db, sql: "SELECT count(*) FROM stock_movements WHERE productID = ?", arguments: [id]) ?? 0
            guard movements == 0 else {
                throw NorthwindError.inUse(
                    "Product '\(product.name)' has \(movements) stock movement\(movements == 1 ? "" : "s") in its history; discontinue it instead of deleting it."
                )
            }
            _ = try Product.deleteOne(db, key: id)
        }
    }

    static func checkReferences(_ product: Product, _ db: Database) throws {
        var errors: [NorthwindError.FieldError] = []
        if let id = product.categoryID, try !exists(db, "categories", id) {
            errors.append(.init("categoryID", "no category #\(id) exists"))
        }
        if let id = product.supplierID, try !exists(db, "suppliers", id) {
            errors.append(.init("supplierID", "no supplier #\(id) exists"))
        }
        try errors.throwIfAny()
    }

    static func checkEmployee(_ id: Int64?, _ db: Database) throws {
        if let id, try !exists(db, "employees", id) {
            throw NorthwindError.invalid("employeeID", "no employee #\(id) exists")
        }
    }
}

extension Product {
    /// Time to reorder: what is in stock and on order does not reach the reorder level plus `margin` units
    /// (`stock.lowStockMargin`). Discontinued products are never reordered, so they never count as low. Saturating,
    /// so an out-of-range stored value cannot trap.
    public func isLowStock(margin: Int) -> Bool {
        !discontinued && unitsInStock.saturatingAdd(unitsOnOrder) <= reorderLevel.saturatingAdd(margin)
    }

    /// Low with no margin: the classic rule.
    public var isLowStock: Bool { isLowStock(margin: 0) }

    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        required(&name, "name", &errors)
        quantityPerUnit = clean(quantityPerUnit)
        errors += RecordRules.check("products", ["name": name, "quantityPerUnit": quantityPerUnit])
        errors += [
            Limits.check(unitPrice, Limits.money, "unitPrice"), Limits.check(reorderLevel, Limits.units, "reorderLevel"),
        ].compactMap { $0 }
        return errors
    }
}

extension Product {
    /// `isLowStock(margin:)` in SQL, for queries over `products`; binds one argument, the margin. (The reorder-list
    /// report in `reports.sql` states the classic rule, without a margin, in its own query.)
    static let lowStockSQL = "NOT products.discontinued AND products.unitsInStock + products.unitsOnOrder <= products.reorderLevel + ?"
}

/// Whether a row with this id exists, through a cached statement.
func exists(_ db: Database, _ table: String, _ id: Int64) throws -> Bool {
    try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE id = ?)"), arguments: [id]) ?? false
}

extension ProductRow {
    /// The row with the low-stock margin in force.
    func judged(margin: Int) -> ProductRow {
        var row = self
        row.lowStockMargin = margin
        return row
    }

    /// Expects `products.*` followed by the category and supplier names, as `productRowSelect` selects them; the
    /// names are read from the end, as a later version may add columns to `products`.
    public init(row: Row) throws {
        product = try Product(row: row)
        categoryName = try row.decode(atIndex: row.count - 2)
        supplierName = try row.decode(atIndex: row.count - 1)
    }
}
