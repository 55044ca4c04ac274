import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import SyncServer

#if canImport(Glibc)
import Glibc
import Synchronization
#endif

/// The convergence harness: head office and shops, each a real store, behind its own fault-injecting proxy to a real
/// sync server process. A seeded random workload of domain operations runs while faults strike: links cut, answers
/// dropped or withheld, requests duplicated and delayed, shops' sync processes killed with SIGKILL mid-sync, the
/// server killed and restarted, tombstones purged early, clocks a day or ten minutes off either way, the server
/// restored from a backup taken mid-run, a misbehaving client's forged movements, products deleted at head office
/// while shops hold stock. Then everything heals, and the checks run. A failure prints the seed and the trace, and `NORTHWIND_CONVERGENCE_SEED` replays it.
actor ConvergenceRun {
    struct Configuration: Sendable {
        var seed: UInt64
        var shops: Int
        var duration: Duration
        var engine: SyncEngine
        /// Server processes on the same database (PostgreSQL only); installations are spread across them.
        var instances: Int
        /// A fixed number of steps instead of `duration`.
        var steps: Int? = nil
        /// For the determinism check: only faults whose outcome the seed fixes (no SIGKILL at a random moment, no
        /// delays, no PostgreSQL crash), steps at least 2 ms apart (the merge goes by millisecond clocks), shops' site
        /// codes from the seed, and head office copied from `template` (its demo data's record ids).
        var deterministic = false
        var template: String? = nil

        /// From the environment (`NORTHWIND_CONVERGENCE_SEED`, `_SHOPS`, `_SECONDS`), else the given values.
        static func fromEnvironment(seed: UInt64, shops: Int, seconds: Int, engine: SyncEngine) -> Configuration {
            let environment = ProcessInfo.processInfo.environment
            return Configuration(
                seed: environment["NORTHWIND_CONVERGENCE_SEED"].flatMap { UInt64($0) } ?? seed,
                shops: environment["NORTHWIND_CONVERGENCE_SHOPS"].flatMap { Int($0) } ?? shops,
                duration: .seconds(environment["NORTHWIND_CONVERGENCE_SECONDS"].flatMap { Int($0) } ?? seconds),
                engine: engine,
                instances: engine == .postgres ? 2 : 1
            )
        }
    }

    /// A broken promise, with what the harness saw.
    struct Violation: Error, CustomStringConvertible {
        var description: String
    }

    let configuration: Configuration
    private var random: SplitMix64
    private(set) var trace: [String] = []
    let directory: URL
    let database: String
    /// The run's own PostgreSQL cluster, when the server stores in PostgreSQL.
    let postgresDirectory: String?
    private var servers: [ServerProcess]
    private var proxies: [String: FaultProxy] = [:]
    let sites: [String]
    private var stores: [String: Backoffice] = [:]
    private var siteCodes: [String: String] = [:]

    /// What the workload did, for the checks: every order taken (by record ID, with the number it was given), every
    /// customer created and not deleted.
    private var ordersTaken: [String] = []
    private var orderNumbers: [String: String] = [:]
    private var customersCreated: Set<String> = []
    /// A field value the workload wrote, and the value the site showed before: for the inbox check.
    struct Write {
        var table: String
        var recordID: String
        var field: String
        var value: FieldValue?
        var site: String
        var step: Int
        /// Sent, then lost by its writer in a restore of its own (or a store put back): other copies keep it.
        var writerLost = false
    }
    private var writes: [Write] = []
    /// Customers and orders sent, then lost by the site that wrote them in a restore of its own.
    private var customersWriterLost: Set<String> = []
    private var ordersWriterLost: Set<String> = []
    /// Sites whose whole folder was put back and that have not synced since: they cannot know, and may give again a
    /// number they gave; and the orders they took meanwhile.
    private var foldersPutBack: Set<String> = []
    private var ordersFromFoldersPutBack: Set<String> = []
    /// What inboxes listed before their store was put back, restored, or switched off (a second machine).
    private var inboxListedBefore: Set<String> = []
    /// Values some site had in front of it when it changed or deleted them: superseded knowingly, not discarded.
    private var seenValues: Set<String> = []
    /// Determinism: record ids are random, so each record a step creates gets a name from the step instead.
    private(set) var names: [String: String] = [:]
    /// The statuses each site has shown for each order, in the order seen.
    private var statusesSeen: [String: [String: String]] = [:]
    /// The server's backup taken mid-run, which the next restore puts back.
    private var serverBackup: String?
    /// Where and at which step each order was taken and each customer created: a store put back to an older state
    /// may lose what it never sent, and only that.
    private var origins: [String: (site: String, step: Int)] = [:]
    /// A site's store file copied aside mid-run (with its watermark, as a whole-folder copy would), which the next
    /// revert puts back; and a site's own backup, which the next restore puts back.
    private var storeCopies: [String: (path: String, step: Int)] = [:]
    private var storeBackups: [String: (file: URL, step: Int)] = [:]
    /// Customers a second machine wrote before it was switched off: only the server held them for it, so a server
    /// restored from an older backup loses them (no installation that wrote them is left to send them again).
    private var ofGoneMachines: Set<String> = []

    init(_ configuration: Configuration) async throws {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.seed)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("convergence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // PostgreSQL is restarted among the faults: on a cluster of the run's own.
        let cluster = configuration.engine == .postgres ? try PostgresCluster.startPrivate() : nil
        postgresDirectory = cluster?.directory
        let database = try cluster.map { try PostgresCluster.newDatabase(on: $0.url) } ?? directory.appendingPathComponent("sync.sqlite").path
        self.database = database
        servers = try (0..<configuration.instances).map { _ in try ServerProcess.start(Self.serverArguments(database)) }
        sites = ["hq"] + (1...max(configuration.shops - 1, 1)).map { "s\($0)" }
    }

    deinit {
        for proxy in proxies.values { proxy.close() }
        for server in servers { server.stop() }
        if let postgresDirectory { PostgresCluster.stop(postgresDirectory) }
        // NORTHWIND_CONVERGENCE_KEEP=1 keeps the stores, to look into a failure.
        if ProcessInfo.processInfo.environment["NORTHWIND_CONVERGENCE_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The server instance a site's link leads to.
    private func instance(of site: String) -> Int { sites.firstIndex(of: site)! % servers.count }

    private static func serverArguments(_ database: String) -> [String] { ["serve", "--database", database, "--port", "0", "--rate", "100000"] }

    func store(_ site: String) -> String { directory.appendingPathComponent("\(site).sqlite").path }

    private func log(_ line: String) { trace.append(line) }

    /// The seed, the trace and how to replay them.
    var report: String {
        """
        convergence run with seed \(configuration.seed), \(configuration.shops) installations, \(configuration.duration), \
        \(configuration.engine) with \(configuration.instances) server instance(s)
        replay: NORTHWIND_CONVERGENCE_SEED=\(configuration.seed) swift test --filter ConvergenceTests
        stores: \(directory.path)
        trace:
        \(trace.joined(separator: "\n"))
        """
    }

    /// What a passing run did, in a few lines.
    var summary: String {
        let steps = trace.filter { $0.first?.isNumber == true }
        func count(_ text: String) -> Int { steps.filter { $0.contains(text) }.count }
        return """
            convergence run with seed \(configuration.seed): \(steps.count) steps; \(count("take order")) orders, \(count("execute order")) executions, \
            \(count("sync process killed")) sync processes killed, \(count("network: ")) faults injected, \(count("killed and restarted")) server restarts, \(count("PostgreSQL crashed")) PostgreSQL restarts, \
            \(count("purged")) purges, \(count(": transfer ")) transfers sent, \(count("receive transfer")) received, \(count(" picture: ") + count(" photo: ")) pictures \
            changed, \(count("refused")) refusals, \(count("server backed up")) server backups and \(count("server restored")) restores, \
            \(count("forged movement")) forged movements, \(count("delete product")) product deletions, \(count("clock -")) syncs with the clock behind, \
            \(count("store put back")) stores put back to an older copy, \(count("restored from its backup of")) restored from their own backup, \
            \(count("second machine")) copied to a second machine, \(count("sync resume")) resumed
            \(trace.suffix(sites.count * 2 + 2).joined(separator: "\n"))
            """
    }

    // MARK: - Setting up

    /// Head office with demo data uploads; every shop joins empty and downloads.
    func start() async throws {
        for site in sites {
            let proxy = try FaultProxy(upstreamPort: servers[instance(of: site)].port)
            proxies[site] = proxy
            if site == "hq", let template = configuration.template {
                try FileManager.default.copyItem(atPath: template, toPath: store(site))
                if FileManager.default.fileExists(atPath: template + "_external") {
                    try FileManager.default.copyItem(atPath: template + "_external", toPath: store(site) + "_external")
                }
            }
            let backoffice = try Backoffice.open(StoreConfiguration(path: store(site)), seedIfCreated: site == "hq")
            if configuration.deterministic, site != "hq" {
                let code = String((0..<6).map { _ in Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ").randomElement(using: &random)! })
                try await backoffice.store.pool.write { db in
                    try db.execute(sql: "UPDATE store_metadata SET value = ? WHERE key = 'siteCode'", arguments: [code])
                }
            }
            let service = try await SyncService.open(database: database)
            let token = try await service.createEnrollment(container: "acme", role: site == "hq" ? .hq : .shop)
            await service.close()
            _ = try await ShopSyncEngine.join(backoffice, server: "http://127.0.0.1:\(proxy.port)", token: token)
            _ = try await ShopSyncEngine(backoffice: backoffice).syncNow()
            stores[site] = backoffice
            siteCodes[site] = try await backoffice.sync.siteCode()
        }
        log("started: \(sites.map { "\($0)=\(siteCodes[$0]!)" }.joined(separator: " "))")
    }

    // MARK: - The workload

    /// Runs random steps until the configured time is up.
    func runWorkload() async throws {
        let end = ContinuousClock.now + configuration.duration
        var step = 0
        while configuration.steps.map({ step < $0 }) ?? (ContinuousClock.now < end) {
            step += 1
            let site = sites.randomElement(using: &random)!
            var roll = Int.random(in: 0..<106, using: &random)
            // NORTHWIND_CONVERGENCE_STORE_FAULTS=1 makes a store put back or copied one step in five, to look for
            // their holes.
            if Self.storeFaultsOften, Int.random(in: 0..<5, using: &random) == 0 { roll = Int.random(in: 102..<105, using: &random) }
            let before = configuration.deterministic ? try await recordIDs(at: site) : [:]
            let what = try await perform(roll: roll, at: site, step: step)
            if configuration.deterministic {
                try await name(created: before, at: site, step: step)
                try await Task.sleep(for: .milliseconds(2))
            }
            log("\(step) \(site): \(what)")
            try await checkAtomicity(site)
        }
    }

    private static let storeFaultsOften = ProcessInfo.processInfo.environment["NORTHWIND_CONVERGENCE_STORE_FAULTS"] != nil

    private func perform(roll: Int, at site: String, step: Int) async throws -> String {
        let backoffice = stores[site]!
        do {
            switch roll {
            case 0..<14: return try await editProduct(backoffice, site: site, step: step)
            case 14..<21: return try await createCustomer(backoffice, site: site, step: step)
            case 21..<27: return try await editCustomer(backoffice, site: site, step: step)
            case 27..<30: return try await deleteCustomer(backoffice, site: site)
            case 30..<42: return try await takeOrder(backoffice, site: site, step: step)
            case 42..<49: return try await executeOrder(backoffice, site: site)
            case 49..<52: return try await cancelOrder(backoffice, site: site)
            case 52..<59: return try await receiveStock(backoffice, site: site)
            case 59..<62: return try await takeStock(backoffice)
            case 62..<64: return try await sendTransfer(backoffice, site: site)
            case 64..<66: return try await receiveTransfer(backoffice, site: site)
            case 66..<76: return await syncInProcess(site)
            case 76..<85: return try await syncAndKill(site)
            case 85..<94: return injectFault(site)
            case 94..<96:
                if postgresDirectory != nil, !configuration.deterministic, Bool.random(using: &random) { return try restartPostgres() }
                return try restartServer()
            case 96..<97: return try await purgeTombstones()
            case 97..<98: return try await syncWithSkewedClock(site)
            case 98..<99: return try await changePicture(backoffice, site: site, step: step)
            case 99..<100: return serverBackup == nil ? try backUpServer() : try await restoreServer()
            case 100..<101: return try await forgeMovement(at: site)
            case 101..<102: return try await deleteProduct()
            case 102..<103: return try await revertStore(site, step: step)
            case 103..<104: return try await restoreOwnBackup(site, step: step)
            case 104..<105: return try await copyToSecondMachine(site, step: step)
            default:
                try await Task.sleep(for: .milliseconds(20))
                return "pause"
            }
        } catch let error as NorthwindError {
            // Refusals are part of the workload (not enough stock, a customer with orders, another site's order).
            return "refused: \(error)"
        }
    }

    private func randomProduct(_ backoffice: Backoffice) async throws -> Product? {
        try await backoffice.store.pool.read { db in try Product.order(Column("id")).fetchAll(db) }.randomElement(using: &random)
    }

    private func editProduct(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        // Half the edits go to a few popular products, so that sites meet on the same fields.
        let products = try await backoffice.store.pool.read { db in try Product.order(Column("id")).fetchAll(db) }
        let pool = Bool.random(using: &random) ? Array(products.prefix(5)) : products
        guard var product = pool.randomElement(using: &random) else { return "no product" }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: product.name = "Product \(step)"
        case 1: product.unitPrice = Money(cents: Int.random(in: 100...9_999, using: &random))
        default: product.reorderLevel = Int.random(in: 0...50, using: &random)
        }
        try await recordingWrites(at: site, step: step, table: "products", recordID: product.recordID) {
            _ = try await backoffice.catalogue.update(product)
        }
        return "edit product \(product.recordID)"
    }

    /// Sets a category's picture or an employee's photo, from a small pool (so two sites set the same bytes; one is
    /// large enough to live in a file), or removes it.
    private func changePicture(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        let pick = Int.random(in: 0..<5, using: &random)
        let picture: BinaryContent? =
            pick == 4 ? nil : BinaryContent(bytes: Data(repeating: UInt8(pick), count: pick == 3 ? 150_000 : 500 + pick), contentType: "image/png")
        let what = picture.map { "\($0.bytes.count) bytes" } ?? "none"
        if Bool.random(using: &random) {
            let ids = try await backoffice.store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM categories ORDER BY id") }
            guard let id = ids.randomElement(using: &random) else { return "no category" }
            try await recordingWrites(at: site, step: step, table: "categories", rowID: id) {
                try await backoffice.catalogue.setPicture(categoryID: id, picture)
            }
            return "category \(id) picture: \(what)"
        }
        let ids = try await backoffice.store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM employees ORDER BY id") }
        guard let id = ids.randomElement(using: &random) else { return "no employee" }
        try await recordingWrites(at: site, step: step, table: "employees", rowID: id) {
            try await backoffice.people.setPhoto(employeeID: id, picture)
        }
        return "employee \(id) photo: \(what)"
    }

    private func createCustomer(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        // A small pool of codes, so that two sites create the same one.
        let code = "CV\(Int.random(in: 0..<12, using: &random))"
        let created = try await backoffice.records.create(Customer(code: code, companyName: "Customer of step \(step)"))
        customersCreated.insert(created.recordID)
        origins[created.recordID] = (site, step)
        return "create customer \(code) \(created.recordID)"
    }

    private func editCustomer(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        // By code, which is the same everywhere; half the edits go to a few customers, so that sites meet.
        let customers = try await backoffice.store.pool.read { db in try Customer.order(Column("code")).fetchAll(db) }
        let pool = Bool.random(using: &random) ? Array(customers.prefix(5)) : customers
        guard var customer = pool.randomElement(using: &random) else { return "no customer" }
        if Bool.random(using: &random) { customer.contactName = "Contact \(step)" } else { customer.city = "City \(step)" }
        try await recordingWrites(at: site, step: step, table: "customers", recordID: customer.recordID) {
            _ = try await backoffice.records.update(customer)
        }
        return "edit customer \(customer.recordID)"
    }

    private func deleteCustomer(_ backoffice: Backoffice, site: String) async throws -> String {
        let ids = customersCreated.sorted()
        let customers = try await backoffice.store.pool.read { db in
            try Customer.filter(ids.contains(Column("recordID"))).order(Column("code"), Column("companyName")).fetchAll(db)
        }
        guard let customer = customers.randomElement(using: &random), let id = customer.id else { return "no customer to delete" }
        // Whoever deletes a record has seen its values: none of them is discarded unseen.
        let seen = try await fields(at: site, table: "customers", recordID: customer.recordID) ?? [:]
        try await backoffice.records.delete(Customer.self, id: id)
        for (field, value) in seen { seenValues.insert(Self.valueKey("customers", customer.recordID, field, value)) }
        customersCreated.remove(customer.recordID)
        return "delete customer \(customer.recordID)"
    }

    /// Half the time for what is on this shelf, as a customer calling a shop would; else for anything.
    private func takeOrder(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        let (codes, all, stocked) = try await backoffice.store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT code FROM customers ORDER BY code"),
                try Int64.fetchAll(db, sql: "SELECT id FROM products WHERE discontinued = 0 ORDER BY id"),
                try Int64.fetchAll(db, sql: "SELECT id FROM products WHERE discontinued = 0 AND unitsInStock >= 5 ORDER BY id")
            )
        }
        let products = Bool.random(using: &random) && !stocked.isEmpty ? stocked : all
        guard let code = codes.randomElement(using: &random), !products.isEmpty else { return "nothing to order" }
        let count = Int.random(in: 1...3, using: &random)
        let chosen = Set((0..<count).map { _ in products.randomElement(using: &random)! }).sorted()
        let lines = chosen.map { OrderLineDraft(productID: $0, quantity: Int.random(in: 1...5, using: &random)) }
        let order = try await backoffice.orders.create(OrderDraft(customerCode: code, employeeID: nil, lines: lines))
        ordersTaken.append(order.order.recordID)
        origins[order.order.recordID] = (site, step)
        orderNumbers[order.order.recordID] = order.order.number
        if foldersPutBack.contains(site) { ordersFromFoldersPutBack.insert(order.order.recordID) }
        return "take order \(order.order.number) for \(code), \(lines.count) lines"
    }

    private func ownNewOrder(_ backoffice: Backoffice, site: String) async throws -> String? {
        let code = siteCodes[site]!
        let numbers = try await backoffice.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT number FROM orders WHERE status = 'new' AND number LIKE ? ORDER BY number", arguments: ["\(code)-%"])
        }
        return numbers.randomElement(using: &random)
    }

    /// Half the time an order the shelf can fill, as staff would pick; else any (which may be refused).
    private func executeOrder(_ backoffice: Backoffice, site: String) async throws -> String {
        let code = siteCodes[site]!
        let fillable = try await backoffice.store.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT number FROM orders o WHERE status = 'new' AND number LIKE ? AND NOT EXISTS (
                      SELECT 1 FROM order_lines l JOIN products p ON p.id = l.productID
                      WHERE l.orderID = o.id AND l.quantity > p.unitsInStock)
                    ORDER BY number
                    """,
                arguments: ["\(code)-%"]
            )
        }
        var pick = Bool.random(using: &random) ? fillable.randomElement(using: &random) : nil
        if pick == nil { pick = try await ownNewOrder(backoffice, site: site) }
        guard let number = pick else { return "no order to execute" }
        _ = try await backoffice.orders.execute(number: number)
        return "execute order \(number)"
    }

    private func cancelOrder(_ backoffice: Backoffice, site: String) async throws -> String {
        guard let number = try await ownNewOrder(backoffice, site: site) else { return "no order to cancel" }
        _ = try await backoffice.orders.cancel(number: number)
        return "cancel order \(number)"
    }

    /// Goods in, half the time for a product this site has orders waiting for (so that executions can succeed).
    private func receiveStock(_ backoffice: Backoffice, site: String) async throws -> String {
        let code = siteCodes[site]!
        let wanted = try await backoffice.store.pool.read { db in
            try Int64.fetchAll(
                db,
                sql:
                    "SELECT DISTINCT l.productID FROM order_lines l JOIN orders o ON o.id = l.orderID WHERE o.status = 'new' AND o.number LIKE ? ORDER BY 1",
                arguments: ["\(code)-%"]
            )
        }
        let id: Int64
        if Bool.random(using: &random), let product = wanted.randomElement(using: &random) {
            id = product
        } else {
            guard let product = try await randomProduct(backoffice)?.id else { return "no product" }
            id = product
        }
        let quantity = Int.random(in: 1...40, using: &random)
        let product = try await backoffice.stock.receive(productID: id, quantity: quantity)
        return "receive \(quantity) of \(product.recordID)"
    }

    private func takeStock(_ backoffice: Backoffice) async throws -> String {
        guard let product = try await randomProduct(backoffice), let id = product.id else { return "no product" }
        let counted = Int.random(in: 0...30, using: &random)
        _ = try await backoffice.stock.adjust(productID: id, countedQuantity: counted)
        return "stock take of \(product.recordID): \(counted)"
    }

    /// A few units of something on this shelf, to another installation this one has heard of.
    private func sendTransfer(_ backoffice: Backoffice, site: String) async throws -> String {
        let here = siteCodes[site]!
        let others = sites.compactMap { siteCodes[$0] }.filter { $0 != here }.sorted()
        guard let destination = others.randomElement(using: &random) else { return "no other site" }
        let stocked = try await backoffice.store.pool.read { db in
            try Product.filter(Column("unitsInStock") > 0).order(Column("id")).fetchAll(db)
        }
        guard let product = stocked.randomElement(using: &random), let id = product.id else { return "nothing to send" }
        let quantity = Int.random(in: 1...min(product.unitsInStock, 10), using: &random)
        let sent = try await backoffice.stock.send(productID: id, quantity: quantity, to: destination)
        return "send \(quantity) of \(product.recordID) to \(destination): transfer \(sent.transfer.recordID)"
    }

    /// Books in a transfer waiting here, at times short.
    private func receiveTransfer(_ backoffice: Backoffice, site: String) async throws -> String {
        let waiting = try await backoffice.stock.transfers(inTransitOnly: true).filter { $0.transfer.toLocation == siteCodes[site] }
        guard let status = waiting.randomElement(using: &random), let id = status.transfer.id else { return "nothing in transit" }
        let units = Int.random(in: max(1, status.transfer.quantity - 2)...status.transfer.quantity, using: &random)
        _ = try await backoffice.stock.receiveTransfer(id: id, units: units)
        return "receive transfer \(status.transfer.recordID): \(units) of \(status.transfer.quantity)"
    }

    /// Runs a write at a site and notes each field it changed, with the value it replaced (which that site had seen).
    private func recordingWrites(
        at site: String,
        step: Int,
        table: String,
        recordID: String,
        _ write: () async throws -> Void
    ) async throws {
        let before = try await fields(at: site, table: table, recordID: recordID) ?? [:]
        try await write()
        let after = try await fields(at: site, table: table, recordID: recordID) ?? [:]
        for field in Set(before.keys).union(after.keys).sorted() where field != FieldClock.fieldName && before[field] != after[field] {
            writes.append(Write(table: table, recordID: recordID, field: field, value: after[field], site: site, step: step))
            if let old = before[field] { seenValues.insert(Self.valueKey(table, recordID, field, old)) }
        }
    }

    private func recordingWrites(at site: String, step: Int, table: String, rowID: Int64, _ write: () async throws -> Void) async throws {
        let recordID = try await stores[site]!.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT recordID FROM \(table) WHERE id = ?", arguments: [rowID])
        }
        guard let recordID else { return try await write() }
        try await recordingWrites(at: site, step: step, table: table, recordID: recordID, write)
    }

    /// A row's travelling fields at a site, as sync sends them (references as record ids, pictures by hash).
    private func fields(at site: String, table name: String, recordID: String) async throws -> [String: FieldValue]? {
        let syncSite = self.syncSite(site)
        return try await stores[site]!.store.pool.read { db in
            try RecordMapping.record(db, table: SyncTable.byName[name]!, recordID: recordID, site: syncSite, zoneName: "")?.fields
        }
    }

    /// What reading records needs of a site: its code (a movement's location) and its binaries (pictures' hashes).
    private func syncSite(_ site: String) -> SyncSite {
        SyncSite(
            membership: SyncMembership(server: "", container: "", siteCode: siteCodes[site]!, role: "", credential: ""),
            binaries: stores[site]!.store.binaries
        )
    }

    static func valueKey(_ table: String, _ recordID: String, _ field: String, _ value: FieldValue?) -> String {
        "\(table) \(recordID) \(field) \(value.map { "\($0)" } ?? "absent")"
    }

    /// Every synced row's record id at a site, by table.
    private func recordIDs(at site: String) async throws -> [String: Set<String>] {
        try await stores[site]!.store.pool.read { db in
            var ids: [String: Set<String>] = [:]
            for table in SyncTable.all { ids[table.name] = try String.fetchSet(db, sql: "SELECT recordID FROM \(table.name)") }
            return ids
        }
    }

    /// Names the records a step created: the step, the table, and the rank of the record's content (parents first,
    /// so that a child's content names its parent).
    private func name(created before: [String: Set<String>], at site: String, step: Int) async throws {
        let after = try await recordIDs(at: site)
        for table in SyncTable.all {
            let created = after[table.name, default: []].subtracting(before[table.name, default: []]).filter { names[$0] == nil }
            var contents: [(String, String)] = []
            for recordID in created {
                let fields = try await fields(at: site, table: table.name, recordID: recordID) ?? [:]
                contents.append((normalized(fields), recordID))
            }
            for (rank, (_, recordID)) in contents.sorted(by: { $0.0 < $1.0 }).enumerated() {
                names[recordID] = "step\(step)-\(table.name)-\(rank)"
            }
        }
    }

    /// A record's fields with what differs between two runs of one seed masked: record ids become names, times and
    /// the clocks field go.
    private func normalized(_ fields: [String: FieldValue]) -> String {
        let text = fields.filter { $0.key != FieldClock.fieldName }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "|")
        return masked(text)
    }

    func masked(_ text: String) -> String {
        var text = text.replacing(/timestamp\(\d+\)/, with: "timestamp(…)")
        text = text.replacing(/\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?/, with: "…date…")
        text = text.replacing(/127\.0\.0\.1:\d+/, with: "127.0.0.1:…")
        return text.replacing(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/) { match in
            names[String(match.output)] ?? String(match.output)
        }
    }

    /// Head office's data, normalized: what two runs of one seed must agree on (every installation holds the same,
    /// which `checkConverged` checks).
    func normalizedState() async throws -> [String] {
        var lines: [String] = []
        for table in SyncTable.all {
            let ids = try await recordIDs(at: "hq")[table.name, default: []]
            for recordID in ids {
                lines.append(
                    "\(table.name) \(masked(recordID)) \(normalized(try await fields(at: "hq", table: table.name, recordID: recordID) ?? [:]))"
                )
            }
        }
        return lines.sorted()
    }

    /// The trace with record ids as names, to find where two runs parted.
    var normalizedTrace: [String] { trace.map(masked) }

    // MARK: - Syncing and faults

    /// One sync in this process, abandoned after `timeout` (a withheld answer would otherwise hold it for a minute).
    private func syncInProcess(_ site: String) async -> String {
        // A withheld answer holds a sync until it is abandoned. For the determinism check, nothing else may: a long
        // sync (everything sent again after a server restore) runs to its end, and an abandoned one is over before
        // the next step, or when it stopped would depend on the machine's speed.
        let timeout = syncTimeout(site, otherwise: .seconds(4))
        let engine = ShopSyncEngine(backoffice: stores[site]!)
        let outcome = await firstOf(timeout, waitingForTheEnd: configuration.deterministic) { () -> (String, ShopSyncError?) in
            do {
                let report = try await engine.syncNow()
                return ("sync: up \(report.uploaded), down \(report.downloaded), pending \(report.pending)", nil)
            } catch let error as ShopSyncError {
                return ("sync failed: \(error.message)", error)
            } catch {
                return ("sync failed: \(error)", nil)
            }
        }
        guard let (text, error) = outcome else { return "sync abandoned after \(timeout)" }
        if let error { try? await resumeIfDiverged(site, error) } else { foldersPutBack.remove(site) }
        return text
    }

    /// How long a sync at `site` may take before it is abandoned: for the determinism check, only a withheld answer
    /// holds it back.
    private func syncTimeout(_ site: String, otherwise: Duration) -> Duration {
        guard configuration.deterministic else { return otherwise }
        return [.halfOpen, .cutResponses].contains(proxies[site]!.fault) ? .seconds(10) : .seconds(600)
    }

    /// A store the server found behind what it took from its site (a whole folder put back, or a second copy that
    /// synced first): the person at it does what the message says, `sync resume`.
    private func resumeIfDiverged(_ site: String, _ error: ShopSyncError) async throws {
        guard error.kind == .refused(.storeDiverged) else { return }
        try await stores[site]!.sync.resumeAsThisCopy()
        foldersPutBack.remove(site)
        log("  \(site): sync resume, as the message said")
    }

    /// `northwind sync now` in its own process, killed with SIGKILL: at a named moment, or after a random delay that
    /// may fall anywhere (during the upload, a page's apply, between the server's commit and the acknowledgement).
    private func syncAndKill(_ site: String) async throws -> String {
        guard let binary = CLI.binary("northwind") else { throw CLIError(description: "no northwind binary: build it first") }
        let arguments = ["sync", "now", "--store", store(site)]
        // Half the time (always for the determinism check) it kills itself at a named moment (`CrashPoint`): before
        // sending a batch, between the server's commit and the acknowledgement, or inside a page's transaction.
        if FaultSwitches.compiledIn && (configuration.deterministic || Bool.random(using: &random)) {
            let point = ["upload", "acknowledge", "apply"].randomElement(using: &random)!
            let count = Int.random(in: 1...2, using: &random)
            let child = try ChildProcess(binary.path, arguments, environment: ["NORTHWIND_CRASH_AT": "\(point):\(count)"])
            guard let ended = await child.exit(within: syncTimeout(site, otherwise: .seconds(10))) else {
                child.signal(SIGKILL)
                await child.exit()
                return "sync process abandoned before \(point) #\(count)"
            }
            return ended == .init(status: SIGKILL, signalled: true)
                ? "sync process killed at \(point) #\(count)" : "sync process ended before \(point) #\(count) (\(ended.status))"
        }
        let after = Int.random(in: 0...800, using: &random)
        let child = try ChildProcess(binary.path, arguments)
        if let ended = await child.exit(within: .milliseconds(after)) { return "sync process ended by itself (\(ended.status))" }
        child.signal(SIGKILL)
        await child.exit()
        return "sync process killed after \(after) ms"
    }

    private func injectFault(_ site: String) -> String {
        let faults: [FaultProxy.Fault] = [
            .none, .none, .cut, .dropResponse, .cutResponses, .halfOpen, .delay(milliseconds: Int.random(in: 50...400, using: &random)), .duplicate,
        ]
        var fault = faults.randomElement(using: &random)!
        // A delay decides only when a sync is abandoned, which the seed cannot fix.
        if configuration.deterministic, case .delay = fault { fault = .none }
        proxies[site]!.inject(fault)
        return "network: \(fault)"
    }

    /// Kills a server instance with SIGKILL and starts it again on the same database.
    private func restartServer() throws -> String {
        let index = Int.random(in: 0..<servers.count, using: &random)
        servers[index].kill()
        servers[index] = try ServerProcess.start(Self.serverArguments(database))
        for site in sites where instance(of: site) == index { proxies[site]!.forward(to: servers[index].port) }
        return "server \(index) killed and restarted"
    }

    /// Stops PostgreSQL at once, as a crash would, and starts it again: every server instance loses its connections.
    private func restartPostgres() throws -> String {
        try PostgresCluster.restart(postgresDirectory!)
        return "PostgreSQL crashed and restarted"
    }

    private func purgeTombstones() async throws -> String {
        let result = try await CLI.run(["purge", "--database", database, "--days", "0"], program: "northwind-sync-server")
        guard result.status == 0 else { throw Violation(description: "purge failed: \(result.stderr)") }
        return "tombstones purged"
    }

    /// A sync with the shop's clock a day or ten minutes off, either way, must send nothing (it may also fail to
    /// reach the server).
    private func syncWithSkewedClock(_ site: String) async throws -> String {
        guard FakeTime.installed else { return "no faketime" }
        let offset = ["+1d", "-1d", "+10m", "-10m"].randomElement(using: &random)!
        let pending = try await stores[site]!.sync.pendingChanges()
        let result = try await FakeTime.northwind(["sync", "now", "--store", store(site)], offset: offset)
        let after = try await stores[site]!.sync.pendingChanges()
        guard result.status != 0, after >= pending else {
            throw Violation(description: "a sync with the clock \(offset) off was not refused (\(pending) pending, then \(after)): \(result.stderr)")
        }
        return "sync with the clock \(offset) off: \(result.stderr.split(separator: "\n").first ?? "")"
    }

    /// Backs the server up while it runs: SQLite's online backup, or `pg_dump`.
    private func backUpServer() throws -> String {
        let backup = directory.appendingPathComponent("server-backup-\(trace.count)").path
        if postgresDirectory != nil {
            _ = try PostgresCluster.run("/usr/bin/pg_dump", ["--format=custom", "--file=" + backup, database])
        } else {
            _ = try ServerBackup.create(database: database, folder: backup)
        }
        serverBackup = backup
        return "server backed up"
    }

    /// Stops every server instance, puts the backup back (and marks the database restored, for PostgreSQL), and
    /// starts them again: every installation must send again what the server lost of what it had acknowledged.
    private func restoreServer() async throws -> String {
        guard let backup = serverBackup else { return "no server backup" }
        for server in servers { server.kill() }
        if postgresDirectory != nil {
            _ = try PostgresCluster.run("/usr/bin/pg_restore", ["--clean", "--if-exists", "--no-owner", "--dbname=" + database, backup])
            try await ServerBackup.markRestored(database: database)
        } else {
            _ = try ServerBackup.restore(folder: backup, over: database)
        }
        for index in servers.indices {
            servers[index] = try ServerProcess.start(Self.serverArguments(database))
            for site in sites where instance(of: site) == index { proxies[site]!.forward(to: servers[index].port) }
        }
        serverBackup = nil
        let customers = SyncTable.sharedZone(of: "customers")!
        let held = try await serverRecords(ofGoneMachines.sorted().map { RecordKey(zoneName: customers, recordName: $0) })
        let lost = ofGoneMachines.filter { held[RecordKey(zoneName: customers, recordName: $0)] == nil }.sorted()
        for recordID in lost { customersCreated.remove(recordID) }
        ofGoneMachines.subtract(lost)
        if !lost.isEmpty {
            log("  written only by second machines that are gone, so lost with the server's restore: \(lost.joined(separator: ", "))")
        }
        try await forgetWhatNobodyLeftHolds()
        return "server restored from its backup"
    }

    /// What the restored server lacks, and its writer lost in a restore of its own, and no installation left holds
    /// (only the server, or machines now gone, had fetched it) has no copy left to send: it is no longer expected.
    /// What any installation still holds is, and must come back.
    private func forgetWhatNobodyLeftHolds() async throws {
        let customers = SyncTable.sharedZone(of: "customers")!
        func zone(_ table: String, _ site: String) -> String { SyncTable.sharedZone(of: table) ?? SyncTable.siteZone(siteCodes[site]!) }
        let orders = ordersWriterLost.compactMap { recordID in origins[recordID].map { (orderNumbers[recordID] ?? recordID, $0.site, recordID) } }
        let restored = try await serverRecords(
            writes.filter(\.writerLost).map { RecordKey(zoneName: zone($0.table, $0.site), recordName: $0.recordID) }
                + customersWriterLost.map { RecordKey(zoneName: customers, recordName: $0) }
                + orders.map { RecordKey(zoneName: zone("orders", $0.1), recordName: $0.2) }
        )
        func heldAnywhere(_ table: String, _ recordID: String, _ field: String? = nil, _ value: FieldValue? = nil) async throws -> Bool {
            for site in sites {
                guard let fields = try await fields(at: site, table: table, recordID: recordID) else { continue }
                if field.map({ fields[$0] == value }) ?? true { return true }
            }
            return false
        }
        var gone: [String] = []
        var kept: [Write] = []
        for write in writes {
            let server = restored[RecordKey(zoneName: zone(write.table, write.site), recordName: write.recordID)]
            if write.writerLost, server?.fields[write.field] != write.value,
                try await !heldAnywhere(write.table, write.recordID, write.field, write.value)
            {
                gone.append("\(write.table) \(write.recordID) \(write.field)")
                continue
            }
            kept.append(write)
        }
        writes = kept
        for recordID in customersWriterLost.sorted() where customersCreated.contains(recordID) {
            if restored[RecordKey(zoneName: customers, recordName: recordID)] == nil, try await !heldAnywhere("customers", recordID) {
                customersCreated.remove(recordID)
                gone.append(recordID)
            }
        }
        for (number, site, recordID) in orders where ordersTaken.contains(recordID) {
            if restored[RecordKey(zoneName: zone("orders", site), recordName: recordID)] == nil, try await !heldAnywhere("orders", recordID) {
                ordersTaken.removeAll { $0 == recordID }
                gone.append(number)
            }
        }
        if !gone.isEmpty {
            log("  lost by their writer's own restore, then by the server's, and held by nobody left: \(gone.joined(separator: ", "))")
        }
    }

    /// A misbehaving client with a shop's credential appends to its zone a movement that names another location's
    /// shelf, or none: the server must refuse it (head office declared the schema), and it must move no shelf.
    private func forgeMovement(at site: String) async throws -> String {
        guard site != "hq" else { return "no forgery at head office" }
        let product = try await stores["hq"]!.store.pool.read { db in try String.fetchOne(db, sql: "SELECT recordID FROM products ORDER BY id") }
        guard let product else { return "no product to forge" }
        let victim = siteCodes[sites.filter { $0 != site }.randomElement(using: &random)!]!
        let naming: String? = Bool.random(using: &random) ? victim : nil
        var fields: [String: FieldValue] = [
            "productID": .reference(RecordReference(recordName: product, zoneName: "catalog")),
            "delta": .int64(-Int64.random(in: 1...9, using: &random)),
            "reason": .string("received"),
            "createdAt": .string(Timestamp.now.description),
        ]
        if let naming { fields["location"] = .string(naming) }
        let record = SyncRecord(
            recordName: UUID().uuidString.lowercased(),
            recordType: "stock_movements",
            zoneID: ZoneID(SyncTable.siteZone(siteCodes[site]!)),
            fields: fields
        )
        let service = try await SyncService.open(database: database)
        let installation = try await service.installations(container: "acme").first { $0.siteCode == siteCodes[site]! }
        guard let installation else {
            await service.close()
            return "no installation to forge for"
        }
        let answer = try await service.modifyRecords(
            installation,
            container: "acme",
            scope: .shared,
            request: .init(clientID: "forger", batchID: UUID().uuidString, operations: [.init(opID: "0", operationType: .append, record: record)]),
            bodySize: 0
        )
        await service.close()
        if !answer.contains("SCHEMA_VIOLATION") {
            throw Violation(description: "the server took a movement forged at \(site) naming \(naming ?? "no location"): \(record.recordName)")
        }
        return "forged movement at \(site) naming \(naming ?? "no location"): refused"
    }

    /// Head office deletes a product, perhaps one a shop holds stock of: refused when any movement of it is known
    /// here; otherwise a shop's movement of it, when it arrives, brings the product back.
    private func deleteProduct() async throws -> String {
        let hq = stores["hq"]!
        let ids = try await hq.store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM products ORDER BY id") }
        guard let id = ids.randomElement(using: &random) else { return "no product to delete" }
        try await hq.catalogue.delete(id: id)
        return "delete product \(id) at hq"
    }

    // MARK: - Stores put back or copied

    /// A site's store put back to an older copy of its file: the first time, the copy is taken (as a file-level
    /// snapshot would be); the next time, it is put back over the store, half the time with its watermark too (a whole
    /// folder put back, which the server finds at the next send, and a person answers with `sync resume`).
    private func revertStore(_ site: String, step: Int) async throws -> String {
        guard let copy = storeCopies[site] else {
            let path = directory.appendingPathComponent("\(site)-copy-\(step).sqlite").path
            try copyStore(site, to: path, withFiles: [\.syncWatermark])
            storeCopies[site] = (path, step)
            return "store copied aside"
        }
        storeCopies[site] = nil
        let wholeFolder = Bool.random(using: &random)
        try await replacingStore(site) {
            let files = StoreFiles(path: store(site))
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: files.path + suffix) }
            try FileManager.default.copyItem(atPath: copy.path, toPath: files.path)
            if wholeFolder {
                try? FileManager.default.removeItem(at: files.syncWatermark)
                try? FileManager.default.copyItem(at: StoreFiles(path: copy.path).syncWatermark, to: files.syncWatermark)
            }
        }
        try await forgetUnsent(at: site, since: copy.step)
        if wholeFolder { foldersPutBack.insert(site) }
        return "store put back to its copy of step \(copy.step)\(wholeFolder ? " with its watermark" : "")"
    }

    /// A site restored from its own backup: the first time the backup is made, the next time it is restored.
    private func restoreOwnBackup(_ site: String, step: Int) async throws -> String {
        let folder = BackupFolder(url: directory.appendingPathComponent("backups-\(site)"))
        guard let backup = storeBackups[site] else {
            let listing = try await stores[site]!.backups.create(in: folder, kind: .manual)
            storeBackups[site] = (listing.file, step)
            return "store backed up"
        }
        storeBackups[site] = nil
        try await replacingStore(site) {
            _ = try await Restore.perform(backup.file, over: StoreFiles(path: store(site)), folder: folder, force: true)
        }
        try await forgetUnsent(at: site, since: backup.step)
        return "store restored from its backup of step \(backup.step)"
    }

    /// A site's whole folder copied to a second machine (a cloned virtual machine), which takes a customer and
    /// syncs: refused when the first copy has sent since (STORE_DIVERGED); else the copy becomes the site's, and the
    /// first is refused until a person answers with `sync resume`. Then the second machine is switched off.
    private func copyToSecondMachine(_ site: String, step: Int) async throws -> String {
        let path = directory.appendingPathComponent("\(site)-machine2-\(step).sqlite").path
        try copyStore(site, to: path, withFiles: [\.syncWatermark, \.syncCredential])
        let copy = try Backoffice.open(StoreConfiguration(path: path), seedIfCreated: false)
        let created = try await copy.records.create(
            Customer(code: "CV\(Int.random(in: 0..<12, using: &random))", companyName: "Customer of a copy, step \(step)")
        )
        let engine = ShopSyncEngine(backoffice: copy)
        let outcome = await firstOf(syncTimeout(site, otherwise: .seconds(10)), waitingForTheEnd: configuration.deterministic) {
            do {
                let report = try await engine.syncNow()
                return "up \(report.uploaded)"
            } catch {
                return "\(error)"
            }
        }
        inboxListedBefore.formUnion(try await Self.inboxListing(copy))
        try copy.store.close()
        // What the server took from the copy is acknowledged: it must reach everyone.
        if try await serverRecord(SyncTable.sharedZone(of: "customers")!, created.recordID) != nil {
            customersCreated.insert(created.recordID)
            origins[created.recordID] = (site, step)
            ofGoneMachines.insert(created.recordID)
        }
        return "store copied to a second machine, which synced: \(outcome?.split(separator: "\n").first ?? "abandoned")"
    }

    /// A consistent copy of a site's store file, with the named files beside it.
    private func copyStore(_ site: String, to path: String, withFiles files: [KeyPath<StoreFiles, URL>]) throws {
        try stores[site]!.store.pool.backup(to: DatabaseQueue(path: path))
        for file in files where FileManager.default.fileExists(atPath: StoreFiles(path: store(site))[keyPath: file].path) {
            try FileManager.default.copyItem(at: StoreFiles(path: store(site))[keyPath: file], to: StoreFiles(path: path)[keyPath: file])
        }
    }

    /// Closes a site's store, runs `change` on its files, and opens it again (as the program would, finding out
    /// whether it is an older copy of itself), even when `change` failed.
    private func replacingStore(_ site: String, _ change: () async throws -> Void) async throws {
        inboxListedBefore.formUnion(try await Self.inboxListing(stores[site]!))
        try stores[site]!.store.close()
        do { try await change() } catch {
            stores[site] = try Backoffice.open(StoreConfiguration(path: store(site)), seedIfCreated: false)
            throw error
        }
        stores[site] = try Backoffice.open(StoreConfiguration(path: store(site)), seedIfCreated: false)
    }

    /// The records the server holds live, of those asked for, through one connection.
    private func serverRecords(_ keys: [RecordKey]) async throws -> [RecordKey: SyncRecord] {
        guard !keys.isEmpty else { return [:] }
        let service = try await SyncService.open(database: database)
        let found: [RecordKey: StoredRecord]
        do {
            found = try await service.storage.lookup(container: "acme", scope: .shared, keys: keys)
        } catch {
            await service.close()
            throw error
        }
        await service.close()
        return found.filter { !$0.value.record.deleted }.mapValues(\.record)
    }

    private func serverRecord(_ zone: String, _ recordID: String) async throws -> SyncRecord? {
        let key = RecordKey(zoneName: zone, recordName: recordID)
        return try await serverRecords([key])[key]
    }

    /// After a site's store was put back to its state of `step`: what it wrote since and the server never took was
    /// only ever in that file (nobody acknowledged it), so the checks stop expecting it; all the server took must
    /// come back.
    private func forgetUnsent(at site: String, since step: Int) async throws {
        func since(_ key: String) -> Bool { origins[key].map { $0.site == site && $0.step > step } ?? false }
        let siteZone = SyncTable.siteZone(siteCodes[site]!)
        let customers = SyncTable.sharedZone(of: "customers")!
        let orders = ordersTaken.filter(since)
        let created = customersCreated.sorted().filter(since)
        let written = writes.filter { $0.site == site && $0.step > step }
        let held = try await serverRecords(
            orders.map { RecordKey(zoneName: siteZone, recordName: $0) }
                + created.map { RecordKey(zoneName: customers, recordName: $0) }
                + written.map { RecordKey(zoneName: SyncTable.sharedZone(of: $0.table) ?? siteZone, recordName: $0.recordID) }
        )
        var forgotten: [String] = []
        let unsentOrders = Set(orders.filter { held[RecordKey(zoneName: siteZone, recordName: $0)] == nil })
        forgotten += unsentOrders.sorted().map { orderNumbers[$0] ?? $0 }
        ordersTaken.removeAll { unsentOrders.contains($0) }
        for recordID in created where held[RecordKey(zoneName: customers, recordName: recordID)] == nil {
            customersCreated.remove(recordID)
            forgotten.append(recordID)
        }
        var kept: [Write] = []
        for var write in writes {
            if write.site == site, write.step > step {
                let record = held[RecordKey(zoneName: SyncTable.sharedZone(of: write.table) ?? siteZone, recordName: write.recordID)]
                if record?.fields[write.field] != write.value {
                    forgotten.append("\(write.table) \(write.recordID) \(write.field)")
                    continue
                }
                write.writerLost = true
            }
            kept.append(write)
        }
        writes = kept
        customersWriterLost.formUnion(created.filter(customersCreated.contains))
        ordersWriterLost.formUnion(orders.filter(ordersTaken.contains))
        // Its orders' statuses start again from the older state.
        statusesSeen[site] = [:]
        if !forgotten.isEmpty { log("  never sent, so not expected: \(forgotten.joined(separator: ", "))") }
    }

    // MARK: - Healing

    /// Heals every link and syncs every installation until nothing is pending and nothing moves; a stall past 90 s
    /// is a violation (a store that resumes fetches everything again, which takes head office some 20 s).
    func heal() async throws {
        for proxy in proxies.values { proxy.inject(.none) }
        log("healed")
        let deadline = ContinuousClock.now + .seconds(90)
        var quietRounds = 0
        while quietRounds < 2 {
            guard ContinuousClock.now < deadline else {
                var pending: [String] = []
                for site in sites { pending.append("\(site): \(try await stores[site]!.sync.pendingChanges()) pending") }
                throw Violation(description: "sync stalled: not quiet 90 s after healing (\(pending.joined(separator: ", ")))")
            }
            var quiet = true
            for site in sites {
                do {
                    // A sync that never returns would hold the run for good; past a minute it is the stall it is.
                    let engine = ShopSyncEngine(backoffice: stores[site]!)
                    let attempt: @Sendable () async -> Result<SyncReport, ShopSyncError> = {
                        do throws(ShopSyncError) { return .success(try await engine.syncNow()) } catch { return .failure(error) }
                    }
                    let started = ContinuousClock.now
                    defer {
                        // A slow sync, for a stall's trace.
                        let took = ContinuousClock.now - started
                        if took > .seconds(2) { log("heal sync at \(site) took \(took)") }
                    }
                    guard let result = await firstOf(.seconds(60), attempt) else {
                        throw Violation(description: "sync stalled: a sync at \(site) did not return within 60 s of healing")
                    }
                    let report = try result.get()
                    if report.uploaded + report.downloaded + report.pending + report.waiting > 0 {
                        quiet = false
                        // What kept it moving, for a stall's trace.
                        log(
                            "heal sync at \(site): up \(report.uploaded), down \(report.downloaded), pending \(report.pending), "
                                + "waiting \(report.waiting)"
                        )
                    }
                } catch let violation as Violation {
                    throw violation
                } catch let error as ShopSyncError {
                    log("heal sync at \(site) failed: \(error.message)")
                    try await resumeIfDiverged(site, error)
                    quiet = false
                }
            }
            quietRounds = quiet ? quietRounds + 1 : 0
        }
        log("quiet")
    }

    // MARK: - Checks

    /// Checked after every step at the site that acted: no order without its lines, no shipped order without its
    /// movements, and no status that went backwards.
    private func checkAtomicity(_ site: String) async throws {
        let (orphans, unmoved, statuses) = try await stores[site]!.store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT number FROM orders o WHERE NOT EXISTS (SELECT 1 FROM order_lines l WHERE l.orderID = o.id)"),
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT recordID FROM orders o WHERE status = 'shipped' AND
                          (SELECT count(*) FROM order_lines l WHERE l.orderID = o.id) <>
                          (SELECT count(*) FROM stock_movements m WHERE m.orderID = o.id AND m.reason = 'shipped')
                        """
                ),
                try Row.fetchAll(db, sql: "SELECT recordID, status FROM orders").map { ($0["recordID"] as String, $0["status"] as String) }
            )
        }
        if let number = orphans.first { throw Violation(description: "\(site) shows order \(number) without its lines") }
        // (Demo orders shipped before movements were recorded have none; only the workload's are checked.)
        if let recordID = unmoved.first(where: ordersTaken.contains) {
            throw Violation(description: "\(site) shows shipped order \(orderNumbers[recordID] ?? recordID) without one movement per line")
        }
        var seen = statusesSeen[site, default: [:]]
        for (recordID, status) in statuses {
            if let before = seen[recordID], before != status, before != "new" {
                throw Violation(description: "order \(orderNumbers[recordID] ?? recordID) went from \(before) back to \(status) at \(site)")
            }
            seen[recordID] = status
        }
        statusesSeen[site] = seen
    }

    /// Every synced table's rows by record id, with references as record ids and a movement's location spelled out:
    /// what must agree everywhere.
    func canonicalDump(_ site: String) async throws -> [String: [String: String]] {
        let syncSite = self.syncSite(site)
        return try await stores[site]!.store.pool.read { db in
            var dump: [String: [String: String]] = [:]
            for table in SyncTable.all {
                var rows: [String: String] = [:]
                for recordID in try String.fetchAll(db, sql: "SELECT recordID FROM \(table.name)") {
                    guard var record = try RecordMapping.record(db, table: table, recordID: recordID, site: syncSite, zoneName: "") else {
                        continue
                    }
                    for (name, value) in record.fields {
                        if case .reference(let reference) = value { record.fields[name] = .string("→" + reference.recordName) }
                    }
                    rows[recordID] = record.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "|")
                }
                dump[table.name] = rows
            }
            return dump
        }
    }

    /// What a store knows of a record, to explain a difference: the row, the base the server acknowledged, the
    /// change-log entries and the inbox entries.
    private func syncState(of recordID: String, in table: String, at site: String) async throws -> String {
        try await stores[site]!.store.pool.read { db in
            let row = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE recordID = ?)", arguments: [recordID]) == true
            let tag = try String.fetchOne(db, sql: "SELECT changeTag FROM sync_records WHERE recordID = ?", arguments: [recordID])
            let entries = try Row.fetchAll(
                db,
                sql: "SELECT seq, operation, origin FROM change_log WHERE recordID = ? ORDER BY seq",
                arguments: [recordID]
            )
            .map { "\($0["seq"] as Int64) \($0["operation"] as String) \($0["origin"] as String)" }
            let through = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'uploadedThrough'") ?? "0"
            let inbox = try String.fetchAll(db, sql: "SELECT reason FROM sync_conflicts WHERE recordID = ?", arguments: [recordID])
            let waiting = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sync_waiting WHERE recordName = ?)", arguments: [recordID]) == true
            return "row \(row ? "here" : "absent"), base \(tag ?? "none"), log [\(entries.joined(separator: ", "))] uploaded through \(through), "
                + "waiting \(waiting), inbox \(inbox)"
        }
    }

    /// What the server holds of a record: live or a tombstone, at which place in its zone.
    private func serverState(of recordID: String, in table: String) async throws -> String {
        let zones = SyncTable.sharedZone(of: table).map { [$0] } ?? sites.map { SyncTable.siteZone(siteCodes[$0]!) }
        let service = try await SyncService.open(database: database)
        let found = try await service.storage.lookup(
            container: "acme",
            scope: .shared,
            keys: zones.map { RecordKey(zoneName: $0, recordName: recordID) }
        )
        await service.close()
        guard let stored = found.values.first else { return "nothing (or a tombstone since purged)" }
        return "\(stored.record.deleted ? "a tombstone" : "live") at seq \(stored.seq), tag \(stored.record.recordChangeTag ?? "none")"
    }

    /// FNV-1a of a dump, to print beside the site.
    static func hash(_ dump: [String: [String: String]]) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for (table, rows) in dump.sorted(by: { $0.key < $1.key }) {
            for byte in table.utf8 { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
            for (id, row) in rows.sorted(by: { $0.key < $1.key }) {
                for byte in (id + row).utf8 { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
        }
        return String(value, radix: 16)
    }

    /// Every check of the issue, after healing.
    func checkConverged() async throws {
        // Convergence: the same rows everywhere.
        let reference = try await canonicalDump("hq")
        log("hq dump \(Self.hash(reference))")
        for site in sites.dropFirst() {
            let dump = try await canonicalDump(site)
            log("\(site) dump \(Self.hash(dump))")
            for table in reference.keys.sorted() where dump[table] != reference[table] {
                let mine = dump[table] ?? [:]
                let theirs = reference[table] ?? [:]
                let differing = Set(mine.keys).union(theirs.keys).sorted().first { mine[$0] != theirs[$0] }!
                var states: [String] = []
                for other in sites { states.append("\(other): \(try await syncState(of: differing, in: table, at: other))") }
                states.append("server: \(try await serverState(of: differing, in: table))")
                throw Violation(
                    description: """
                        \(site) and hq differ in \(table), record \(differing):
                          \(site): \(mine[differing] ?? "absent")
                          hq: \(theirs[differing] ?? "absent")
                        what each installation knows of it:
                          \(states.joined(separator: "\n  "))
                        """
                )
            }
        }
        // The server's per-zone checksums agree with what each installation holds.
        let service = try await SyncService.open(database: database)
        let zones = try await service.storage.zones(container: "acme", scope: .shared)
        await service.close()
        for site in sites {
            let bases = try await stores[site]!.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT zoneName, recordID, changeTag FROM sync_records").map {
                    ($0["zoneName"] as String, $0["recordID"] as String, $0["changeTag"] as String)
                }
            }
            var sums: [String: UInt64] = [:]
            for (zone, recordID, tag) in bases { sums[zone, default: 0] ^= ZoneChecksum.of(recordName: recordID, changeTag: tag) }
            for zone in zones where !zone.deleted && sums[zone.zoneID.zoneName, default: 0] != zone.checksum {
                throw Violation(description: "\(site)'s records of zone \(zone.zoneID.zoneName) do not match the server's checksum")
            }
        }
        // No lost update: every order taken and every customer created and kept is everywhere.
        for site in sites {
            let (orders, customers) = try await stores[site]!.store.pool.read { db in
                (try String.fetchSet(db, sql: "SELECT recordID FROM orders"), try String.fetchSet(db, sql: "SELECT recordID FROM customers"))
            }
            if let lost = ordersTaken.first(where: { !orders.contains($0) }) {
                throw Violation(description: "order \(orderNumbers[lost] ?? lost) is missing at \(site)")
            }
            if let lost = customersCreated.sorted().first(where: { !customers.contains($0) }) {
                throw Violation(description: "customer \(lost) is missing at \(site)")
            }
        }
        // Stock: each location's shelf is the sum of its own movements and never negative; every other installation
        // sees the same level for it.
        var shelves: [String: [String: Int]] = [:]
        for site in sites {
            let (wrong, shelf) = try await stores[site]!.store.pool.read { db in
                (
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT p.recordID FROM products p WHERE p.unitsInStock < 0 OR p.unitsInStock <>
                              (SELECT coalesce(sum(delta), 0) FROM stock_movements m WHERE m.productID = p.id AND m.location IS NULL)
                            """
                    ),
                    Dictionary(
                        uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT recordID, unitsInStock FROM products").map {
                            ($0["recordID"] as String, $0["unitsInStock"] as Int)
                        }
                    )
                )
            }
            if let product = wrong.first {
                throw Violation(description: "at \(site), the stock of \(product) is not the sum of its movements, or negative")
            }
            shelves[siteCodes[site]!] = shelf
        }
        for site in sites {
            let levels = try await stores[site]!.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT l.location, p.recordID, l.units FROM stock_levels l JOIN products p ON p.id = l.productID").map {
                    ($0["location"] as String, $0["recordID"] as String, $0["units"] as Int)
                }
            }
            for (location, product, units) in levels {
                if let shelf = shelves[location], shelf[product] != units {
                    throw Violation(
                        description: "\(site) sees \(units) of \(product) at \(location), which holds \(shelf[product].map(String.init) ?? "none")"
                    )
                }
            }
        }
        // Transfers: each left its sender with exactly its quantity, and arrived once at most, never with more.
        for site in sites {
            let wrong = try await stores[site]!.store.pool.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT t.recordID FROM stock_transfers t
                        WHERE (SELECT count(*) FROM stock_movements m
                               WHERE m.transferID = t.id AND m.reason = 'transferOut' AND m.delta = -t.quantity) <> 1
                           OR EXISTS (SELECT 1 FROM stock_movements m
                                      WHERE m.transferID = t.id AND m.reason = 'transferIn' AND m.delta > t.quantity)
                        """
                )
            }
            if let transfer = wrong.first {
                throw Violation(description: "at \(site), transfer \(transfer) lacks its movement out, or received more than was sent")
            }
        }
        // Exactly once, and order numbers unique: no number twice, and no movement applied twice.
        for site in sites {
            let (twiceNumbers, twiceMovements) = try await stores[site]!.store.pool.read { db in
                (
                    try String.fetchAll(db, sql: "SELECT number FROM orders GROUP BY number HAVING count(*) > 1"),
                    try String.fetchAll(db, sql: "SELECT recordID FROM stock_movements GROUP BY recordID HAVING count(*) > 1")
                )
            }
            if let number = twiceNumbers.first { throw Violation(description: "order number \(number) is used twice at \(site)") }
            if let movement = twiceMovements.first { throw Violation(description: "movement \(movement) is applied twice at \(site)") }
            try await checkAtomicity(site)
        }
        try await checkInbox()
        try await checkNumbersGivenTwice()
        for site in sites {
            log("\(site): \(try await stores[site]!.sync.conflicts(all: true).count) values in the conflict inbox")
        }
    }

    /// The values an installation's inbox lists as lost, as `valueKey`s.
    private static func inboxListing(_ backoffice: Backoffice) async throws -> Set<String> {
        let entries = try await backoffice.store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT tableName, recordID, field, lostValue FROM sync_conflicts WHERE lostValue IS NOT NULL").map {
                ($0["tableName"] as String, $0["recordID"] as String, $0["field"] as String, $0["lostValue"] as String)
            }
        }
        var listed: Set<String> = []
        for (table, recordID, field, json) in entries {
            let lost = try JSONDecoder().decode(FieldValue.self, from: Data(json.utf8))
            // A whole record (a refused change, an edit a delete discarded) lists every field it had.
            if field == "*", case .string(let json) = lost, let record = try? JSONDecoder().decode(SyncRecord.self, from: Data(json.utf8)) {
                for (name, value) in record.fields { listed.insert(valueKey(table, recordID, name, value)) }
            } else {
                listed.insert(valueKey(table, recordID, field, lost))
            }
        }
        return listed
    }

    /// A number given twice (a whole folder put back to an older copy gives again the numbers it gave since, until it
    /// syncs) is settled by renaming the later order: that order keeps everything else, and an inbox says so.
    private func checkNumbersGivenTwice() async throws {
        let given = Dictionary(grouping: ordersTaken, by: { orderNumbers[$0]! }).filter { $0.value.count > 1 }
        guard !given.isEmpty else { return }
        let (numbers, renamed) = try await stores["hq"]!.store.pool.read { db in
            (
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT recordID, number FROM orders").map {
                        ($0["recordID"] as String, $0["number"] as String)
                    }
                ),
                try String.fetchSet(db, sql: "SELECT recordID FROM sync_conflicts WHERE tableName = 'orders' AND field = 'number'")
            )
        }
        var listed = renamed
        for site in sites where site != "hq" {
            listed.formUnion(
                try await stores[site]!.store.pool.read { db in
                    try String.fetchSet(db, sql: "SELECT recordID FROM sync_conflicts WHERE tableName = 'orders' AND field = 'number'")
                }
            )
        }
        for (number, recordIDs) in given.sorted(by: { $0.key < $1.key }) {
            // Only a whole folder put back, before it syncs, may give a number again.
            if recordIDs.filter({ !ordersFromFoldersPutBack.contains($0) }).count > 1 {
                throw Violation(description: "order number \(number) was given twice by a store that knew it was put back, or was never put back")
            }
            let moved = recordIDs.filter { numbers[$0] != number }
            guard moved.count == recordIDs.count - 1, moved.allSatisfy(listed.contains) else {
                throw Violation(
                    description:
                        "order number \(number) was given to \(recordIDs.count) orders and not settled by renaming, with an inbox entry, all but one"
                )
            }
            log("order number \(number), given twice, settled: \(moved.map { numbers[$0] ?? "?" }.joined(separator: ", ")), in the inbox")
        }
    }

    /// The inbox lists every discarded value: each value the workload wrote is the final one, or some site had it in
    /// front of it when it changed or deleted it, or some installation's inbox lists it as lost.
    private func checkInbox() async throws {
        // An entry counts when an inbox listed it, even if that store was later put back to a copy from before it
        // (which loses its inbox with everything else it did since), or was a second machine now gone.
        var listed = inboxListedBefore
        for site in sites { listed.formUnion(try await Self.inboxListing(stores[site]!)) }
        var unlisted: [String] = []
        var (kept, superseded, inInbox) = (0, 0, 0)
        for write in writes {
            let key = Self.valueKey(write.table, write.recordID, write.field, write.value)
            let final = try await fields(at: "hq", table: write.table, recordID: write.recordID)
            if final?[write.field] == write.value {
                kept += 1
            } else if seenValues.contains(key) {
                superseded += 1
            } else if listed.contains(key) {
                inInbox += 1
            } else {
                unlisted.append("step \(write.step) at \(write.site): \(key)")
            }
        }
        log(
            "inbox check: \(writes.count) values written: \(kept) stand, \(superseded) changed or deleted by a site that had them, "
                + "\(inInbox) discarded and in an inbox, \(unlisted.count) discarded without an inbox entry"
        )
        if !unlisted.isEmpty {
            throw Violation(description: "values discarded that no inbox lists:\n  " + unlisted.joined(separator: "\n  "))
        }
    }
}

/// `body`'s answer, or nil after `timeout`. A body that ignores its cancellation is left behind, not waited for
/// (unless `waitingForTheEnd`): a task group would wait for it, and a sync that never returns would hold the whole run.
func firstOf<T: Sendable>(
    _ timeout: Duration,
    waitingForTheEnd: Bool = false,
    _ body: @escaping @Sendable () async -> T
) async -> T? {
    let once = Once()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let work = Task {
            let value = await body()
            if once.claim() { continuation.resume(returning: value) }
        }
        Task {
            try? await Task.sleep(for: timeout)
            if once.claim() {
                work.cancel()
                // Cancelled work that goes on while the caller does not is a race the caller may not want.
                if waitingForTheEnd { _ = await firstOf(.seconds(120)) { await work.value } }
                continuation.resume(returning: nil)
            }
        }
    }
}

/// True for the first caller only.
final class Once: Sendable {
    private let done = Atomic(false)
    func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
