import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

/// Measures the domain layer against the bare SQLite C API doing the same work on the same file, in the same run.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "northwind-bench",
        abstract: "Measure search, lookup, list, order creation and execution, seeding and every report, against bare SQLite.",
        discussion:
            "Each scale is seeded into a temporary store that is removed afterwards. Figures: operations per second, p50 and p99 latency, and our rate as a share of bare SQLite's."
    )

    @Option(name: .customLong("scale"), help: "A scale to measure at (repeatable; default 1 and 1000).")
    var scales: [Int] = []
    @Option(help: "Repetitions of each read operation.") var reads = 2000
    @Option(help: "Repetitions of each write operation.") var writes = 300
    @Option(help: "Runs of each report (0 leaves the reports out).") var reportRuns = 3
    @Option(help: "Orders placed with no backup running, to compare with those placed during one (0 leaves backups out).")
    var backupWrites = 200
    @Option(help: "Keep the bench stores in this folder instead of a temporary one.") var directory: String?
    @Option(help: "Seconds per cell of the SQLite settings comparison under concurrent reads (0 leaves it out).")
    var settingsSeconds: Double = 0

    func validate() throws {
        if scales.contains(where: { !(1...10_000).contains($0) }) { throw ValidationError("--scale must be between 1 and 10000.") }
        if reads < 10 || writes < 10 { throw ValidationError("--reads and --writes must be at least 10.") }
        if reportRuns < 0 { throw ValidationError("--report-runs must not be negative.") }
        if backupWrites < 0 { throw ValidationError("--backup-writes must not be negative.") }
        if !(0...60).contains(settingsSeconds) { throw ValidationError("--settings-seconds must be between 0 and 60.") }
    }

    func run() async throws {
        let folder =
            directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("northwind-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
        print(
            "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)"
        )
        for scale in scales.isEmpty ? [1, 1000] : scales {
            var bench = Bench(scale: scale, folder: folder, reads: reads, writes: writes, reportRuns: reportRuns, backupWrites: backupWrites)
            try await bench.run()
            if settingsSeconds > 0 {
                let path = folder.appendingPathComponent("bench-\(scale).sqlite").path
                try SettingsBench(path: path, seconds: settingsSeconds, threadCounts: [2, 4]).run()
            }
        }
    }
}

/// Latencies of one operation, in nanoseconds.
struct Sample {
    var nanos: [UInt64] = []
    var total: UInt64 = 0

    mutating func time<T>(_ body: () async throws -> T) async rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try await body()
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        nanos.append(elapsed)
        total += elapsed
        return result
    }

    /// The same, for synchronous work; runs of each side alternate, so both meet the same state of the host.
    mutating func timeSync<T>(_ body: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        nanos.append(elapsed)
        total += elapsed
        return result
    }

    var maximum: Double { Double(nanos.max() ?? 0) / 1e6 }
    var opsPerSecond: Double { Double(nanos.count) / (Double(total) / 1e9) }
    func percentile(_ p: Double) -> Double {
        let sorted = nanos.sorted()
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
    }
}

struct Bench {
    let scale: Int
    let folder: URL
    let reads: Int
    let writes: Int
    let reportRuns: Int
    let backupWrites: Int
    var table = TextTable("Operation", "Ours ops/s", "p50 ms", "p99 ms", "Bare ops/s", "p50 ms", "p99 ms", "Ours/bare")

    init(scale: Int, folder: URL, reads: Int, writes: Int, reportRuns: Int, backupWrites: Int) {
        (self.scale, self.folder, self.reads, self.writes, self.reportRuns) = (scale, folder, reads, writes, reportRuns)
        self.backupWrites = backupWrites
    }

    mutating func report(_ name: String, _ ours: Sample, _ bare: Sample) {
        func f(_ x: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", x) }
        table.add(
            name,
            f(ours.opsPerSecond, 0),
            f(ours.percentile(0.5)),
            f(ours.percentile(0.99)),
            f(bare.opsPerSecond, 0),
            f(bare.percentile(0.5)),
            f(bare.percentile(0.99)),
            "\(f(100 * ours.opsPerSecond / bare.opsPerSecond, 0))%"
        )
    }

    mutating func run() async throws {
        print("\n== Scale \(scale) ==")
        let path = folder.appendingPathComponent("bench-\(scale).sqlite").path
        let barePath = folder.appendingPathComponent("bench-\(scale)-bare.sqlite").path
        for file in [path, barePath] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        }

        let backoffice = try seedBoth(path: path, barePath: barePath)
        let bare = try BareSQLite(path: path)
        try await benchReads(backoffice, bare)
        let order = try await benchWrites(backoffice, bare)
        print(table.render())
        if reportRuns > 0 { try await reports(backoffice, bare) }
        if backupWrites > 0 {
            try await BackupBench(backoffice: backoffice, path: path, folder: folder, writes: backupWrites, order: order).run()
        }
    }

