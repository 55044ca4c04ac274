import Foundation
import Northwind
import NorthwindStore
import Synchronization

/// SQLite's connection settings under concurrent reads: several threads, each with its own bare connection, run the
/// same query for a while, once per setting. The store's choice for its readers (`Store.init`) is the first row;
/// each other row changes one setting from it. Bare connections, so the figures are SQLite's, not our code's.
struct SettingsBench {
    let path: String
    let seconds: Double
    let threadCounts: [Int]

    static let choices: [(name: String, pragmas: [String])] = [
        ("the store's: temp_store DEFAULT, cache 2 MiB, mmap 0 (read(2))", []),
        ("temp_store MEMORY", ["PRAGMA temp_store = MEMORY"]),
        ("cache_size 16 MiB", ["PRAGMA cache_size = -16384"]),
        ("cache_size 64 MiB", ["PRAGMA cache_size = -65536"]),
        ("mmap_size 1 GiB (mapped)", ["PRAGMA mmap_size = 1073741824"]),
    ]

    func run() throws {
        let probe = try BareSQLite(path: path)
        let year = (Int(try probe.run("SELECT substr(max(orderDate), 1, 4) FROM orders")[0][0] as? String ?? "") ?? 1998) - 1
        guard let categorySales = ReportDefinition.named("category-sales-for-1997")?.sql,
            let invoices = ReportDefinition.named("invoices")?.sql
        else { throw BenchError("the reports' SQL is missing") }
        let page = Catalogue.productRowSelect + " ORDER BY products.name, products.id LIMIT 50 OFFSET 0"
        let workloads: [(name: String, run: (BareSQLite) throws -> Void)] = [
            ("Category Sales \(year)", { db in try db.run(categorySales, named: ["year": year]) }),
            ("invoices (every order line)", { db in try db.run(invoices, named: [:]) }),
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
        let outcome = Mutex<(queries: Int, error: (any Error)?)>((0, nil))
        let done = DispatchGroup()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let start = DispatchTime.now().uptimeNanoseconds
        for connection in connections {
            // Each connection is used by its one thread only.
            nonisolated(unsafe) let (connection, body) = (connection, body)
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                var queries = 0
                do {
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        try body(connection)
                        queries += 1
                    }
                } catch {
                    outcome.withLock { $0.error = $0.error ?? error }
                }
                outcome.withLock { $0.queries += queries }
            }
        }
        done.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let (queries, error) = outcome.withLock { ($0.queries, $0.error) }
        if let error { throw error }
        return Double(queries) / elapsed
    }
}
