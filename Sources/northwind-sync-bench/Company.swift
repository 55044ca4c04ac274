import ArgumentParser
import Foundation
import GRDB
import Glibc
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncServer

/// Head office and its shops, each a real store joined to the sync server, for `CompanyBench`.
struct Company: Sendable {
    struct Site: Sendable {
        let backoffice: Backoffice
        /// The products this site sells from (each stocked well beyond the run's orders) and its customers' codes.
        let products: [Int64]
        let customers: [String]
        /// The probe product's id in this store (ids differ between stores).
        let probeID: Int64
    }

    let hq: Site
    let shops: [Site]
    let probe: Product
    let joinSeconds: Double

    var sites: [Site] { [hq] + shops }

    /// Seeds head office, joins it and uploads; then each shop joins an instance in turn and makes its first sync.
    static func assemble(shops count: Int, scale: Int, servers: [Instance], folder: URL) async throws -> Company {
        let started = ContinuousClock.now
        let hq = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("hq.sqlite").path), seedIfCreated: false)
        try DemoData.seed(into: hq.store, options: DemoData.Options(scale: scale))
        _ = try await ShopSyncEngine.join(hq, server: servers[0].url, token: try await servers[0].token(role: .hq))
        guard var probe = try await hq.catalogue.list().items.first?.product else { throw ValidationError("head office has no product") }
        probe.name = "Company probe"
        probe = try await hq.catalogue.update(probe)
        _ = try await ShopSyncEngine(backoffice: hq).syncNow()
        var shops: [Site] = []
        for index in 0..<count {
            let instance = servers[index % servers.count]
            let path = folder.appendingPathComponent("shop-\(index + 1).sqlite").path
            let shop = try Backoffice.open(StoreConfiguration(path: path), seedIfCreated: false)
            _ = try await ShopSyncEngine.join(shop, server: instance.url, token: try await instance.token(role: .shop))
            _ = try await ShopSyncEngine(backoffice: shop).syncNow()
            shops.append(try await site(shop, probe: probe, stocking: true))
        }
        return Company(
            hq: try await site(hq, probe: probe, stocking: false),
            shops: shops,
            probe: probe,
            joinSeconds: (ContinuousClock.now - started).seconds
        )
    }

    private static func site(_ backoffice: Backoffice, probe: Product, stocking: Bool) async throws -> Site {
        var query = ProductQuery()
        query.discontinued = false
        query.limit = 8
        let products = try await backoffice.catalogue.list(query).items.compactMap(\.product.id)
        if stocking { for id in products { _ = try await backoffice.stock.receive(productID: id, quantity: 100_000) } }
        let (customers, probeID) = try await backoffice.store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT code FROM customers ORDER BY code LIMIT 20"),
                try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE recordID = ?", arguments: [probe.recordID])
            )
        }
        guard let probeID, !customers.isEmpty, !products.isEmpty else { throw ValidationError("a store lacks the probe, customers or products") }
        return Site(backoffice: backoffice, products: products, customers: customers, probeID: probeID)
    }

    /// Syncs every site in turn until a whole round sends nothing: then each has fetched everything the others sent.
    /// Answers the seconds it took.
    func settle() async throws -> Double {
        let started = ContinuousClock.now
        for _ in 0..<10 {
            var sent = 0
            for site in sites {
                let report = try await ShopSyncEngine(backoffice: site.backoffice).syncNow()
                sent += report.uploaded + report.pending
            }
            if sent == 0 { return (ContinuousClock.now - started).seconds }
        }
        throw ValidationError("the company did not settle in ten rounds of sync")
    }

    /// The invariants the convergence harness checks, those a workload of orders can break: every order taken is at
    /// every site; each site's records match the server's zone checksums; each shelf is the sum of its own
    /// movements, never negative, and every site sees the same level for it; no order number or movement twice.
    func checkNothingLost(ordersTaken: [String]) async throws -> String {
        var shelves: [String: [String: Int]] = [:]
        for (index, site) in sites.enumerated() {
            let name = index == 0 ? "head office" : "shop \(index)"
            let found = try await site.backoffice.store.pool.read { db in
                try Self.findings(db, ordersTaken: ordersTaken)
            }
            if let problem = found.problem { throw ValidationError("\(name): \(problem)") }
            let status = try await site.backoffice.sync.status()
            if !status.zonesDiffering.isEmpty { throw ValidationError("\(name): \(status.zonesDiffering.joined(separator: "; "))") }
            shelves[try await site.backoffice.sync.siteCode()] = found.shelf
        }
        for (index, site) in sites.enumerated() {
            let levels = try await site.backoffice.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT l.location, p.recordID, l.units FROM stock_levels l JOIN products p ON p.id = l.productID").map {
                    ($0["location"] as String, $0["recordID"] as String, $0["units"] as Int)
                }
            }
            for (location, product, units) in levels {
                if let shelf = shelves[location], shelf[product] != units {
                    throw ValidationError("site \(index) sees \(units) of \(product) at \(location), which holds \(shelf[product] ?? 0)")
                }
            }
        }
        return "\(ordersTaken.count) orders at each of \(sites.count) installations, every zone's checksum the server's, "
            + "every shelf the sum of its movements and seen alike everywhere, no number or movement twice"
    }

    private static func findings(_ db: Database, ordersTaken: [String]) throws -> (problem: String?, shelf: [String: Int]) {
        let orders = try String.fetchSet(db, sql: "SELECT recordID FROM orders")
        let shelf = Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT recordID, unitsInStock FROM products").map {
                ($0["recordID"] as String, $0["unitsInStock"] as Int)
            }
        )
        if let lost = ordersTaken.first(where: { !orders.contains($0) }) { return ("order \(lost) is missing", shelf) }
        let wrongStock = try String.fetchOne(
            db,
            sql: """
                SELECT p.recordID FROM products p WHERE p.unitsInStock < 0 OR p.unitsInStock <>
                  (SELECT coalesce(sum(delta), 0) FROM stock_movements m WHERE m.productID = p.id AND m.location IS NULL)
                """
        )
        if let wrongStock { return ("the stock of \(wrongStock) is not the sum of its movements, or negative", shelf) }
        if let number = try String.fetchOne(db, sql: "SELECT number FROM orders GROUP BY number HAVING count(*) > 1") {
            return ("order number \(number) is used twice", shelf)
        }
        if let movement = try String.fetchOne(db, sql: "SELECT recordID FROM stock_movements GROUP BY recordID HAVING count(*) > 1") {
            return ("movement \(movement) is applied twice", shelf)
        }
        return (nil, shelf)
    }
}

