import Foundation
import GRDB

/// What a report asks for.
public struct ReportParameter: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// A calendar year, e.g. 1997.
        case year
        /// A day, `yyyy-MM-dd`; ranges include their last day.
        case date
        /// A customer's code, e.g. ALFKI.
        case customer
        /// An order's number, e.g. 10248.
        case order
        /// A category's name, e.g. Beverages.
        case category
        /// A product's id, or its exact name.
        case product
        /// How many rows, e.g. 10.
        case count
    }

    public var name: String
    public var kind: Kind
    /// The value used when none is given; nil means the parameter is required, and "" that it may stay empty
    /// (an open end of a period, any product).
    public var defaultValue: String?
    public var help: String
    public var isRequired: Bool { defaultValue == nil }
}

/// One of the classic Northwind views or stored procedures, as a report.
public struct ReportDefinition: Sendable, Hashable, Codable {
    /// The name people type, e.g. `category-sales-for-1997`.
    public var name: String
    /// What it reproduces, e.g. `view "Category Sales for 1997"`.
    public var original: String
    public var summary: String
    public var parameters: [ReportParameter]
    /// Columns that hold money, as whole cents in SQL.
    public var moneyColumns: [String]
    /// The statement's key in `reports.sql`.
    var query: String

    /// The report's SQL, with its parameters as `:name`: for tools that run it without this layer, such as the bench.
    public var sql: String? { ReportQueries.all[query] }
}

/// A value in a report's table.
public enum ReportValue: Sendable, Hashable, CustomStringConvertible, Encodable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case money(Money)

    /// Plain text: `440.00`, `1996-07-04`, `0.15`, empty for null.
    public var description: String {
        switch self {
        case .null: ""
        case let .integer(value): String(value)
        case let .real(value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case let .text(value): value
        case let .money(value): value.description
        }
    }

    /// JSON: money as a decimal string, like the API's, so no client rounds it through binary floating point.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .integer(value): try container.encode(value)
        case let .real(value): try container.encode(value)
        case let .text(value): try container.encode(value)
        case let .money(value): try container.encode(value.description)
        }
    }
}

/// A report's result: its columns as the original names them, and its rows in the original's order.
public struct ReportTable: Sendable {
    public var report: ReportDefinition
    public var parameters: [String: String]
    public var columns: [String]
    public var rows: [[ReportValue]]
    /// False when a limit cut the rows short.
    public var isComplete = true

    public func isMoney(_ column: Int) -> Bool { report.moneyColumns.contains(columns[column]) }

    private static func needsQuotes(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "\""), UInt8(ascii: "\n"), UInt8(ascii: "\r"): true
        default: false
        }
    }

    /// Whether a spreadsheet would run a cell that starts with this byte as a formula (OWASP's list).
    private static func startsFormula(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D: true
        default: false
        }
    }

    /// Text that is a plain number, such as "-12.5": a spreadsheet reads it as that number, so it stays as it is.
    private static func isPlainNumber(_ text: String) -> Bool {
        text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "+")].contains($0) }
            && Double(text) != nil
    }

    /// Appends one RFC 4180 CSV record and its line break, values printed plainly (`1996-07-04`, `440.00`); a field
    /// holding a comma, quote or line break is quoted. Text that a spreadsheet would run as a formula (a product named
    /// `=HYPERLINK(…)`) is quoted and prefixed with `'`, as OWASP advises, so it shows as the text it is. Works on
    /// bytes: building Strings per field made a 56 MB download take three times as long as its query.
    public static func appendCSV(_ values: [ReportValue], to bytes: inout [UInt8]) {
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            switch value {
            case .null: break
            case let .text(text):
                let isFormula = text.utf8.first.map(Self.startsFormula) == true && !Self.isPlainNumber(text)
                guard isFormula || text.utf8.contains(where: Self.needsQuotes) else {
                    bytes.append(contentsOf: text.utf8)
                    continue
                }
                bytes.append(UInt8(ascii: "\""))
                if isFormula { bytes.append(UInt8(ascii: "'")) }
                for byte in text.utf8 {
                    bytes.append(byte)
                    if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                }
                bytes.append(UInt8(ascii: "\""))
            case .integer, .real, .money:
                bytes.append(contentsOf: value.description.utf8)
            }
        }
        bytes.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
    }
}

