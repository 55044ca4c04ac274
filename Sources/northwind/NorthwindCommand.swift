import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import ServerOperations

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
            ProductsCommand.self, OrdersCommand.self, ShipmentsCommand.self, InvoicesCommand.self, ReturnsCommand.self, PurchasesCommand.self,
            CategoriesCommand.self, CustomersCommand.self, EmployeesCommand.self, SuppliersCommand.self,
            ShippersCommand.self, TransfersCommand.self, ReportCommand.self, ServeCommand.self, SyncCommand.self, ImportCommand.self,
            SeedCommand.self, SettingsCommand.self, BackupCommand.self, QuotesCommand.self, DocumentsCommand.self, SetupCommand.self,
        ]
    )

    /// A release build refuses the fault tests' switches before anything else (`TestSwitches`).
    static func main() async {
        TestSwitches.refuseUnlessCompiledIn()
        await main(nil)
    }
}

/// Options every command that touches a store shares.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The store file (default: $NORTHWIND_STORE, else the XDG data directory).")
    var store: String?

    @Flag(name: .long, help: "Print every SQL statement and its duration to stderr.")
    var sqlDebug = false

    @Flag(name: .long, help: "Do not fill a newly created store with demo data.")
    var empty = false

    /// The store, opened where the settings say (`--store`, else `NORTHWIND_STORE_PATH`, else the settings file's
    /// `store.path`, else the data folder), with the settings the domain's rules read.
    func open(seedIfCreated: Bool = true) async throws -> Backoffice {
        try await open(SettingsOptions.sources(), seedIfCreated: seedIfCreated).0
    }

    /// The store the settings name (`store.path`, `log.sqlDebug`), opened, and the settings over it; `sources` gain
    /// this command's `--store` and `--sql-debug`. A value passed over for breaking a rule is said on stderr.
    func open(_ sources: SettingsSources, seedIfCreated: Bool = true) async throws -> (Backoffice, Settings) {
        let (configuration, settings) = try await locate(sources)
        try Self.refuseRootOnAnotherUsersStore(configuration.path)
        let isNew = !FileManager.default.fileExists(atPath: configuration.path)
        let backoffice = try Backoffice.open(configuration, seedIfCreated: seedIfCreated && !empty)
        // A store made now is made during its machine's first boot, as far as the first-run page knows: the page
        // answers the network until the machine restarts. A store found without that record (an older version's, or
        // one whose record a power cut lost) stays closed to the network until `northwind setup reopen`.
        if isNew, let boot = FirstRunMachine.bootID() { try await backoffice.setup.open(boot: boot) }
        try await settings.reload(from: backoffice)
        return (backoffice, settings)
    }

    /// Root opening a service's store would leave files (the write-ahead log, backups) the service cannot write;
    /// root making one in a service's folder would leave a store the service cannot open.
    static func refuseRootOnAnotherUsersStore(_ path: String) throws {
        guard geteuid() == 0 else { return }
        if let owner = (try? FileManager.default.attributesOfItem(atPath: path))?[.ownerAccountName] as? String, owner != "root" {
            throw ValidationError("The store \(path) belongs to \(owner); run this as its owner, such as `sudo -u \(owner) northwind …`.")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: path),
            let owner = (try? FileManager.default.attributesOfItem(atPath: folder))?[.ownerAccountName] as? String, owner != "root"
        {
            throw ValidationError(
                "There is no store at \(path) yet, and its folder belongs to \(owner): run this as \(owner), such as `sudo -u \(owner) northwind …`, so that \(owner) can open the store it makes."
            )
        }
    }

    /// Where the store is, without opening it, and the settings that do not live in it (a restore must not create
    /// the store it is about to replace).
    func locate(_ sources: SettingsSources) async throws -> (StoreConfiguration, Settings) {
        var sources = sources
        if let store { sources.commandLine["store.path"] = store }
        if sqlDebug { sources.commandLine["log.sqlDebug"] = "true" }
        let warn: @Sendable (String) -> Void = { FileHandle.standardError.write(Data(("warning: " + $0 + "\n").utf8)) }
        let settings = try await Settings(sources: sources, backoffice: nil, warn: warn)
        let path = try settings.value("store.path").value
        // Empty: the data folder's default (the environment's NORTHWIND_STORE is in `path` already).
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "NORTHWIND_STORE" }
        let configuration = StoreConfiguration(
            path: path.isEmpty ? StoreConfiguration.resolvePath(explicit: nil, environment: environment) : path,
            sqlDebug: try settings.value("log.sqlDebug").value == "true"
        )
        return (configuration, settings)
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

/// PRODUCT:QUANTITY, e.g. 11:40: a line of a receipt or a shipment.
struct ProductQuantity: ExpressibleByArgument {
    var productID: Int64
    var quantity: Int
    init?(argument: String) {
        let parts = argument.split(separator: ":")
        guard parts.count == 2, let product = Int64(parts[0]), let quantity = Int(parts[1]) else { return nil }
        (self.productID, self.quantity) = (product, quantity)
    }
}
