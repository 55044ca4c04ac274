import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

struct SeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Fill the store with generated demo data, the same for the same options."
    )
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "Multiply the classic row counts by N (scale 1: 77 products, about 830 orders).") var scale = 1
    @Option(help: "The random seed.") var seed: UInt64 = 1
    @Option(help: "The last day of the three years of orders (default today).") var endDate: LocalDate?
    @Flag(help: "Clear a store that already holds data.") var replace = false

    func validate() throws {
        if !(1...10_000).contains(scale) { throw ValidationError("--scale must be between 1 and 10000.") }
        // Employees are born up to 70 years before it, and every date must be a year of four digits.
        if let endDate, !(1900...9000).contains(endDate.year) {
            throw ValidationError("--end-date must be in a year from 1900 to 9000, not \(endDate).")
        }
    }

    func run() async throws {
        let backoffice = try await storeOptions.open(seedIfCreated: false)
        let summary = try DemoData.seed(
            into: backoffice.store,
            options: .init(scale: scale, seed: seed, endDate: endDate ?? .today, replace: replace)
        )
        if output.json { return try printJSON(summary) }
        var table = TextTable("Table", "Rows")
        for count in summary.counts { table.add(count.table, String(count.rows)) }
        print(table.render())
        print(String(format: "Seeded %@ in %.1f s.", backoffice.store.configuration.path, summary.seconds))
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load the classic Northwind from Microsoft's T-SQL script, the SQLite or PostgreSQL script, or a SQLite database file.",
        discussion: "All or nothing: a bad file changes nothing, and a store that holds data is refused unless --replace is given."
    )
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "The file to import.") var file: String
    @Flag(help: "Replace whatever the store holds.") var replace = false

    func run() async throws {
        let backoffice = try await storeOptions.open(seedIfCreated: false)
        let report = try ClassicImporter.importFile(atPath: file, into: backoffice.store, replace: replace)
        if output.json { return try printJSON(report) }
        var table = TextTable("Table", "Rows")
        for count in report.counts { table.add(count.table, String(count.rows)) }
        print(table.render())
        print("Imported \(file) (\(report.format)) into \(backoffice.store.configuration.path).")
    }
}