    /// Seeding: our generator through GRDB against the same row shapes through the C API.
    func seedBoth(path: String, barePath: String) throws -> Backoffice {
        let backoffice = try Backoffice.open(StoreConfiguration(path: path), seedIfCreated: false)
        let summary = try DemoData.seed(
            into: backoffice.store,
            options: .init(scale: scale, seed: 42, endDate: LocalDate(year: 2026, month: 6, day: 30) ?? .today)
        )
        let seededRows = summary.counts.reduce(0) { $0 + $1.rows }
        _ = try Backoffice.open(StoreConfiguration(path: barePath), seedIfCreated: false)
        let (bareSeconds, bareRows) = try BareSeeder.seed(path: barePath, scale: scale)
        let bareRate = Double(bareRows) / bareSeconds
        let ourRate = Double(seededRows) / summary.seconds
        print(
            String(
                format: "Seeding: ours %d rows in %.1f s (%.0f rows/s), bare %d rows in %.1f s (%.0f rows/s), ours/bare %.0f%%",
                seededRows,
                summary.seconds,
                ourRate,
                bareRows,
                bareSeconds,
                bareRate,
                100 * ourRate / bareRate
            )
        )

        return backoffice
    }

    /// Search, lookup, a setting and a list page, ours against the same SQL through the C API.
    mutating func benchReads(_ backoffice: Backoffice, _ bare: BareSQLite) async throws {
        let productCount = Int(try bare.run("SELECT count(*) FROM products")[0][0] as? Int64 ?? 1)
        let terms = ["cote", "pât", "saumon fu", "chocolat", "crème", "jam", "earl grey", "moutarde", "kr", "tomates sé"]
        let searchSQL = Catalogue.searchSQL
        var ours = Sample()
        var raw = Sample()
        for i in 0..<reads {
            _ = try await ours.time { try backoffice.catalogue.search(terms[i % terms.count]) }
        }
        for i in 0..<reads {
            let pattern = terms[i % terms.count].split(separator: " ").map { "\"\($0)\"*" }.joined(separator: " ")
            _ = try await raw.time { try bare.run(searchSQL, pattern, Catalogue.searchCandidates(20), 20) }
        }
        report("product search", ours, raw)

        let lookupSQL = """
            SELECT products.*, categories.name AS categoryName, suppliers.companyName AS supplierName
            FROM products LEFT JOIN categories ON categories.id = products.categoryID
            LEFT JOIN suppliers ON suppliers.id = products.supplierID WHERE products.id = ?
            """
        (ours, raw) = (Sample(), Sample())
        for i in 0..<reads { _ = try await ours.time { try backoffice.catalogue.product(id: Int64(1 + (i * 7919) % productCount)) } }
        for i in 0..<reads { _ = try await raw.time { try bare.run(lookupSQL, 1 + (i * 7919) % productCount) } }
        report("product lookup", ours, raw)

        // A setting as a page reads it (a handful per request): through every layer, held in memory, against the
        // stored value read with the C API.
        try await backoffice.settings.set("pages.pageSize", "40")
        let settings = try await Settings(sources: SettingsSources(), backoffice: backoffice)
        let settingSQL = "SELECT value FROM settings WHERE key = ?"
        (ours, raw) = (Sample(), Sample())
        for _ in 0..<reads { _ = try ours.timeSync { try settings.value("pages.pageSize") } }
        for _ in 0..<reads { _ = try raw.timeSync { try bare.run(settingSQL, "pages.pageSize") } }
        report("setting read (pages.pageSize, stored)", ours, raw)

        let pageSQL = """
            SELECT products.*, categories.name AS categoryName, suppliers.companyName AS supplierName
            FROM products LEFT JOIN categories ON categories.id = products.categoryID
            LEFT JOIN suppliers ON suppliers.id = products.supplierID ORDER BY products.name, products.id LIMIT 50 OFFSET ?
            """
        (ours, raw) = (Sample(), Sample())
        // The first hundred pages, as people browse: a deep OFFSET costs the same walk on both sides and would
        // only measure SQLite.
        let pages = min(100, max(1, productCount / 50))
        for i in 0..<reads {
            var query = ProductQuery()
            query.offset = (i % pages) * 50
            _ = try await ours.time { try await backoffice.catalogue.list(query) }
        }
        for i in 0..<reads {
            _ = try await raw.time {
                _ = try bare.run("SELECT count(*) FROM products")
                return try bare.run(pageSQL, (i % pages) * 50)
            }
        }
        report("product list page (50, with category)", ours, raw)

    }

