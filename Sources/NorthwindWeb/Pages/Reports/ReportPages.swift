import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// The list of reports.
struct ReportsPage: PageModel {
    struct Row {
        var name: String
        var title: String
        var summary: String
        var original: String
        var parameterText: String
    }
    var reports: [Row]
    var me: PageUser?
}

/// One report: its parameter form, a chart where one helps, and the first rows of its table.
struct ReportPage: PageModel {
    struct Parameter {
        var name: String
        var label: String
        var inputType: String
        var value: String
        var placeholder: String?
        var error: String?
    }
    struct Column {
        var name: String
        var numeric: Bool
    }
    struct Cell {
        var text: String
        var label: String
        var numeric: Bool
    }
    struct Row {
        var cells: [Cell]
    }
    var name: String
    var title: String
    var summary: String
    var original: String
    var hasParameters: Bool
    var parameters: [Parameter]
    var problem: String?
    var hasTable: Bool
    var columns: [Column] = []
    var rows: [Row] = []
    var rowText: String?
    var truncated = false
    var shown = 0
    var csvHref: String?
    var chart: ReportChart.View?
    var me: PageUser?
}

/// The Reports section: a page per report with its parameter form, a chart where one helps, the table, and CSV.
extension PageRoutes {
    /// A report's cell as its reader writes amounts; other values as they are.
    static func shown(_ value: ReportValue) -> String {
        if case .money(let money) = value { return money.shown }
        return value.description
    }

    /// Longer reports show their first rows; the CSV download has them all.
    static let reportRowLimit = 500

    func registerReports(on pages: RouterGroup<WebContext>) {
        pages.get("reports", use: reports)
        pages.get("reports/:name", use: report)
        pages.get("reports/:name/csv", use: reportCSV)
    }

    @Sendable func reports(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "read reports")
        let reports = ReportDefinition.catalogue.map { report in
            ReportsPage.Row(
                name: report.name,
                title: Self.title(report),
                summary: report.summary,
                original: report.original,
                parameterText: report.parameters.isEmpty ? "nothing" : report.parameters.map(\.name).joined(separator: ", ")
            )
        }
        return render("reports", ReportsPage(reports: reports), context: context)
    }

    @Sendable func report(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "read reports")
        let report = try findReport(context)
        let given = reportParameters(request, report)
        var fieldErrors: [String: String] = [:]
        var problem: String?
        var table: ReportTable?
        do {
            // Only a chart of per-period totals needs every row; otherwise read what the page shows, plus one to
            // know there is more. Invoices' page costs milliseconds instead of a second.
            table = try await backoffice.reports.run(
                report.name,
                parameters: given,
                limit: ReportChart.chartsEveryRow(report) ? nil : Self.reportRowLimit
            )
        } catch {
            switch error {
            case let .invalid(errors):
                for error in errors { fieldErrors[error.field] = error.message.prefix(1).uppercased() + error.message.dropFirst() }
            case let .notFound(entity, _) where report.parameters.contains(where: { $0.name == entity }):
                fieldErrors[entity] = error.description
            default:
                problem = error.description
            }
        }
        var model = ReportPage(
            name: report.name,
            title: Self.title(report),
            summary: report.summary,
            original: report.original,
            hasParameters: !report.parameters.isEmpty,
            parameters: report.parameters.map { parameter in
                ReportPage.Parameter(
                    name: parameter.name,
                    label: parameter.name.prefix(1).uppercased() + parameter.name.dropFirst(),
                    inputType: parameter.kind == .date ? "date" : [.year, .count].contains(parameter.kind) ? "number" : "text",
                    value: given[parameter.name] ?? parameter.defaultValue ?? "",
                    placeholder: parameter.help,
                    error: fieldErrors[parameter.name]
                )
            },
            problem: problem,
            hasTable: table != nil
        )
        if let table {
            let shown = table.rows.prefix(Self.reportRowLimit)
            let numeric = table.columns.indices.map { column in
                table.isMoney(column)
                    || table.rows.allSatisfy {
                        switch $0[column] {
                        case .integer, .real, .money, .null: true
                        case .text: false
                        }
                    }
            }
            model.columns = table.columns.indices.map { ReportPage.Column(name: table.columns[$0], numeric: numeric[$0]) }
            model.rows = shown.map { row in
                ReportPage.Row(cells: row.indices.map { ReportPage.Cell(text: Self.shown(row[$0]), label: table.columns[$0], numeric: numeric[$0]) })
            }
            model.rowText =
                !table.isComplete
                ? "More than \(shown.count) rows"
                : table.rows.count == 1 ? "1 row" : "\(table.rows.count) rows"
            model.truncated = !table.isComplete || table.rows.count > shown.count
            model.shown = shown.count
            let query = table.parameters.sorted { $0.key < $1.key }
                .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            model.csvHref = "/reports/\(report.name)/csv" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            model.chart = ReportChart(table)?.view
        }
        let status: HTTPResponse.Status = fieldErrors.isEmpty && problem == nil ? .ok : .unprocessableContent
        return render("report", model, status: status, context: context)
    }

    @Sendable func reportCSV(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "read reports")
        let report = try findReport(context)
        return try await ReportDownload.csv(backoffice, report: report, parameters: reportParameters(request, report))
    }

    /// "category-sales-for-1997" → "Category sales for 1997"; procedures keep their own names.
    static func title(_ report: ReportDefinition) -> String {
        let original = report.original.split(separator: "\"").dropFirst().first.map(String.init) ?? report.name
        return original.prefix(1).uppercased() + original.dropFirst()
    }
}

