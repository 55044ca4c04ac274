import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

@main
struct NorthwindCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "northwind",
        abstract: "Run a Northwind trading company's shops and warehouses from the command line.",
        discussion: """
            The store is a SQLite file: --store PATH, else $NORTHWIND_STORE, else \
            $XDG_DATA_HOME/northwind/northwind.sqlite. First use creates it and fills it with demo data \
            (--empty skips that). --sql-debug or NORTHWIND_SQL_DEBUG=1 logs every SQL statement to stderr.
            """,
        subcommands: [
            ProductsCommand.self, OrdersCommand.self,
            CategoriesCommand.self, CustomersCommand.self, EmployeesCommand.self, SuppliersCommand.self,
            ShippersCommand.self, TransfersCommand.self, ReportCommand.self, ServeCommand.self, SyncCommand.self, ImportCommand.self,
            SeedCommand.self, SettingsCommand.self,
        ]
    )
}

/// Options every command that touches a store shares.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The store file (default: $NORTHWIND_STORE, else the XDG data directory).")
    var store: String?

    @Flag(name: .long, help: "Print every SQL statement and its duration to stderr.")
    var sqlDebug = false

    @Flag(name: .long, help: "Do not fill a newly created store with demo data.")
    var empty = false

    var configuration: StoreConfiguration {
        let environment = ProcessInfo.processInfo.environment
        return StoreConfiguration(
            path: StoreConfiguration.resolvePath(explicit: store, environment: environment),
            sqlDebug: sqlDebug || StoreConfiguration.sqlDebugRequested(environment: environment)
        )
    }

    func open(seedIfCreated: Bool = true) throws -> Backoffice {
        try Backoffice.open(configuration, seedIfCreated: seedIfCreated && !empty)
    }
}

struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}

/// Prints a value as sorted, pretty JSON on stdout.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// "Showing 1–50 of 77" under a paged table.
func pageFooter<T>(_ page: Page<T>) -> String {
    guard page.total > 0 else { return "No matches." }
    let last = page.offset + page.items.count
    return last == page.total && page.offset == 0 ? "\(page.total) in all." : "Showing \(page.offset + 1)–\(last) of \(page.total)."
}

extension LocalDate: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

extension Money: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

extension OrderStatus: ExpressibleByArgument {}
extension ProductQuery.Sort: ExpressibleByArgument {}

func text(_ value: String?) -> String { value ?? "" }
