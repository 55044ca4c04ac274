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

/// A report's parameter, as the API and `report list --json` describe it.
public struct ReportParameterBody: Encodable, Sendable {
    public var name: String
    public var kind: String
    public var required: Bool
    public var defaultValue: String?
    public var help: String
}

public struct ReportSummaryBody: ResponseEncodable, Sendable {
    public var name: String
    public var original: String
    public var summary: String
    public var parameters: [ReportParameterBody]

    public init(_ report: ReportDefinition) {
        (name, original, summary) = (report.name, report.original, report.summary)
        parameters = report.parameters.map {
            ReportParameterBody(name: $0.name, kind: $0.kind.rawValue, required: $0.isRequired, defaultValue: $0.defaultValue, help: $0.help)
        }
    }
}

/// A page of a report's answer: money columns hold decimal strings, like every amount in the API. `complete` is
/// false when rows follow, and `next` then reads the next page.
struct ReportBody: ResponseEncodable, Sendable {
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

extension APIRoutes {
    /// Reports are for managers, as the brief has it: sales figures are not for every till.
    func registerReports(on v1: RouterGroup<WebContext>) {
        v1.get("reports") { _, context in
            _ = try context.requireManager(policy, to: "read reports")
            return Items(items: ReportDefinition.catalogue.map(ReportSummaryBody.init))
        }
        // A page of rows as JSON (`limit`, `offset`), or every row as CSV (`format=csv`), sent as it is read.
        v1.get("reports/:name") { request, context -> Response in
            _ = try context.requireManager(policy, to: "read reports")
            let report = try findReport(context)
            let parameters = reportParameters(request, report)
            // Checked whatever the format: CSV sends every row, but a bad value is still a mistake to name.
            let (limit, offset) = try Self.reportPage(request)
            switch request.parameter("format") ?? "json" {
            case "csv":
                return try await ReportDownload.csv(backoffice, report: report, parameters: parameters)
            case "json":
                let table = try backoffice.runReport(report.name, parameters: parameters, limit: limit, offset: offset)
                return try ReportBody(table, offset: offset, limit: limit).response(from: request, context: context)
            case let other:
                throw NorthwindError.invalid([.init("format", "must be json or csv, not \"\(other)\"")])
            }
        }
    }

    static let reportPageLimit = 1000

    /// `limit` (1 to 10,000, default 1,000) and `offset` (default 0, at most `Limits.offset`).
    static func reportPage(_ request: Request) throws(NorthwindError) -> (limit: Int, offset: Int) {
        var errors: [NorthwindError.FieldError] = []
        let limit = request.wholeNumber("limit", in: 1...10_000, errors: &errors)
        let offset = request.wholeNumber("offset", in: Limits.offset, errors: &errors)
        try errors.throwIfAny()
        return (limit ?? reportPageLimit, offset ?? 0)
    }
}
