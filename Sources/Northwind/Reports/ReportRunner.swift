import Foundation
import GRDB
import NorthwindStore

/// The statements of `Reports/reports.sql`, by their `-- name:` key.
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

extension Reports {
    /// Runs a report. `parameters` are the report's parameters as text, by name; absent ones take their default.
    /// Values are checked first, so a mistake gets a message naming the parameter rather than an empty table.
    /// With a `limit`, reading stops there: a screen of the 215k-line listings costs milliseconds, not seconds.
    /// An `offset` skips rows first; each page runs the query again, so reading every row is `reports.stream`'s job.
    public func run(
        _ name: String,
        parameters given: [String: String] = [:],
        limit: Int? = nil,
        offset: Int = 0
    ) async throws(NorthwindError) -> ReportTable {
        let prepared = try prepareReport(name, parameters: given)
        return try await read { db in
            var rows: [[ReportValue]] = []
            var isComplete = true
            var skipped = 0
            var table = try Self.scan(prepared, db) { _ in
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
    }

    /// Runs a report and hands over its rows one at a time as they are read, in one read transaction, so a download
    /// of every row holds one row in memory, not the table. `columns` comes first, once; a parameter mistake is thrown
    /// before it. An error thrown by either closure stops the reading.
    public func stream(
        _ name: String,
        parameters given: [String: String] = [:],
        columns: ([String]) throws -> Void,
        row: ([ReportValue]) throws -> Void
    ) throws(NorthwindError) {
        let prepared = try prepareReport(name, parameters: given)
        do {
            // Synchronous on purpose: a download reads on a thread of its own, and its closures may block on a slow
            // client, so it reads on a connection of its own, not the pool's.
            _ = try store.longRead { db in
                try Self.scan(prepared, db, columns: columns) { values in
                    try row(values())
                    return true
                }
            }
        } catch {
            throw NorthwindError.translating(error)
        }
    }

    /// A report with its parameters checked and converted, ready to run.
    struct PreparedReport: Sendable {
        var report: ReportDefinition
        var sql: String
        var values: [String: String]
        var arguments: [String: DatabaseValue]
    }

    /// The one reading loop: `row` gets a reader of the current row's values (skipping costs no reading), and
    /// returns false to stop. Returns the report's table without rows.
    private static func scan(
        _ prepared: PreparedReport,
        _ db: Database,
        columns: ([String]) throws -> Void,
        row: (() -> [ReportValue]) throws -> Bool
    ) throws -> ReportTable {
        let (report, sql, values) = (prepared.report, prepared.sql, prepared.values)
        var arguments = prepared.arguments
        try Self.checkReportSubjects(report, &arguments, db)
        let statement = try db.cachedStatement(sql: sql)
        let used = Set(statement.sql.matches(of: /:([a-z]+)/).map { String($0.1) })
        try statement.setArguments(StatementArguments(arguments.filter { used.contains($0.key) }.mapValues { $0 as (any DatabaseValueConvertible)? }))
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

    /// A report about a customer, order or category that does not exist says so instead of returning nothing.
    /// A product given by name becomes its id.
    static func checkReportSubjects(
        _ report: ReportDefinition,
        _ arguments: inout [String: DatabaseValue],
        _ db: Database
    ) throws {
        for parameter in report.parameters {
            guard let value = arguments[parameter.name].flatMap(String.fromDatabaseValue) else { continue }
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
                arguments[parameter.name] = id.databaseValue
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

extension Reports {
    /// Checks the parameters without touching the store, so a mistake never costs a read.
    private func prepareReport(_ name: String, parameters given: [String: String]) throws(NorthwindError) -> PreparedReport {
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
        var arguments: [String: DatabaseValue] = [:]
        for parameter in report.parameters {
            guard let text = clean(given[parameter.name]) ?? parameter.defaultValue else {
                let help = parameter.help.prefix(1).lowercased() + parameter.help.dropFirst().dropLast()
                errors.append(.init(parameter.name, "is required (\(help))"))
                continue
            }
            values[parameter.name] = text
            if text.isEmpty {
                arguments[parameter.name] = .null
                continue
            }
            switch parameter.kind {
            case .year:
                guard let year = Int(text), (1753...9999).contains(year) else {
                    errors.append(.init(parameter.name, "must be a year such as 1997, not \"\(text)\""))
                    continue
                }
                arguments[parameter.name] = year.databaseValue
            case .date:
                guard let day = LocalDate(text) else {
                    errors.append(.init(parameter.name, "must be a date written yyyy-MM-dd, such as 1996-07-04, not \"\(text)\""))
                    continue
                }
                arguments[parameter.name] = day.description.databaseValue
            case .count:
                guard let count = Int(text), (1...10_000).contains(count) else {
                    errors.append(.init(parameter.name, "must be a whole number from 1 to 10000, not \"\(text)\""))
                    continue
                }
                arguments[parameter.name] = count.databaseValue
            case .customer, .order, .category, .product:
                arguments[parameter.name] = text.databaseValue
            }
        }
        if let from = arguments["from"].flatMap(String.fromDatabaseValue), let to = arguments["to"].flatMap(String.fromDatabaseValue),
            from > to
        {
            errors.append(.init("to", "must not be before from (\(from))"))
        }
        try errors.throwIfAny()
        // The shop's low-stock margin (`stock.lowStockMargin`), for a query that names `:margin`; nobody passes it.
        arguments["margin"] = rules.lowStockMargin.databaseValue
        return Reports.PreparedReport(report: report, sql: sql, values: values, arguments: arguments)
    }
}
