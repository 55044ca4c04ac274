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
    var random: SplitMix64
    private(set) var trace: [String] = []
    let directory: URL
    let database: String
    /// The run's own PostgreSQL cluster, when the server stores in PostgreSQL.
    let postgresDirectory: String?
    var servers: [ServerProcess]
    var proxies: [String: FaultProxy] = [:]
    let sites: [String]
    var stores: [String: Backoffice] = [:]
    var siteCodes: [String: String] = [:]

    /// What the workload did, for the checks: every order taken (by record ID, with the number it was given), every
    /// customer created and not deleted.
    var ordersTaken: [String] = []
    var orderNumbers: [String: String] = [:]
    var customersCreated: Set<String> = []
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
    var writes: [Write] = []
    /// Customers and orders sent, then lost by the site that wrote them in a restore of its own.
    var customersWriterLost: Set<String> = []
    var ordersWriterLost: Set<String> = []
    /// Sites whose whole folder was put back and that have not synced since: they cannot know, and may give again a
    /// number they gave; and the orders they took meanwhile.
    var foldersPutBack: Set<String> = []
    var ordersFromFoldersPutBack: Set<String> = []
    /// What inboxes listed before their store was put back, restored, or switched off (a second machine).
    var inboxListedBefore: Set<String> = []
    /// Values some site had in front of it when it changed or deleted them: superseded knowingly, not discarded.
    var seenValues: Set<String> = []
    /// Determinism: record ids are random, so each record a step creates gets a name from the step instead.
    private(set) var names: [String: String] = [:]
    /// The statuses each site has shown for each order, in the order seen.
    var statusesSeen: [String: [String: String]] = [:]
    /// The server's backup taken mid-run, which the next restore puts back.
    var serverBackup: String?
    /// Where and at which step each order was taken and each customer created: a store put back to an older state
    /// may lose what it never sent, and only that.
    var origins: [String: (site: String, step: Int)] = [:]
    /// A site's store file copied aside mid-run (with its watermark, as a whole-folder copy would), which the next
    /// revert puts back; and a site's own backup, which the next restore puts back.
    var storeCopies: [String: (path: String, step: Int)] = [:]
    var storeBackups: [String: (file: URL, step: Int)] = [:]
    /// Customers a second machine wrote before it was switched off: only the server held them for it, so a server
    /// restored from an older backup loses them (no installation that wrote them is left to send them again).
    var ofGoneMachines: Set<String> = []

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
    func instance(of site: String) -> Int { sites.firstIndex(of: site)! % servers.count }

    static func serverArguments(_ database: String) -> [String] { ["serve", "--database", database, "--port", "0", "--rate", "100000"] }

    func store(_ site: String) -> String { directory.appendingPathComponent("\(site).sqlite").path }

    func log(_ line: String) { trace.append(line) }

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
            \(count("purchase order sent")) purchase orders sent, \(count("purchase receipt")) receipts (\(count("(over)")) beyond the order), \(count("purchase reversal")) reversals, \(count("forged movement")) forged movements, \(count("delete product")) product deletions, \(count("clock -")) syncs with the clock behind, \
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

    static let storeFaultsOften = ProcessInfo.processInfo.environment["NORTHWIND_CONVERGENCE_STORE_FAULTS"] != nil

    func perform(roll: Int, at site: String, step: Int) async throws -> String {
        let backoffice = stores[site]!
        do {
            switch roll {
            case 0..<14: return try await editProduct(backoffice, site: site, step: step)
            case 14..<21: return try await createCustomer(backoffice, site: site, step: step)
            case 21..<27: return try await editCustomer(backoffice, site: site, step: step)
            case 27..<30: return try await deleteCustomer(backoffice, site: site)
            case 30..<42: return try await takeOrder(backoffice, site: site, step: step)
            case 42..<49: return try await fulfil(backoffice, site: site)
            case 49..<52: return try await cancelOrder(backoffice, site: site)
            case 52..<56: return try await receiveStock(backoffice, site: site)
            case 56..<59: return try await buy(backoffice, site: site, step: step)
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

    func randomProduct(_ backoffice: Backoffice) async throws -> Product? {
        try await backoffice.store.pool.read { db in try Product.order(Column("id")).fetchAll(db) }.randomElement(using: &random)
    }

    func editProduct(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
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
    func changePicture(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
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

    func createCustomer(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
        // A small pool of codes, so that two sites create the same one.
        let code = "CV\(Int.random(in: 0..<12, using: &random))"
        let created = try await backoffice.records.create(Customer(code: code, companyName: "Customer of step \(step)"))
        customersCreated.insert(created.recordID)
        origins[created.recordID] = (site, step)
        return "create customer \(code) \(created.recordID)"
    }

    func editCustomer(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
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

    func deleteCustomer(_ backoffice: Backoffice, site: String) async throws -> String {
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
    func takeOrder(_ backoffice: Backoffice, site: String, step: Int) async throws -> String {
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

    func ownNewOrder(_ backoffice: Backoffice, site: String) async throws -> String? {
        let code = siteCodes[site]!
        let numbers = try await backoffice.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT number FROM orders WHERE status = 'new' AND number LIKE ? ORDER BY number", arguments: ["\(code)-%"])
        }
        return numbers.randomElement(using: &random)
    }

    /// Half the time an order the shelf can fill, as staff would pick; else any (which may be refused).
    func executeOrder(_ backoffice: Backoffice, site: String) async throws -> String {
        let code = siteCodes[site]!
        let fillable = try await backoffice.store.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT number FROM orders o WHERE status = 'new' AND number LIKE ? AND NOT EXISTS (
                      SELECT 1 FROM order_lines l JOIN products p ON p.id = l.productID
                      WHERE l.orderID = o.id AND l.quantity - ifnull((SELECT sum(quantity) FROM shipment_lines WHERE orderLineID = l.id), 0) > p.unitsInStock)
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

    func cancelOrder(_ backoffice: Backoffice, site: String) async throws -> String {
        guard let number = try await ownNewOrder(backoffice, site: site) else { return "no order to cancel" }
        _ = try await backoffice.orders.cancel(number: number)
        return "cancel order \(number)"
    }

    /// Goods in, half the time for a product this site has orders waiting for (so that executions can succeed).
    func receiveStock(_ backoffice: Backoffice, site: String) async throws -> String {
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

    func takeStock(_ backoffice: Backoffice) async throws -> String {
        guard let product = try await randomProduct(backoffice), let id = product.id else { return "no product" }
        let counted = Int.random(in: 0...30, using: &random)
        _ = try await backoffice.stock.adjust(productID: id, countedQuantity: counted)
        return "stock take of \(product.recordID): \(counted)"
    }

    /// A few units of something on this shelf, to another installation this one has heard of.
    func sendTransfer(_ backoffice: Backoffice, site: String) async throws -> String {
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
    func receiveTransfer(_ backoffice: Backoffice, site: String) async throws -> String {
        let waiting = try await backoffice.stock.transfers(inTransitOnly: true).filter { $0.transfer.toLocation == siteCodes[site] }
        guard let status = waiting.randomElement(using: &random), let id = status.transfer.id else { return "nothing in transit" }
        let units = Int.random(in: max(1, status.transfer.quantity - 2)...status.transfer.quantity, using: &random)
        _ = try await backoffice.stock.receiveTransfer(id: id, units: units)
        return "receive transfer \(status.transfer.recordID): \(units) of \(status.transfer.quantity)"
    }

    /// Runs a write at a site and notes each field it changed, with the value it replaced (which that site had seen).
    func recordingWrites(
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

    func recordingWrites(at site: String, step: Int, table: String, rowID: Int64, _ write: () async throws -> Void) async throws {
        let recordID = try await stores[site]!.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT recordID FROM \(table) WHERE id = ?", arguments: [rowID])
        }
        guard let recordID else { return try await write() }
        try await recordingWrites(at: site, step: step, table: table, recordID: recordID, write)
    }

    /// A row's travelling fields at a site, as sync sends them (references as record ids, pictures by hash).
    func fields(at site: String, table name: String, recordID: String) async throws -> [String: FieldValue]? {
        let syncSite = self.syncSite(site)
        return try await stores[site]!.store.pool.read { db in
            try RecordMapping.record(db, table: SyncTable.byName[name]!, recordID: recordID, site: syncSite, zoneName: "")?.fields
        }
    }

    /// What reading records needs of a site: its code (a movement's location) and its binaries (pictures' hashes).
    func syncSite(_ site: String) -> SyncSite {
        SyncSite(
            membership: SyncMembership(server: "", container: "", siteCode: siteCodes[site]!, role: "", credential: ""),
            binaries: stores[site]!.store.binaries
        )
    }

    static func valueKey(_ table: String, _ recordID: String, _ field: String, _ value: FieldValue?) -> String {
        "\(table) \(recordID) \(field) \(value.map { "\($0)" } ?? "absent")"
    }

    /// Every synced row's record id at a site, by table.
    func recordIDs(at site: String) async throws -> [String: Set<String>] {
        try await stores[site]!.store.pool.read { db in
            var ids: [String: Set<String>] = [:]
            for table in SyncTable.all { ids[table.name] = try String.fetchSet(db, sql: "SELECT recordID FROM \(table.name)") }
            return ids
        }
    }

    /// Names the records a step created: the step, the table, and the rank of the record's content (parents first,
    /// so that a child's content names its parent).
    func name(created before: [String: Set<String>], at site: String, step: Int) async throws {
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
    func normalized(_ fields: [String: FieldValue]) -> String {
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
    let done = Atomic(false)
    func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