extension ReportDefinition {
    /// Every classic view and procedure of Microsoft's `instnwnd.sql`, in the order the script defines them.
    /// How each reproduces SQL Server's arithmetic (float32 `real` steps, money rounding, inclusive dates) is written
    /// beside its query in `Resources/reports.sql`.
    public static let catalogue: [ReportDefinition] = {
        func year(_ defaultYear: Int) -> ReportParameter {
            ReportParameter(
                name: "year",
                kind: .year,
                defaultValue: String(defaultYear),
                help: "The year (the original is fixed to \(defaultYear))."
            )
        }
        let range = [
            ReportParameter(name: "from", kind: .date, defaultValue: nil, help: "The first day, e.g. 1996-07-01."),
            ReportParameter(name: "to", kind: .date, defaultValue: nil, help: "The last day, included, e.g. 1996-07-31."),
        ]
        let customer = ReportParameter(name: "customer", kind: .customer, defaultValue: nil, help: "The customer's code, e.g. ALFKI.")
        func view(_ name: String, _ summary: String, _ parameters: [ReportParameter] = [], money: [String] = []) -> ReportDefinition {
            ReportDefinition(
                name: slug(name),
                original: "view \"\(name)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: key(name)
            )
        }
        func procedure(
            _ name: String,
            _ summary: String,
            _ parameters: [ReportParameter] = [],
            money: [String] = [],
            key query: String? = nil
        ) -> ReportDefinition {
            // SalesByCategory would take the view "Sales by Category"'s name; it keeps its query's key instead.
            ReportDefinition(
                name: query.map { $0.replacingOccurrences(of: "_", with: "-") } ?? slug(name),
                original: "procedure \"\(name)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: query ?? key(name)
            )
        }
        return [
            view("Alphabetical list of products", "Products still sold, with their category.", money: ["UnitPrice"]),
            view("Current Product List", "The id and name of every product still sold."),
            view("Products Above Average Price", "Products priced above the average, dearest first.", money: ["UnitPrice"]),
            view("Products by Category", "Products still sold, by category."),
            view("Customer and Suppliers by City", "Every customer and supplier, by city."),
            view("Invoices", "Every line of every order, with what an invoice prints.", money: ["UnitPrice", "ExtendedPrice", "Freight"]),
            view("Order Details Extended", "Every order line with its discounted amount.", money: ["UnitPrice", "ExtendedPrice"]),
            view("Order Subtotals", "Each order's total before freight.", money: ["Subtotal"]),
            view("Orders Qry", "Every order with its customer's address.", money: ["Freight"]),
            view("Quarterly Orders", "Customers who ordered in a year.", [year(1997)]),
            view("Product Sales for 1997", "Sales per product of orders shipped in a year.", [year(1997)], money: ["ProductSales"]),
            view("Category Sales for 1997", "Sales per category of orders shipped in a year.", [year(1997)], money: ["CategorySales"]),
            view("Sales by Category", "Sales per product and category of orders placed in a year.", [year(1997)], money: ["ProductSales"]),
            view("Sales Totals by Amount", "Orders shipped in a year worth more than 2,500.", [year(1997)], money: ["SaleAmount"]),
            view("Summary of Sales by Quarter", "Every shipped order with its subtotal.", money: ["Subtotal"]),
            view("Summary of Sales by Year", "Every shipped order with its subtotal.", money: ["Subtotal"]),
            procedure("Ten Most Expensive Products", "The ten dearest products.", money: ["UnitPrice"]),
            procedure("CustOrderHist", "How many of each product a customer has ordered.", [customer]),
            procedure(
                "CustOrdersDetail",
                "An order's lines.",
                [ReportParameter(name: "order", kind: .order, defaultValue: nil, help: "The order's number, e.g. 10248.")],
                money: ["UnitPrice", "ExtendedPrice"]
            ),
            procedure("CustOrdersOrders", "A customer's orders.", [customer]),
            procedure("Employee Sales by Country", "Each employee's shipped orders in a period.", range, money: ["SaleAmount"]),
            procedure("Sales by Year", "Orders shipped in a period, with their subtotals.", range, money: ["Subtotal"]),
            procedure(
                "SalesByCategory",
                "A category's sales per product in a year, in whole currency units.",
                [
                    ReportParameter(name: "category", kind: .category, defaultValue: nil, help: "The category's name, e.g. Beverages."),
                    year(1998),
                ],
                money: ["TotalPurchase"],
                key: "sales_by_category_proc"
            ),
        ] + managersReports
    }()