/// CPU time from /proc: the server processes', PostgreSQL's (every `postgres` process), this process's, and the
/// whole machine's busy share.
struct CPUMeter: Sendable {
    let servers: [Int32]
    let postgres: Bool

    struct Reading: Sendable {
        var servers = 0.0
        var postgres = 0.0
        var bench = 0.0
        var machineBusy = 0.0
        var machineTotal = 0.0

        static func - (after: Reading, before: Reading) -> Usage {
            let total = after.machineTotal - before.machineTotal
            return Usage(
                servers: after.servers - before.servers,
                postgres: after.postgres - before.postgres,
                bench: after.bench - before.bench,
                machineBusy: total > 0 ? (after.machineBusy - before.machineBusy) / total : 0
            )
        }
    }

    /// Seconds of CPU between two readings, and the machine's busy share (0–1) between them.
    struct Usage: Sendable {
        var servers: Double
        var postgres: Double
        var bench: Double
        var machineBusy: Double
    }

    func read() -> Reading {
        var reading = Reading()
        reading.servers = servers.reduce(0) { $0 + Self.seconds(of: $1) }
        reading.bench = Self.seconds(of: getpid())
        if postgres {
            let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
            reading.postgres = pids.filter { Self.command(of: $0) == "postgres" }.reduce(0) { $0 + Self.seconds(of: $1) }
        }
        // /proc/stat's first line: user nice system idle iowait irq softirq steal…, in clock ticks.
        let line = ((try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? "").split(separator: "\n").first ?? ""
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        if ticks.count >= 5 {
            reading.machineTotal = ticks.prefix(8).reduce(0, +)
            reading.machineBusy = reading.machineTotal - ticks[3] - ticks[4]
        }
        return reading
    }

    /// A process's user and system time, with its waited-for children's, in seconds.
    static func seconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm) ": state is field 0, utime 11, stime 12, cutime 13, cstime 14.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return 0 }
        let ticks = fields[11...14].compactMap { Double($0) }.reduce(0, +)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func command(of pid: Int32) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
