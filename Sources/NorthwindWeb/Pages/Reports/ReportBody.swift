import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// A report's parameters as the query string gives them: only the report's own, blank ones left out.
func reportParameters(_ request: Request, _ report: ReportDefinition) -> [String: String] {
    var values: [String: String] = [:]
    for parameter in report.parameters {
        if let value = request.query(parameter.name), !value.trimmingCharacters(in: .whitespaces).isEmpty {
            values[parameter.name] = value
        }
    }
    return values
}

func findReport(_ context: WebContext) throws -> ReportDefinition {
    let name = try context.pathString("name")
    guard let report = ReportDefinition.named(name) else { throw NorthwindError.notFound(entity: "report", key: name) }
    return report
}

/// The `Report` schema of openapi.yaml, ours rather than generated: a cell is text, a number or null, which the
/// generator cannot type. A page of a report's answer: money columns hold decimal strings, like every amount in the API. `complete` is
/// false when rows follow, and `next` then reads the next page.
struct ReportBody: Encodable, Hashable, Sendable {
    var report: ReportSummaryBody
    var parameters: [String: String]
    var columns: [String]
    var moneyColumns: [String]
    var rows: [[ReportValue]]
    var offset: Int
    var limit: Int
    var complete: Bool
    var next: String?

    init(_ table: ReportTable, offset: Int, limit: Int) {
        report = ReportSummaryBody(table.report)
        (parameters, columns, rows) = (table.parameters, table.columns, table.rows)
        moneyColumns = table.columns.filter { table.report.moneyColumns.contains($0) }
        (self.offset, self.limit, complete) = (offset, limit, table.isComplete)
        if !table.isComplete {
            let query =
                table.parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
                + [("offset", String(offset + limit)), ("limit", String(limit))]
            next =
                "/api/v1/reports/\(table.report.name)?"
                + query.map {
                    "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
                }.joined(separator: "&")
        }
    }
}