    /// Reports of our own, for running the business; `reports.sql` states their rules.
    static let managersReports: [ReportDefinition] = {
        let period = [
            ReportParameter(name: "from", kind: .date, defaultValue: "", help: "The first order date, e.g. 2026-01-01; empty for the beginning."),
            ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last order date, included; empty for no end."),
        ]
        let top = ReportParameter(name: "top", kind: .count, defaultValue: "10", help: "How many to list, e.g. 10.")
        func report(_ title: String, _ summary: String, _ parameters: [ReportParameter] = [], money: [String] = []) -> ReportDefinition {
            ReportDefinition(
                name: slug(title),
                original: "Northwind report \"\(title)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: key(title)
            )
        }
        return [
            report("Reorder list", "Products to reorder, by supplier, with a suggested quantity."),
            report("Order backlog", "Open orders, the most urgent first, each supplyable or blocked.", money: ["Amount"]),
            report("Top customers", "The customers who bought most in a period.", period + [top], money: ["Sales", "AverageOrder"]),
            report("Top products", "The products that sold most in a period.", period + [top], money: ["Sales"]),
            report("Sales per employee", "Orders taken and sales per employee in a period.", period, money: ["Sales", "AverageOrder"]),
            report(
                "Stock movements",
                "Every change to stock, for a product or a period.",
                [
                    ReportParameter(name: "product", kind: .product, defaultValue: "", help: "A product's id or exact name; empty for all."),
                    ReportParameter(name: "from", kind: .date, defaultValue: "", help: "The first day, e.g. 2026-01-01; empty for the beginning."),
                    ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last day, included; empty for no end."),
                ]
            ),
        ]
    }()

    /// By its name, or by the original's (`SalesByCategory`, `Sales by Category`), ignoring case.
    public static func named(_ name: String) -> ReportDefinition? {
        let lowered = name.lowercased()
        return catalogue.first { $0.name == lowered }
            ?? catalogue.first { $0.original.lowercased().hasSuffix("\"\(lowered)\"") }
            ?? catalogue.first { $0.name == slug(name) }
    }

    /// `Category Sales for 1997` → `category-sales-for-1997`; `CustOrderHist` → `cust-order-hist`.
    static func slug(_ name: String) -> String {
        words(name).joined(separator: "-")
    }

    static func key(_ name: String) -> String { words(name).joined(separator: "_") }

    private static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in name {
            if character.isLetter || character.isNumber {
                if character.isUppercase, let last = current.last, last.isLowercase {
                    words.append(current)
                    current = ""
                }
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words.map { $0.lowercased() }
    }
}

/// The statements of `Resources/reports.sql`, by their `-- name:` key.
enum ReportQueries {
    static let all: [String: String] = {
        guard let url = Bundle.module.url(forResource: "reports", withExtension: "sql"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [:] }
        var queries: [String: String] = [:]
        for chunk in text.components(separatedBy: "-- name: ").dropFirst() {
            let key = String(chunk.prefix { !$0.isWhitespace })
            let body = chunk.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
                .filter { !$0.hasPrefix("--") }.joined(separator: "\n")
            queries[key] = body.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return queries
    }()
}

extension Backoffice {
    /// Runs a report. `parameters` are the report's parameters as text, by name; absent ones take their default.
    /// Values are checked first, so a mistake gets a message naming the parameter rather than an empty table.
    /// With a `limit`, reading stops there: a screen of the 215k-line listings costs milliseconds, not seconds.
    /// An `offset` skips rows first; each page runs the query again, so reading every row is `streamReport`'s job.
    public func runReport(
        _ name: String,
        parameters given: [String: String] = [:],
        limit: Int? = nil,
        offset: Int = 0
    ) throws(NorthwindError) -> ReportTable {
        var rows: [[ReportValue]] = []
        var isComplete = true
        var skipped = 0
        var table = try scanReport(name, parameters: given) { _ in
        } row: { values in
            if skipped < offset {
                skipped += 1
                return true
            }
            if let limit, rows.count == limit {
                isComplete = false
                return false
            }
            rows.append(values())
            return true
        }
        table.rows = rows
        table.isComplete = isComplete
        return table
    }

    /// Runs a report and hands over its rows one at a time as they are read, in one read transaction, so a download
    /// of every row holds one row in memory, not the table. `columns` comes first, once; a parameter mistake is thrown
    /// before it. An error thrown by either closure stops the reading.
    public func streamReport(
        _ name: String,
        parameters given: [String: String] = [:],
        columns: ([String]) throws -> Void,
        row: ([ReportValue]) throws -> Void
    ) throws(NorthwindError) {
        _ = try scanReport(name, parameters: given, columns: columns) { values in
            try row(values())
            return true
        }
    }

