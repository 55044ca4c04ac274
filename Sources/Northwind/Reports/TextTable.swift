import Foundation
import NorthwindStore

/// A plain-text table, numbers right-aligned and everything else left-aligned: how the CLI and the bench print
/// tables, as `ReportTable.csv` is how downloads do.
public struct TextTable: Sendable {
    public var headers: [String]
    public var rows: [[String]] = []

    public init(_ headers: String...) { self.headers = headers }
    public init(headers: [String]) { self.headers = headers }

    public mutating func add(_ cells: String...) { rows.append(cells) }

    public func render() -> String {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        let numeric = headers.indices.map { column in
            !rows.isEmpty
                && rows.allSatisfy { row in
                    let cell = row[column]
                    return cell.isEmpty || cell.allSatisfy { $0.isNumber || $0 == "." || $0 == "-" || $0 == "," }
                }
        }
        func line(_ cells: [String]) -> String {
            cells.indices.map { column in
                let padding = String(repeating: " ", count: widths[column] - cells[column].count)
                return numeric[column] ? padding + cells[column] : cells[column] + padding
            }.joined(separator: "  ").replacing(/\s+$/, with: "")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(headers), rule] + rows.map(line)).joined(separator: "\n")
    }
}