/// A horizontal bar chart, as numbers for an SVG template: the markup stays in `report.mustache`, escaped.
/// Category breakdowns chart their label against their money column; the sales summaries chart totals per year or
/// quarter of the shipped date.
struct ReportChart {
    var title: String
    var bars: [(label: String, cents: Int)]

    static let maxBars = 30

    /// The sales summaries chart totals per period over all their rows.
    static func chartsEveryRow(_ report: ReportDefinition) -> Bool {
        report.name.hasPrefix("summary-of-sales") || report.name == "sales-by-year" || report.chartSum != nil
    }

    init(title: String, bars: [(label: String, cents: Int)]) {
        self.title = title
        self.bars = bars
    }

    init?(_ table: ReportTable) {
        guard !table.rows.isEmpty, let money = table.columns.indices.last(where: table.isMoney) else { return nil }
        func cents(_ value: ReportValue) -> Int { if case let .money(amount) = value { amount.cents } else { 0 } }
        if let sum = table.report.chartSum {
            // Summed by label, largest first; "no cost" (text) counts nothing, and a chart of nothing is not drawn.
            guard let label = table.columns.firstIndex(of: sum.label), let value = table.columns.firstIndex(of: sum.value) else { return nil }
            var totals: [String: Int] = [:]
            for row in table.rows {
                totals[row[label].description, default: 0] = totals[row[label].description, default: 0].saturatingAdd(cents(row[value]))
            }
            guard totals.values.contains(where: { $0 != 0 }) else { return nil }
            bars = totals.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ($0.key, $0.value) }
            title = "\(sum.value) by \(sum.label)"
        } else if let shipped = table.columns.firstIndex(of: "ShippedDate"), Self.chartsEveryRow(table.report) {
            let byQuarter = table.report.name.hasSuffix("quarter")
            var totals: [String: Int] = [:]
            for row in table.rows {
                let day = row[shipped].description
                guard day.count >= 7, let month = Int(day.dropFirst(5).prefix(2)) else { continue }
                let period = byQuarter ? "\(day.prefix(4)) Q\((month - 1) / 3 + 1)" : String(day.prefix(4))
                totals[period, default: 0] = totals[period, default: 0].saturatingAdd(cents(row[money]))
            }
            bars = totals.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            title = "\(table.columns[money]) per \(byQuarter ? "quarter" : "year") shipped"
        } else {
            let texts = table.columns.indices.filter { column in
                table.rows.allSatisfy { if case .text = $0[column] { true } else { false } }
            }
            guard texts.count == 1, let label = texts.first, table.rows.count <= Self.maxBars else { return nil }
            bars = table.rows.map { ($0[label].description, cents($0[money])) }
            title = "\(table.columns[money]) by \(table.columns[label])"
        }
        guard !bars.isEmpty, bars.count <= Self.maxBars else { return nil }
    }

    /// The chart as its template draws it: every position computed here, so the SVG template only places them.
    struct View {
        struct Bar {
            var label: String
            var value: String
            var labelX: Int
            var x: Int
            var y: Int
            var barWidth: Int
            var barHeight: Int
            var textY: Int
            var valueX: Int
        }
        var title: String
        var width: Int
        var height: Int
        var bars: [Bar]
    }

    var view: View {
        let (labelWidth, barArea, rowHeight) = (190, 380, 26)
        let largest = max(1, bars.map(\.cents).max() ?? 1)
        return View(
            title: title,
            width: labelWidth + barArea + 110,
            height: bars.count * rowHeight + 8,
            bars: bars.enumerated().map { index, bar in
                // In Double: a saturated amount times the bar area would trap in Int.
                let width = max(1, Int(Double(bar.cents) * Double(barArea) / Double(largest)))
                let y = index * rowHeight + 4
                return View.Bar(
                    label: bar.label,
                    value: Money(cents: bar.cents).shown,
                    labelX: labelWidth - 8,
                    x: labelWidth,
                    y: y,
                    barWidth: width,
                    barHeight: rowHeight - 8,
                    textY: y + rowHeight / 2 + 1,
                    valueX: labelWidth + width + 6
                )
            }
        )
    }
}
