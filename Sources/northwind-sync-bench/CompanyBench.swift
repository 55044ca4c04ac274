import ArgumentParser
import Foundation
import GRDB
import Logging
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync

/// A company of shops against one sync server: head office and `shops` shops, each a real store running the sync
/// service `northwind serve` runs, each taking and executing orders at random intervals, for `seconds`. Measures the
/// server's CPU, a shop's order reaching head office, a change at head office reaching every shop, and at the end
/// checks that nothing was lost.
struct CompanyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "company",
        abstract: "Measure a company of shops taking orders against one sync server (or two instances on PostgreSQL)."
    )

    @Option(help: "Shops, each with its own store and sync service.") var shops = 20
    @Option(help: "How long the shops take orders.") var seconds = 300
    @Option(help: "Seconds between one shop's orders, on average (exponentially distributed).") var orderEvery = 3.0
    @Option(help: "Seconds between head office's changes timed to every shop.") var probeEvery = 3.0
    @Option(help: "A postgres:// URL of a server to create the sync database on (default: SQLite in a temporary folder).")
    var database: String?
    @Option(help: "Server instances, the shops spread over them in turn (more than one needs PostgreSQL).") var instances = 1
    @Option(help: "Demo data scale of head office's store.") var scale = 1
    @Option(help: "The workload's seed: the same seed gives each shop the same orders at the same moments.") var seed: UInt64 = 20_261_130
    @Option(help: "The northwind-sync-server binary (default: beside this one).") var server: String?

    func validate() throws {
        guard shops >= 1, seconds >= 1, orderEvery > 0, probeEvery > 0, instances >= 1 else {
            throw ValidationError("--shops, --seconds, --order-every, --probe-every and --instances must be positive")
        }
        if instances > 1, !(database ?? "").hasPrefix("postgres") {
            throw ValidationError("Several instances share one PostgreSQL database: give --database postgres://…")
        }
    }

    func run() async throws {
        let binary =
            server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("northwind-sync-server").path
        let target = try await Target.make(database)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("company-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let syncDatabase = try await target.freshDatabase()
        var servers: [Instance] = []
        defer { for instance in servers { instance.stop() } }
        for _ in 0..<instances { servers.append(try await Instance.start(binary: binary, database: syncDatabase)) }
        say(
            "northwind-sync-bench company: head office and \(shops) shops on \(target.engine) (\(instances) instance\(instances == 1 ? "" : "s")), "
                + "\(seconds) s, an order every \(orderEvery) s per shop, seed \(seed)"
        )
        let company = try await Company.assemble(shops: shops, scale: scale, servers: servers, folder: folder)
        say("  joined in \(String(format: "%.1f", company.joinSeconds)) s: head office's upload and \(shops) first downloads")

        let meter = CPUMeter(servers: servers.map(\.process.processIdentifier), postgres: target.engine == "PostgreSQL")
        let tally = Tally()
        let logger = ShopBench.quietLogger
        let services = company.sites.map { site in
            Task { try await ShopSyncService(backoffice: site.backoffice, interval: { .seconds(60) }, logger: logger).run() }
        }
        // The services' first syncs are left out of the window, and so is the tail after it (orders still arriving).
        try await Task.sleep(for: .seconds(3))
        let before = meter.read()
        let end = ContinuousClock.now + .seconds(seconds)
        let reading = Task {
            try await Task.sleep(until: end)
            return meter.read()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, shop) in company.shops.enumerated() {
                group.addTask { try await self.takeOrders(at: shop, generator: SeededRandom(seed: seed &+ UInt64(index)), until: end, tally: tally) }
            }
            group.addTask { try await Self.watchArrivals(at: company.hq, until: end, tally: tally) }
            group.addTask { try await self.probe(company, until: end, tally: tally) }
            try await group.waitForAll()
        }
        let after = try await reading.value
        for service in services { service.cancel() }
        for service in services { _ = await service.result }
        let settled = try await company.settle()
        try await report(tally: tally, cpu: after - before, engine: target.engine)
        let checked = try await company.checkNothingLost(ordersTaken: await tally.ordersTaken)
        say("  settled in \(String(format: "%.1f", settled)) s; nothing lost: \(checked)")
    }

    /// One shop's orders: a customer, one to three of its stocked products, taken then executed.
    func takeOrders(at shop: Company.Site, generator: SeededRandom, until end: ContinuousClock.Instant, tally: Tally) async throws {
        var random = generator
        while true {
            let wait = -log(1 - Double.random(in: 0..<1, using: &random)) * orderEvery
            guard ContinuousClock.now + .seconds(wait) < end else { return }
            try await Task.sleep(for: .seconds(wait))
            let count = Int.random(in: 1...3, using: &random)
            let products = shop.products.shuffled(using: &random).prefix(count)
            let lines = products.map { OrderLineDraft(productID: $0, quantity: Int.random(in: 1...3, using: &random)) }
            let customer = shop.customers.randomElement(using: &random)!
            let started = ContinuousClock.now
            let order = try await shop.backoffice.orders.create(OrderDraft(customerCode: customer, employeeID: nil, lines: lines))
            _ = try await shop.backoffice.orders.execute(number: order.order.number)
            await tally.took(order.order.recordID, at: ContinuousClock.now, taking: ContinuousClock.now - started)
        }
    }

    /// Polls head office for the orders the shops took and executed, and notes when each shows there executed.
    static func watchArrivals(at hq: Company.Site, until end: ContinuousClock.Instant, tally: Tally) async throws {
        while true {
            let pending = await tally.pending
            if pending.isEmpty && ContinuousClock.now > end { return }
            if ContinuousClock.now > end + .seconds(60) { return }
            if !pending.isEmpty {
                let arrived = try await hq.backoffice.store.pool.read { db in
                    try String.fetchSet(
                        db,
                        sql: "SELECT recordID FROM orders WHERE status = 'shipped' AND recordID IN (SELECT value FROM json_each(?))",
                        arguments: [
                            String(decoding: try JSONEncoder().encode(Array(pending)), as: UTF8.self)
                        ]
                    )
                }
                await tally.arrived(arrived, at: ContinuousClock.now)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Head office renames a product every `probeEvery` seconds; each shop is polled until it shows the new name.
    func probe(_ company: Company, until end: ContinuousClock.Instant, tally: Tally) async throws {
        var product = company.probe
        var sample = 0
        while ContinuousClock.now + .seconds(probeEvery) < end {
            try await Task.sleep(for: .seconds(probeEvery))
            sample += 1
            product.name = "Company probe \(sample)"
            product = try await company.hq.backoffice.catalogue.update(product)
            let committed = ContinuousClock.now
            var waiting = Set(company.shops.indices)
            var latencies: [Double] = []
            while !waiting.isEmpty, ContinuousClock.now - committed < .seconds(30) {
                for index in waiting.sorted() {
                    let shop = company.shops[index]
                    let name = try await shop.backoffice.store.pool.read { db in
                        try String.fetchOne(db, sql: "SELECT name FROM products WHERE id = ?", arguments: [shop.probeID])
                    }
                    if name == product.name {
                        waiting.remove(index)
                        latencies.append((ContinuousClock.now - committed).seconds * 1000)
                    }
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            // A shop that never showed it counts as the 30 s waited.
            latencies += Array(repeating: 30_000, count: waiting.count)
            await tally.probed(latencies, missing: waiting.count)
        }
    }

    func report(tally: Tally, cpu: CPUMeter.Usage, engine: String) async throws {
        let orders = await tally.ordersTaken.count
        let taking = await tally.taking.sorted()
        let arrivals = await tally.arrivals.sorted()
        let probes = await tally.probes
        let everyShop = probes.map { $0.latencies.max() ?? 0 }.sorted()
        let eachShop = probes.flatMap(\.latencies).sorted()
        let missing = probes.reduce(0) { $0 + $1.missing }
        say(
            label("orders taken + executed at the shops")
                + String(
                    format: "%10d  (%.1f/s; each p50 %.0f ms, p99 %.0f ms)",
                    orders,
                    Double(orders) / Double(seconds),
                    taking.percentile(0.5),
                    taking.percentile(0.99)
                )
        )
        say(
            label("a shop's order → at head office, p50 / p99 / max")
                + String(
                    format: "%10.0f / %.0f / %.0f ms  (%d orders, %d never arrived)",
                    arrivals.percentile(0.5),
                    arrivals.percentile(0.99),
                    arrivals.last ?? 0,
                    arrivals.count,
                    orders - arrivals.count
                )
        )
        say(
            label("head office's change → at every shop, p50 / p99 / max")
                + String(
                    format: "%10.0f / %.0f / %.0f ms  (%d changes; the last shop to show each)",
                    everyShop.percentile(0.5),
                    everyShop.percentile(0.99),
                    everyShop.last ?? 0,
                    probes.count
                )
        )
        say(
            label("  the same per shop, p50 / p99")
                + String(
                    format: "%10.0f / %.0f ms  (%d showings, %d not within 30 s, counted as 30 s)",
                    eachShop.percentile(0.5),
                    eachShop.percentile(0.99),
                    eachShop.count - missing,
                    missing
                )
        )
        let perOrder = orders > 0 ? cpu.servers / Double(orders) * 1000 : 0
        say(
            label("the server's CPU")
                + String(
                    format: "%10.1f s  (%.1f%% of one core; %.1f ms an order: one core would carry %.0f orders/s)",
                    cpu.servers,
                    cpu.servers / Double(seconds) * 100,
                    perOrder,
                    perOrder > 0 ? 1000 / perOrder : 0
                )
        )
        if engine == "PostgreSQL", cpu.postgres == 0 {
            say(label("PostgreSQL's CPU") + "not measured: no process named postgres on this machine")
        } else if engine == "PostgreSQL" {
            say(label("PostgreSQL's CPU") + String(format: "%10.1f s  (%.1f%% of one core)", cpu.postgres, cpu.postgres / Double(seconds) * 100))
        }
        say(
            label("the stores and this bench's polling (this process)")
                + String(format: "%10.1f s  (%.1f%% of one core)", cpu.bench, cpu.bench / Double(seconds) * 100)
        )
        say(label("the machine") + String(format: "%10.0f%%  busy of %d cores", cpu.machineBusy * 100, ProcessInfo.processInfo.activeProcessorCount))
    }

    private func label(_ name: String) -> String { "  " + name.padding(toLength: 56, withPad: " ", startingAt: 0) }
}

/// What the shops did and saw, gathered from their tasks.
actor Tally {
    private(set) var ordersTaken: [String] = []
    private(set) var taking: [Double] = []
    private(set) var arrivals: [Double] = []
    private(set) var probes: [(latencies: [Double], missing: Int)] = []
    private var committed: [String: ContinuousClock.Instant] = [:]

    var pending: Set<String> { Set(committed.keys) }

    func took(_ recordID: String, at instant: ContinuousClock.Instant, taking duration: Duration) {
        ordersTaken.append(recordID)
        taking.append(duration.seconds * 1000)
        committed[recordID] = instant
    }

    func arrived(_ recordIDs: Set<String>, at instant: ContinuousClock.Instant) {
        for id in recordIDs { if let at = committed.removeValue(forKey: id) { arrivals.append((instant - at).seconds * 1000) } }
    }

    func probed(_ latencies: [Double], missing: Int) { probes.append((latencies, missing)) }
}

extension [Double] {
    /// The value at `fraction` of a sorted array (0 when empty).
    func percentile(_ fraction: Double) -> Double {
        isEmpty ? 0 : self[Swift.min(count - 1, Int(Double(count) * fraction))]
    }
}
