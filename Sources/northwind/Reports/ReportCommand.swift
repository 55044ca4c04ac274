import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindWeb

struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Run a report: the classic Northwind views and procedures, or a manager's report.",
        discussion: """
            `northwind report list` names them, with what each reproduces and its parameters. Then, for example:
              northwind report category-sales-for-1997 --year 1997
              northwind report employee-sales-by-country --from 1996-07-01 --to 1996-07-31 --format csv
              northwind report cust-order-hist --customer ALFKI --format json
              northwind report order-backlog
              northwind report top-customers --from 2026-01-01 --top 5
            Money is exact and computed as SQL Server computes it; dates are yyyy-MM-dd and ranges include their last day.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json
    }

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "A report's name, or `list`.") var name: String
    @Option(help: "table, csv or json.") var format: Format = .table
    @Flag(name: .long, help: "With `list`: print JSON.") var json = false
    @Flag(name: .long, help: "Print how long the report took on stderr: to compute, or with csv to compute and write.") var timing = false
    @Argument(parsing: .allUnrecognized, help: "The report's parameters, e.g. --year 1997 or --customer ALFKI.")
    var parameters: [String] = []

    func run() async throws {
        if name == "list" {
            try list()
            return
        }
        let backoffice = try await storeOptions.open()
        let parameters = try Self.parse(parameters)
        let start = ContinuousClock.now
        func printTiming(_ rows: Int) {
            guard timing else { return }
            let elapsed = (ContinuousClock.now - start).formatted(.units(allowed: [.milliseconds], fractionalPart: .show(length: 1)))
            let name = ReportDefinition.named(name)?.name ?? name
            FileHandle.standardError.write(Data("\(name): \(rows) rows in \(elapsed)\(format == .csv ? ", written" : "")\n".utf8))
        }
        if format == .csv {
            // Written as read: a listing of every order line never sits in memory whole.
            var output: [UInt8] = []
            var rows = 0
            try backoffice.reports.stream(name, parameters: parameters) { columns in
                ReportTable.appendCSV(columns.map(ReportValue.text), to: &output)
            } row: { values in
                ReportTable.appendCSV(values, to: &output)
                rows += 1
                if output.count >= 64 * 1024 {
                    FileHandle.standardOutput.write(Data(output))
                    output.removeAll(keepingCapacity: true)
                }
            }
            FileHandle.standardOutput.write(Data(output))
            return printTiming(rows)
        }
        let table = try await backoffice.reports.run(name, parameters: parameters)
        printTiming(table.rows.count)
        switch format {
        case .table:
            var text = TextTable(headers: table.columns)
            for row in table.rows { text.rows.append(row.map(\.description)) }
            print(text.render())
            print(table.rows.count == 1 ? "1 row." : "\(table.rows.count) rows.")
        case .csv:
            break
        case .json:
            try printJSON(table.rows.map { Dictionary(uniqueKeysWithValues: zip(table.columns, $0)) })
        }
    }

    func list() throws {
        let catalogue = ReportDefinition.catalogue
        if json || format == .json {
            try printJSON(Wire.reports(catalogue))
            return
        }
        var text = TextTable("Report", "Reproduces", "Parameters")
        for report in catalogue {
            let parameters = report.parameters.map { "--\($0.name)" + ($0.defaultValue.map { " (default \($0))" } ?? "") }
            text.add(report.name, report.original, parameters.joined(separator: ", "))
        }
        print(text.render())
    }

    /// `--year 1997 --customer=ALFKI` → ["year": "1997", "customer": "ALFKI"].
    static func parse(_ arguments: [String]) throws -> [String: String] {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ValidationError("Expected a parameter such as --year 1997, not \"\(argument)\".")
            }
            let name = String(argument.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                values[String(name[..<equals])] = String(name[name.index(after: equals)...])
            } else {
                guard index + 1 < arguments.count else { throw ValidationError("--\(name) needs a value.") }
                values[name] = arguments[index + 1]
                index += 1
            }
            index += 1
        }
        return values
    }
}
