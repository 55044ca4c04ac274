import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncServer

/// Shop sync, measured end to end with real stores and the real server process: a new shop's first sync against
/// copying the same store file over loopback HTTP; the time from a commit at head office to the change showing at a
/// shop, with the server's push; and what a running sync costs the order path.
struct ShopBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shops",
        abstract: "Measure shop sync: first sync against a file copy, commit-to-visible latency, the order path with sync running."
    )

    @Option(name: .customLong("scale"), help: "Demo data scales for the first sync (repeatable).") var scales: [Int] = [10]
    @Option(help: "Commits to time from head office to a shop.") var samples = 50
    @Option(help: "Orders to take and execute, without then with sync running.") var orders = 200
    @Option(help: "The northwind-sync-server binary (default: beside this one).") var server: String?

    func run() async throws {
        let binary =
            server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("northwind-sync-server").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shop-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        say("northwind-sync-bench shops: real stores, the real server on SQLite, loopback")

        var company: (hq: Backoffice, shop: Backoffice, instance: Instance)?
        for scale in scales {
            let directory = folder.appendingPathComponent("scale-\(scale)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let instance = try await Instance.start(binary: binary, database: directory.appendingPathComponent("sync.sqlite").path)
            let hqPath = directory.appendingPathComponent("hq.sqlite").path
            let hq = try Backoffice.open(StoreConfiguration(path: hqPath), seedIfCreated: false)
            try DemoData.seed(into: hq.store, options: DemoData.Options(scale: scale))
            _ = try await ShopSyncEngine.join(hq, server: instance.url, token: try await instance.token(role: .hq))
            let upload = try await timed { try await ShopSyncEngine(backoffice: hq).syncNow() }
            let shop = try Backoffice.open(StoreConfiguration(path: directory.appendingPathComponent("shop.sqlite").path), seedIfCreated: false)
            _ = try await ShopSyncEngine.join(shop, server: instance.url, token: try await instance.token(role: .shop))
            let download = try await timed { try await ShopSyncEngine(backoffice: shop).syncNow() }
            let copy = try await Self.copyOverHTTP(hqPath, to: directory.appendingPathComponent("copy.sqlite").path)
            let records = download.value.downloaded
            say("scale \(scale): \(records) records; the store file is \(Self.megabytes(hqPath)) MB")
            say(
                label("  head office's first upload (s)")
                    + String(format: "%10.2f  (%.0f records/s)", upload.seconds, Double(upload.value.uploaded) / upload.seconds)
            )
            say(
                label("  a new shop's first download (s)")
                    + String(format: "%10.2f  (%.0f records/s)", download.seconds, Double(records) / download.seconds)
                    + (download.value.loadedFromSnapshot > 0 ? ", \(download.value.loadedFromSnapshot) loaded from a snapshot" : "")
            )
            say(
                label("  the store file copied over loopback HTTP (s)")
                    + String(format: "%10.2f  (download takes %.0f× as long)", copy, download.seconds / copy)
            )
            company?.instance.stop()
            company = (hq, shop, instance)
        }
        guard let (hq, shop, instance) = company else { return }
        defer { instance.stop() }
        try await latency(hq: hq, shop: shop)
        try await orderPath(shop: shop)
    }

    /// Head office renames a product; the shop's store is polled until the name shows. Both run the sync service
    /// `northwind serve` runs, with its defaults (a commit after a quiet spell goes at once).
    func latency(hq: Backoffice, shop: Backoffice) async throws {
        let logger = Self.quietLogger
        let services = [hq, shop].map { backoffice in
            Task { try await ShopSyncService(backoffice: backoffice, interval: { .seconds(3600) }, logger: logger).run() }
        }
        defer { for service in services { service.cancel() } }
        try await Task.sleep(for: .seconds(2))
        guard var product = try await hq.catalogue.list().items.first?.product else { throw ValidationError("head office has no product") }
        // The shop's own id for the product (local ids differ between stores): rename it once, and search for it.
        product.name = "Latency probe"
        product = try await hq.catalogue.update(product)
        let deadline = ContinuousClock.now + .seconds(30)
        var found: Int64?
        while found == nil {
            guard ContinuousClock.now < deadline else { throw ValidationError("the probe product never reached the shop") }
            try await Task.sleep(for: .milliseconds(20))
            found = try shop.catalogue.search("Latency probe").first?.product.id
        }
        let shopID = found!
        var latencies: [Double] = []
        for sample in 1...samples {
            product.name = "Latency \(sample)"
            product = try await hq.catalogue.update(product)
            let committed = ContinuousClock.now
            while try shop.catalogue.product(id: shopID).product.name != product.name {
                guard ContinuousClock.now - committed < .seconds(30) else { throw ValidationError("sample \(sample) never reached the shop") }
                try await Task.sleep(for: .milliseconds(2))
            }
            latencies.append((ContinuousClock.now - committed).seconds * 1000)
            try await Task.sleep(for: .milliseconds(100))
        }
        latencies.sort()
        let p50 = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
        say(label("commit at head office → visible at a shop, p50 (ms)") + String(format: "%10.0f", p50))
        say(
            label("commit at head office → visible at a shop, p99 (ms)")
                + String(format: "%10.0f  (%d samples)", p99, samples)
        )
    }

    /// Orders taken and executed at the shop, first with no sync running, then with the sync service running (it
    /// sends each one as it commits).
    func orderPath(shop: Backoffice) async throws {
        guard let customer = try await shop.records.list(Customer.self, limit: 1).items.first?.code else {
            throw ValidationError("the shop has no customer")
        }
        var query = ProductQuery()
        query.discontinued = false
        query.limit = 3
        let productIDs = try await shop.catalogue.list(query).items.compactMap(\.product.id)
        for id in productIDs { _ = try await shop.stock.receive(productID: id, quantity: orders * 8) }
        func rate() async throws -> Double {
            let started = ContinuousClock.now
            for _ in 0..<orders {
                let lines = productIDs.map { OrderLineDraft(productID: $0, quantity: 1) }
                let order = try await shop.orders.create(OrderDraft(customerCode: customer, employeeID: nil, lines: lines))
                _ = try await shop.orders.execute(number: order.order.number)
            }
            return Double(orders) / (ContinuousClock.now - started).seconds
        }
        // Three rounds, each without then with sync running: the machine's pace drifts within a run, and a ratio of
        // two rates taken minutes apart measured the drift as much as the sync.
        var rounds: [(without: Double, with: Double)] = []
        for _ in 0..<3 {
            let without = try await rate()
            let logger = Self.quietLogger
            let service = Task { try await ShopSyncService(backoffice: shop, interval: { .seconds(3600) }, logger: logger).run() }
            let with = try await rate()
            service.cancel()
            _ = await service.result
            rounds.append((without, with))
        }
        let ratios = rounds.map { $0.with / $0.without }.sorted()
        let median = rounds.sorted { $0.with / $0.without < $1.with / $1.without }[1]
        say(row("orders taken + executed, sync running (orders/s)", ours: median.with, bare: median.without, goal: "≥ 85% of without"))
        say(label("  each round, sync running / without") + ratios.map { String(format: "%.0f%%", $0 * 100) }.joined(separator: ", "))
    }

    /// Serves the file from a Hummingbird server on loopback and downloads it with AsyncHTTPClient to `path`, as
    /// one would copy a store to a new shop; answers the seconds the copy took, written and synced to disk.
    static func copyOverHTTP(_ source: String, to path: String) async throws -> Double {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        let router = Router()
        router.get("store") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: data))) }
        return try await withThrowingTaskGroup(of: Double?.self) { group in
            let (ports, portFound) = AsyncStream.makeStream(of: Int.self)
            var quiet = Logger(label: "file-server")
            quiet.logLevel = .critical
            let running = Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in portFound.yield(channel.localAddress?.port ?? 0) },
                logger: quiet
            )
            group.addTask {
                try await running.runService()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ValidationError("the file server did not start") }
            let started = ContinuousClock.now
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/store"), timeout: .minutes(10))
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw ValidationError("cannot write \(path)") }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            for try await chunk in response.body { try handle.write(contentsOf: chunk.readableBytesView) }
            try handle.synchronize()
            try handle.close()
            let seconds = (ContinuousClock.now - started).seconds
            group.cancelAll()
            return seconds
        }
    }

    /// The sync services' log, warnings only: their info lines would drown the figures.
    static var quietLogger: Logger {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        return logger
    }

    static func megabytes(_ path: String) -> String {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return String(format: "%.0f", Double(size) / 1_048_576)
    }
}

private func timed<T>(_ body: () async throws -> T) async throws -> (value: T, seconds: Double) {
    let started = ContinuousClock.now
    let value = try await body()
    return (value, (ContinuousClock.now - started).seconds)
}

extension ShopBench {
    private func row(_ name: String, ours: Double, bare: Double, goal: String) -> String {
        label(name) + String(format: "%10.0f  against %.0f without: %.0f%% ", ours, bare, ours / bare * 100) + "(goal \(goal))"
    }

    private func label(_ name: String) -> String { "  " + name.padding(toLength: 52, withPad: " ", startingAt: 0) }
}
