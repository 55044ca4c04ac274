import Foundation
import Northwind
import NorthwindStore

/// SQLite's connection settings under concurrent reads: several threads, each with its own bare connection, run the
/// same query for a while, once per setting. The store's choice for its readers (`Store.init`) is the first row;
/// each other row changes one setting from it. Bare connections, so the figures are SQLite's, not our code's.
struct SettingsBench {
    let path: String
    let seconds: Double
    let threadCounts: [Int]

    static let choices: [(name: String, pragmas: [String])] = [
        ("the store's: temp_store DEFAULT, cache 2 MiB, mmap 1 GiB", []),
        ("temp_store MEMORY", ["PRAGMA temp_store = MEMORY"]),
        ("cache_size 16 MiB", ["PRAGMA cache_size = -16384"]),
        ("cache_size 64 MiB", ["PRAGMA cache_size = -65536"]),
        ("mmap_size 0 (read(2))", ["PRAGMA mmap_size = 0"]),
    ]

    func run() throws {
        let probe = try BareSQLite(path: path)
        let year = (Int(try probe.run("SELECT substr(max(orderDate), 1, 4) FROM orders")[0][0] as? String ?? "") ?? 1998) - 1
        guard let categorySales = ReportDefinition.named("category-sales-for-1997")?.sql,
            let invoices = ReportDefinition.named("invoices")?.sql
        else { throw BenchError("the reports' SQL is missing") }
        let page = Backoffice.productRowSelect + " ORDER BY products.name, products.id LIMIT 50 OFFSET 0"
        let workloads: [(name: String, run: (BareSQLite) throws -> Void)] = [
            ("Category Sales \(year)", { db in try db.run(categorySales, named: ["year": year]) }),
            ("invoices (215 k rows at scale 100)", { db in try db.run(invoices, named: [:]) }),
            (
                "product list page + count",
                { db in
                    try db.run("SELECT count(*) FROM products")
                    try db.run(page)
                }
            ),
        ]
        for threads in threadCounts {
            var table = TextTable(headers: ["Setting (\(threads) threads, queries/s)"] + workloads.map(\.name))
            for choice in Self.choices {
                var cells = [choice.name]
                for workload in workloads {
                    cells.append(String(format: "%.1f", try rate(threads: threads, pragmas: choice.pragmas, workload.run)))
                }
                table.rows.append(cells)
            }
            print("\nSQLite settings under concurrent reads (\(seconds) s per cell):")
            print(table.render())
        }
    }

    /// Queries per second over all threads.
    private func rate(threads: Int, pragmas: [String], _ body: @escaping (BareSQLite) throws -> Void) throws -> Double {
        let connections = try (0..<threads).map { _ in try BareSQLite(path: path, settings: pragmas) }
        // A first run each, so the cells compare warm caches.
        for connection in connections { try body(connection) }
        let done = DispatchGroup()
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
        defer { counts.deallocate() }
        let failure = NSLock()
        nonisolated(unsafe) var firstError: (any Error)?
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        for index in 0..<threads {
            counts[index] = 0
            done.enter()
            nonisolated(unsafe) let connection = connections[index]
            nonisolated(unsafe) let counts = counts
            nonisolated(unsafe) let body = body
            Thread.detachNewThread {
                defer { done.leave() }
                do {
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        try body(connection)
                        counts[index] += 1
                    }
                } catch {
                    failure.withLock { firstError = firstError ?? error }
                }
            }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        done.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if let firstError { throw firstError }
        return Double(counts.reduce(0, +)) / elapsed
    }
}
