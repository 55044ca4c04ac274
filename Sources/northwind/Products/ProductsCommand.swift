import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindWeb

struct ProductsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "products",
        abstract: "Browse, search and edit products, and book stock in and out.",
        subcommands: [List.self, Search.self, Show.self, Add.self, Edit.self, Delete.self, Receive.self, Adjust.self]
    )

    static func table(_ rows: [ProductRow]) -> String {
        var table = TextTable("ID", "Name", "Category", "Price", "Stock", "On order", "Reorder", "")
        for row in rows {
            let p = row.product
            let flags = [row.isLowStock ? "LOW" : nil, p.discontinued ? "discontinued" : nil].compactMap { $0 }
            table.add(
                String(p.id ?? 0),
                p.name,
                text(row.categoryName),
                p.unitPrice.description,
                String(p.unitsInStock),
                String(p.unitsOnOrder),
                String(p.reorderLevel),
                flags.joined(separator: " ")
            )
        }
        return table.render()
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List products, filtered, sorted and paged.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Only this category id.") var category: Int64?
        @Option(help: "Only this supplier id.") var supplier: Int64?
        @Flag(help: "Only discontinued products.") var discontinued = false
        @Flag(help: "Only products still sold.") var active = false
        @Flag(help: "Only products still sold whose stock plus units on order is at or below the reorder level.") var lowStock = false
        @Option(help: "Sort by name, price, stock or id.") var sort: ProductQuery.Sort = .name
        @Flag(help: "Sort descending.") var desc = false
        @Option(help: "Rows per page (1–1000).") var limit = 50
        @Option(help: "Rows to skip.") var offset = 0

        func validate() throws {
            if discontinued && active { throw ValidationError("--discontinued and --active exclude each other.") }
        }

        func run() async throws {
            var query = ProductQuery()
            (query.categoryID, query.supplierID, query.lowStock) = (category, supplier, lowStock)
            query.discontinued = discontinued ? true : (active ? false : nil)
            (query.sort, query.descending, query.limit, query.offset) = (sort, desc, limit, offset)
            let page = try await storeOptions.open().catalogue.list(query)
            if output.json { return try printJSON(Wire.products(page)) }
            print(ProductsCommand.table(page.items))
            print(pageFooter(page))
        }
    }

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find products by words or beginnings of words in their name, ignoring case and accents."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "Words to look for, e.g. \"cote\".") var text: String
        @Option(help: "At most this many results.") var limit = 20

        func run() async throws {
            let rows = try await storeOptions.open().catalogue.search(text, limit: limit)
            if output.json { return try printJSON(Wire.products(rows)) }
            print(rows.isEmpty ? "No product matches '\(text)'." : ProductsCommand.table(rows))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a product with its category, supplier and recent stock movements.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The product id.") var id: Int64

        /// The product with its movements, in the API's shapes.
        struct Shown<Product: Encodable, Movements: Encodable>: Encodable {
            var product: Product
            var movements: Movements
        }

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let row = try backoffice.catalogue.product(id: id)
            let movements = try await backoffice.stock.movements(productID: id, limit: 10)
            if output.json { return try printJSON(Shown(product: Wire.product(row), movements: Wire.movements(movements))) }
            let p = row.product
            print(
                """
                Product #\(id): \(p.name)\(p.discontinued ? " (discontinued)" : "")
                  Category:          \(text(row.categoryName))
                  Supplier:          \(text(row.supplierName))
                  Quantity per unit: \(text(p.quantityPerUnit))
                  Unit price:        \(p.unitPrice)
                  Units in stock:    \(p.unitsInStock)\(row.isLowStock ? "  (low: at or below reorder level with what is on order)" : "")
                  Units on order:    \(p.unitsOnOrder)
                  Reorder level:     \(p.reorderLevel)
                  Version:           \(p.version)
                """
            )
            guard !movements.isEmpty else { return print("No stock movements yet.") }
            var table = TextTable("When", "Change", "Reason", "Order", "Employee", "Note")
            for m in movements {
                table.add(
                    m.createdAt.description,
                    m.delta > 0 ? "+\(m.delta)" : String(m.delta),
                    m.reason.rawValue,
                    m.orderID.map { String($0) } ?? "",
                    m.employeeID.map { String($0) } ?? "",
                    text(m.note)
                )
            }
            print("\nRecent stock movements:\n" + table.render())
        }
    }

    /// Fields shared by add and edit; nil leaves a field as it is.
    struct ProductFields: ParsableArguments {
        @Option(help: "Name.") var name: String?
        @Option(help: "Unit price, e.g. 18.50.") var price: Money?
        @Option(help: "Category id.") var category: Int64?
        @Option(help: "Supplier id.") var supplier: Int64?
        @Option(help: "Packaging, e.g. \"24 - 12 oz bottles\".") var quantityPerUnit: String?
        @Option(help: "Reorder level.") var reorderLevel: Int?
        @Option(help: "true to stop selling it, false to sell it again.") var discontinued: Bool?

        func apply(to product: inout Product) {
            if let name { product.name = name }
            if let price { product.unitPrice = price }
            if let category { product.categoryID = category }
            if let supplier { product.supplierID = supplier }
            if let quantityPerUnit { product.quantityPerUnit = quantityPerUnit }
            if let reorderLevel { product.reorderLevel = reorderLevel }
            if let discontinued { product.discontinued = discontinued }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a product; --stock is its opening balance.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var fields: ProductFields
        @Option(help: "Opening stock.") var stock = 0

        func validate() throws {
            if fields.name == nil { throw ValidationError("Missing --name.") }
        }

        func run() async throws {
            var product = Product(name: "")
            fields.apply(to: &product)
            product.unitsInStock = stock
            let backoffice = try await storeOptions.open()
            let created = try await backoffice.catalogue.create(product)
            if output.json { return try printJSON(Wire.product(try backoffice.catalogue.product(id: created.id ?? 0))) }
            print("Added product #\(created.id ?? 0): \(created.name).")
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a product's details (not its stock: use receive or adjust).")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The product id.") var id: Int64
        @OptionGroup var fields: ProductFields

        func run() async throws {
            let backoffice = try await storeOptions.open()
            var product = try backoffice.catalogue.product(id: id).product
            fields.apply(to: &product)
            let saved = try await backoffice.catalogue.update(product)
            if output.json { return try printJSON(Wire.product(try backoffice.catalogue.product(id: saved.id ?? 0))) }
            print("Saved product #\(id): \(saved.name).")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a product that no order mentions.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The product id.") var id: Int64

        func run() async throws {
            try await storeOptions.open().catalogue.delete(id: id)
            print("Deleted product #\(id).")
        }
    }

    struct Receive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Book goods in: stock rises by QUANTITY.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The product id.") var id: Int64
        @Argument(help: "Units received.") var quantity: Int
        @Option(help: "The employee who received them.") var employee: Int64?
        @Option(help: "A note for the audit trail, e.g. a delivery note number.") var note: String?

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let product = try await backoffice.stock.receive(productID: id, quantity: quantity, employeeID: employee, note: note)
            if output.json { return try printJSON(Wire.product(try backoffice.catalogue.product(id: product.id ?? 0))) }
            print("\(product.name): \(product.unitsInStock) in stock, \(product.unitsOnOrder) on order.")
        }
    }

    struct Adjust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record a stock take: the counted quantity replaces the stock.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The product id.") var id: Int64
        @Argument(help: "Units counted on the shelf.") var counted: Int
        @Option(help: "The employee who counted.") var employee: Int64?
        @Option(help: "A note for the audit trail.") var note: String?

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let product = try await backoffice.stock.adjust(productID: id, countedQuantity: counted, employeeID: employee, note: note)
            if output.json { return try printJSON(Wire.product(try backoffice.catalogue.product(id: product.id ?? 0))) }
            print("\(product.name): \(product.unitsInStock) in stock.")
        }
    }
}
