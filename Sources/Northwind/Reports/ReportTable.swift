import Foundation
import GRDB
import NorthwindStore

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
    /// A chart that sums one money column by one label column over every row, for a report whose rows break a
    /// figure down further than a chart can show (by location and category, by order); nil for the usual rule.
    public var chartSum: ChartSum? = nil

    /// The report's SQL, with its parameters as `:name`: for tools that run it without this layer, such as the bench.
    public var sql: String? { ReportQueries.all[query] }
}

/// `value` summed by `label`, both column names.
public struct ChartSum: Sendable, Hashable, Codable {
    public var label: String
    public var value: String
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
