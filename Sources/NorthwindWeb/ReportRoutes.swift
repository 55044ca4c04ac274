import Foundation
import Hummingbird
import Northwind

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

struct ReportParameterBody: Encodable, Sendable {
    var name: String
    var kind: String
    var required: Bool
    var defaultValue: String?
    var help: String
}

struct ReportSummaryBody: ResponseEncodable, Sendable {
    var name: String
    var original: String
    var summary: String
    var parameters: [ReportParameterBody]

    init(_ report: ReportDefinition) {
        (name, original, summary) = (report.name, report.original, report.summary)
        parameters = report.parameters.map {
            ReportParameterBody(name: $0.name, kind: $0.kind.rawValue, required: $0.isRequired, defaultValue: $0.defaultValue, help: $0.help)
        }
    }
}

/// A report's answer: money columns hold decimal strings, like every amount in the API.
struct ReportBody: ResponseEncodable, Sendable {
    var report: ReportSummaryBody
    var parameters: [String: String]
    var columns: [String]
    var moneyColumns: [String]
    var rows: [[ReportValue]]

    init(_ table: ReportTable) {
        report = ReportSummaryBody(table.report)
        (parameters, columns, rows) = (table.parameters, table.columns, table.rows)
        moneyColumns = table.columns.filter { table.report.moneyColumns.contains($0) }
    }
}

extension APIRoutes {
    /// Reports are for managers, as the brief has it: sales figures are not for every till.
    func registerReports(on v1: RouterGroup<WebContext>) {
        v1.get("reports") { _, context in
            _ = try context.requireManager(policy, to: "read reports")
            return Items(items: ReportDefinition.catalogue.map(ReportSummaryBody.init))
        }
        v1.get("reports/:name") { request, context in
            _ = try context.requireManager(policy, to: "read reports")
            let report = try findReport(context)
            return ReportBody(try backoffice.runReport(report.name, parameters: reportParameters(request, report)))
        }
    }
}