    /// The one reading loop: `row` gets a reader of the current row's values (skipping costs no reading), and
    /// returns false to stop. Returns the report's table without rows.
    private func scanReport(
        _ name: String,
        parameters given: [String: String],
        columns: ([String]) throws -> Void,
        row: (() -> [ReportValue]) throws -> Bool
    ) throws(NorthwindError) -> ReportTable {
        guard let report = ReportDefinition.named(name) else {
            throw .notFound(entity: "report", key: name)
        }
        guard let sql = ReportQueries.all[report.query] else {
            throw .storeUnavailable("The report \(report.name) is missing its query from the installation.")
        }
        var errors: [NorthwindError.FieldError] = []
        for unknown in given.keys.sorted() where !report.parameters.contains(where: { $0.name == unknown }) {
            let known = report.parameters.map(\.name).joined(separator: ", ")
            errors.append(.init(unknown, "is not a parameter of \(report.name)" + (known.isEmpty ? " (it takes none)" : " (it takes \(known))")))
        }
        var values: [String: String] = [:]
        var arguments: [String: (any DatabaseValueConvertible)?] = [:]
        for parameter in report.parameters {
            guard let text = clean(given[parameter.name]) ?? parameter.defaultValue else {
                let help = parameter.help.prefix(1).lowercased() + parameter.help.dropFirst().dropLast()
                errors.append(.init(parameter.name, "is required (\(help))"))
                continue
            }
            values[parameter.name] = text
            if text.isEmpty {
                arguments[parameter.name] = .some(nil)
                continue
            }
            switch parameter.kind {
            case .year:
                guard let year = Int(text), (1753...9999).contains(year) else {
                    errors.append(.init(parameter.name, "must be a year such as 1997, not \"\(text)\""))
                    continue
                }
                arguments[parameter.name] = year
            case .date:
                guard let day = LocalDate(text) else {
                    errors.append(.init(parameter.name, "must be a date written yyyy-MM-dd, such as 1996-07-04, not \"\(text)\""))
                    continue
                }
                arguments[parameter.name] = day.description
            case .count:
                guard let count = Int(text), (1...10_000).contains(count) else {
                    errors.append(.init(parameter.name, "must be a whole number from 1 to 10000, not \"\(text)\""))
                    continue
                }
                arguments[parameter.name] = count
            case .customer, .order, .category, .product:
                arguments[parameter.name] = text
            }
        }
        if let from = arguments["from"] as? String, let to = arguments["to"] as? String, from > to {
            errors.append(.init("to", "must not be before from (\(from))"))
        }
        try errors.throwIfAny()
        return try read { db in
            var arguments = arguments
            try Self.checkReportSubjects(report, &arguments, db)
            let statement = try db.cachedStatement(sql: sql)
            let used = Set(statement.sql.matches(of: /:([a-z]+)/).map { String($0.1) })
            try statement.setArguments(StatementArguments(arguments.filter { used.contains($0.key) }))
            let names = statement.columnNames
            try columns(names)
            let money = Set(names.indices.filter { report.moneyColumns.contains(names[$0]) })
            let cursor = try Row.fetchCursor(statement)
            // Values straight from the statement: a Row subscript per value was most of the time of big reports.
            let sqlite = statement.sqliteStatement
            let readRow = {
                names.indices.map { index -> ReportValue in
                    switch DatabaseValue(sqliteStatement: sqlite, index: CInt(index)).storage {
                    case .null: .null
                    case let .int64(number): money.contains(index) ? .money(Money(cents: Int(number))) : .integer(number)
                    case let .double(number): .real(number)
                    case let .string(text): .text(text)
                    case .blob: .text("(binary)")
                    }
                }
            }
            while try cursor.next() != nil {
                if try !row(readRow) { break }
            }
            return ReportTable(report: report, parameters: values, columns: names, rows: [])
        }
    }

    /// A report about a customer, order or category that does not exist says so instead of returning nothing.
    /// A product given by name becomes its id.
    static func checkReportSubjects(
        _ report: ReportDefinition,
        _ arguments: inout [String: (any DatabaseValueConvertible)?],
        _ db: Database
    ) throws {
        for parameter in report.parameters {
            guard let value = arguments[parameter.name] as? String else { continue }
            if parameter.kind == .product {
                let ids = try Int64.fetchAll(
                    db,
                    sql: "SELECT id FROM products WHERE id = ? OR name = ? COLLATE NOCASE LIMIT 2",
                    arguments: [Int64(value), value]
                )
                guard let id = ids.first else { throw NorthwindError.notFound(entity: "product", key: value) }
                if ids.count > 1 {
                    throw NorthwindError.invalid(parameter.name, "matches more than one product; give the product's id")
                }
                arguments[parameter.name] = id
                continue
            }
            let (table, column, entity) =
                switch parameter.kind {
                case .customer: ("customers", "code", "customer")
                case .order: ("orders", "number", "order")
                case .category: ("categories", "name", "category")
                case .year, .date, .count, .product: ("", "", "")
                }
            guard !table.isEmpty else { continue }
            let exists =
                try Bool.fetchOne(
                    db,
                    sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(column) = ? COLLATE NOCASE)",
                    arguments: [value]
                ) ?? false
            if !exists { throw NorthwindError.notFound(entity: entity, key: value) }
        }
    }
}