    /// A three-line order for a customer, then its execution, on products stocked up for the purpose. Returns how
    /// the i-th order is drafted, for the backup bench.
    mutating func benchWrites(_ backoffice: Backoffice, _ bare: BareSQLite) async throws -> (Int) -> OrderDraft {
        let stocked = try bare.run("SELECT id FROM products WHERE discontinued = 0 ORDER BY id LIMIT 30").compactMap { $0[0] as? Int64 }
        for id in stocked { _ = try await backoffice.stock.receive(productID: id, quantity: 10_000_000) }
        let customerCode = try bare.run("SELECT code FROM customers ORDER BY id LIMIT 1")[0][0] as? String ?? ""
        func lines(_ i: Int) -> [Int64] { (0..<3).map { stocked[(i * 3 + $0) % stocked.count] } }
        /// The i-th three-line order, the same on every run.
        func order(_ i: Int) -> OrderDraft {
            OrderDraft(
                customerCode: customerCode,
                employeeID: 1,
                requiredDate: nil,
                shipVia: 1,
                freight: Money(cents: 1234),
                lines: lines(i).map { OrderLineDraft(productID: $0, quantity: 2, discount: 0.05) }
            )
        }

        // Each side writes in its own run: alternating two writer connections would make each reload its page cache
        // at every transaction (another connection changed the file), which measures that, not the code.
        var (ours, raw) = (Sample(), Sample())
        var ourNumbers: [String] = []
        var bareNumbers: [String] = []
        for i in 0..<writes {
            let draft = order(i)
            ourNumbers.append(try await ours.time { try await backoffice.orders.create(draft) }.order.number)
        }
        for i in 0..<writes {
            bareNumbers.append(try await raw.time { try BareOrders.create(bare, customerCode: customerCode, products: lines(i)) })
        }
        report("order creation (3 lines)", ours, raw)

        (ours, raw) = (Sample(), Sample())
        for number in ourNumbers { _ = try await ours.time { try await backoffice.orders.execute(number: number) } }
        for number in bareNumbers { try await raw.time { try BareOrders.execute(bare, number: number) } }
        report("order execution", ours, raw)
        return order
    }

    /// Every report, through `reports.run` (values checked, rows read into report values) and as its bare SQL through
    /// the C API (every column of every row read), on the same store. Parameters: defaults, the data's last full year,
    /// and the first customer, order and category.
    func reports(_ backoffice: Backoffice, _ bare: BareSQLite) async throws {
        let year = (Int(try bare.run("SELECT substr(max(orderDate), 1, 4) FROM orders")[0][0] as? String ?? "") ?? 1998) - 1
        let given = [
            "year": String(year), "from": "\(year)-01-01", "to": "\(year)-12-31",
            "customer": try bare.run("SELECT code FROM customers ORDER BY id LIMIT 1")[0][0] as? String ?? "",
            "order": try bare.run("SELECT number FROM orders ORDER BY id LIMIT 1")[0][0] as? String ?? "",
            "category": try bare.run("SELECT name FROM categories ORDER BY id LIMIT 1")[0][0] as? String ?? "",
        ]
        var text = TextTable(
            "Report",
            "Parameters",
            "Rows",
            "Ours p50 ms",
            "Bare p50 ms",
            "Ours/bare",
            "Page ours ms",
            "Page bare ms",
            "Page ours/bare"
        )
        for definition in ReportDefinition.catalogue {
            guard let sql = definition.sql else { throw BenchError("\(definition.name) has no SQL") }
            // Optional parameters (the manager's periods) keep their default, the whole history; a year is the data's.
            let parameters = given.filter { name, _ in
                definition.parameters.contains { $0.name == name && ($0.isRequired || $0.kind == .year) }
            }
            // The shop's low-stock margin, which the runner binds itself (the factory default here).
            var named: [String: Any] = ["margin": backoffice.rules.lowStockMargin]
            for parameter in definition.parameters {
                let value = parameters[parameter.name] ?? parameter.defaultValue ?? ""
                if [.year, .count].contains(parameter.kind) {
                    named[parameter.name] = Int(value) ?? 0
                } else if !value.isEmpty {
                    named[parameter.name] = value
                }
            }
            var (ours, raw, oursPage, rawPage) = (Sample(), Sample(), Sample(), Sample())
            var rows = 0
            for _ in 0..<reportRuns {
                rows = try await ours.time { try await backoffice.reports.run(definition.name, parameters: parameters) }.rows.count
                let bareRows = try raw.timeSync { try bare.run(sql, named: named) }.count
                if bareRows != rows { throw BenchError("\(definition.name): \(rows) rows ours, \(bareRows) bare") }
                // What the report's page reads: its first rows, as the web page and the API's first page do.
                let page = 500  // the rows a report page shows (NorthwindWeb's ReportPages.reportRowLimit)
                let shown = try await oursPage.time { try await backoffice.reports.run(definition.name, parameters: parameters, limit: page) }
                let bareShown = try rawPage.timeSync { try bare.run(sql, named: named, limit: page) }.count
                if bareShown != shown.rows.count {
                    throw BenchError("\(definition.name): a page of \(shown.rows.count) rows ours, \(bareShown) bare")
                }
            }
            func f(_ x: Double) -> String { String(format: "%.1f", x) }
            text.add(
                definition.name,
                parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "),
                String(rows),
                f(ours.percentile(0.5)),
                f(raw.percentile(0.5)),
                String(format: "%.0f%%", 100 * raw.percentile(0.5) / ours.percentile(0.5)),
                f(oursPage.percentile(0.5)),
                f(rawPage.percentile(0.5)),
                String(format: "%.0f%%", 100 * rawPage.percentile(0.5) / oursPage.percentile(0.5))
            )
        }
        print("\nReports (\(reportRuns) runs each; Ours/bare is bare time over ours, so 100% means no overhead):")
        print(text.render())
    }
}
