import Foundation
import GRDB
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// A company on a real sync server: head office and shops, each a real store driven by the real `northwind`.
final class Company: Sendable {
    let directory: URL
    let database: String
    let server: ServerProcess
    /// Every installation reaches the server through it, so a test can cut the network.
    let proxy: FaultProxy

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("shop-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = directory.appendingPathComponent("sync.sqlite").path
        server = try ServerProcess.start(["serve", "--database", database, "--port", "0", "--rate", "100000"])
        proxy = try FaultProxy(upstreamPort: server.port)
    }

    deinit {
        proxy.close()
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The network goes down, as far as the installations can tell.
    func cutNetwork() { proxy.cut(true) }

    /// The network comes back.
    func restoreNetwork() { proxy.cut(false) }

    var url: String { "http://127.0.0.1:\(proxy.port)" }

    func store(_ name: String) -> String { directory.appendingPathComponent("\(name).sqlite").path }

    /// A one-time enrolment token, as `northwind-sync-server enroll` makes it, made in this process (quicker).
    func token(role: Role) async throws -> String {
        let service = try await SyncService.open(database: database)
        let token = try await service.createEnrollment(container: "acme", role: role)
        await service.close()
        return token
    }

    /// `northwind ARGUMENTS --store STORE`, the real program, which must succeed.
    @discardableResult
    func northwind(_ arguments: [String], store: String) async throws -> String {
        let result = try await CLI.run(arguments + ["--store", self.store(store)])
        guard result.status == 0 else {
            throw CLIError(description: "northwind \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)\(result.stdout)")
        }
        return result.stdout
    }

    /// `northwind sync now`, run in this process by the same engine.
    @discardableResult
    func sync(_ name: String) async throws -> SyncReport {
        try await ShopSyncEngine(backoffice: try open(name)).syncNow()
    }

    /// Head office with demo data, joined and uploaded; then `shops` empty stores, joined and downloaded.
    func start(shops: [String]) async throws {
        let hq = try Backoffice.open(StoreConfiguration(path: store("hq")))
        _ = try await ShopSyncEngine.join(hq, server: url, token: try await token(role: .hq))
        try await sync("hq")
        for shop in shops {
            let backoffice = try Backoffice.open(StoreConfiguration(path: store(shop)), seedIfCreated: false)
            _ = try await ShopSyncEngine.join(backoffice, server: url, token: try await token(role: .shop))
            try await sync(shop)
        }
    }

    func open(_ name: String) throws -> Backoffice {
        Backoffice(store: try Store(StoreConfiguration(path: store(name))))
    }
}

@Suite("Shop sync end to end", .serialized)
struct ShopSyncEndToEndTests {
    /// Every synced table's rows, by record id, with their synced columns: what must agree everywhere.
    static func canonicalDump(_ backoffice: Backoffice) throws -> [String: Int] {
        try backoffice.store.pool.read { db in
            var counts: [String: Int] = [:]
            for table in [
                "categories", "suppliers", "products", "customers", "employees", "shippers", "orders", "order_lines", "regions", "territories",
            ] {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            return counts
        }
    }

    @Test func aNewShopDownloadsHeadOfficesData() async throws {
        // Given head office with demo data, joined and synced
        let company = try Company()
        // When an empty shop joins and syncs
        try await company.start(shops: ["oxf"])
        // Then it holds every catalogue row, customer and order that head office holds
        let hq = try Self.canonicalDump(try company.open("hq"))
        let shop = try Self.canonicalDump(try company.open("oxf"))
        #expect(hq["products"] ?? 0 > 0)
        #expect(shop == hq)
    }

    @Test func editsOfDifferentFieldsAtTwoSitesBothStand() async throws {
        // Given head office and a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let hqProduct = try #require(try await hq.catalogue.list().items.first).product
        let shopID = try #require(
            try await shop.store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE recordID = ?", arguments: [hqProduct.recordID])
            }
        )
        // When head office changes the price and the shop the name of the same product, then both sync
        var priced = hqProduct
        priced.unitPrice = Money(cents: hqProduct.unitPrice.cents + 100)
        _ = try await hq.catalogue.update(priced)
        var renamed = try shop.catalogue.product(id: shopID).product
        renamed.name = "Renamed at the shop"
        _ = try await shop.catalogue.update(renamed)
        try await company.sync("hq")
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then both installations hold the new name and the new price, and no conflict was recorded
        let atHQ = try hq.catalogue.product(id: try #require(hqProduct.id)).product
        let atShop = try shop.catalogue.product(id: shopID).product
        #expect(atHQ.name == "Renamed at the shop")
        #expect(atHQ.unitPrice == priced.unitPrice)
        #expect(atShop.name == atHQ.name)
        #expect(atShop.unitPrice == atHQ.unitPrice)
        #expect(try await hq.sync.status().openConflicts == 0)
        #expect(try await shop.sync.status().openConflicts == 0)
    }

    @Test func headOfficesFirstSyncFetchesNoneOfItsOwnRecordsBack() async throws {
        // Given head office with demo data, joined
        let company = try Company()
        let hq = try Backoffice.open(StoreConfiguration(path: company.store("hq")))
        _ = try await ShopSyncEngine.join(hq, server: company.url, token: try await company.token(role: .hq))
        // When it syncs for the first time, uploading everything
        let first = try await company.sync("hq")
        // Then the answers to its batches spare it fetching them back, and a shop joining later still gets it all
        #expect(first.uploaded > 1000)
        #expect(first.fetched == 0)
        #expect(try await company.sync("hq").fetched == 0)
        let shop = try Backoffice.open(StoreConfiguration(path: company.store("oxf")), seedIfCreated: false)
        _ = try await ShopSyncEngine.join(shop, server: company.url, token: try await company.token(role: .shop))
        #expect(try await company.sync("oxf").fetched > 1000)
        #expect(try Self.canonicalDump(try company.open("oxf")) == (try Self.canonicalDump(try company.open("hq"))))
    }

    @Test func aShopsChangeMadeBeforeHeadOfficesBatchStillReachesHeadOffice() async throws {
        // Given head office and a shop in sync, and the shop renaming a product and syncing
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let products = try await hq.catalogue.list().items.map(\.product)
        let renamedAtShop = try #require(products.first)
        var renamed = try shop.catalogue.product(id: try InteractiveEditTests.id(shop, renamedAtShop.recordID)).product
        renamed.name = "Renamed at the shop"
        _ = try await shop.catalogue.update(renamed)
        try await company.sync("oxf")
        // When head office changes another product of the same zone and syncs: its batch follows the shop's change
        var priced = try #require(products.dropFirst().first)
        priced.unitPrice = Money(cents: priced.unitPrice.cents + 100)
        _ = try await hq.catalogue.update(priced)
        let report = try await company.sync("hq")
        // Then its token did not move past the shop's change: it fetched that and its own batch after it, and holds the
        // shop's name (a token moved past it would have been caught only by the zone's checksum, refetching it whole)
        #expect(report.fetched == 2)
        #expect(try hq.catalogue.product(id: try #require(renamedAtShop.id)).product.name == "Renamed at the shop")
    }

    @Test func aStoreWithDataCannotJoinACompanyWithData() async throws {
        // Given a company whose head office has uploaded its data
        let company = try Company()
        try await company.start(shops: [])
        // When a second store with its own demo data tries to join
        let result = try await CLI.run(["sync", "join", company.url, try await company.token(role: .shop), "--store", company.store("other")])
        // Then it is refused with what to do instead
        #expect(result.status != 0)
        #expect(result.stderr.contains("Join with an empty store"))
    }

    @Test func syncNowFailsAndStatusSaysOfflineWhenTheServerIsGone() async throws {
        // Given a shop in sync, then the server stops
        let company = try Company()
        try await company.start(shops: ["oxf"])
        company.cutNetwork()
        // When the shop changes a product and syncs
        let shop = try company.open("oxf")
        var product = try #require(try await shop.catalogue.list().items.first).product
        product.name = "Changed offline"
        _ = try await shop.catalogue.update(product)
        let result = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        // Then the sync fails, and the status shows the pending change and since when the server is unreachable
        #expect(result.status != 0)
        let status = try await shop.sync.status()
        #expect(status.pending > 0)
        #expect(status.offlineSince != nil)
        #expect(status.lastError?.contains("Cannot reach the sync server") == true)
    }

    @Test func anOrderTakenOfflineReachesHeadOfficeOnReconnect() async throws {
        // Given a shop in sync, whose network then goes down
        let company = try Company()
        try await company.start(shops: ["oxf"])
        company.cutNetwork()
        // When the shop takes a phone order for two products
        let shop = try company.open("oxf")
        let products = try await shop.catalogue.list().items.prefix(2).map(\.product)
        let customer: String = try #require(
            try await shop.store.pool.read { db in try String.fetchOne(db, sql: "SELECT code FROM customers LIMIT 1") }
        )
        let order = try await shop.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: products.compactMap(\.id).map { OrderLineDraft(productID: $0, quantity: 2) })
        )
        let offline = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        // and the network comes back, and both sync
        company.restoreNetwork()
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then the sync failed while offline, and head office now has the order with both its lines
        #expect(offline.status != 0)
        let atHQ = try await company.open("hq").orders.order(number: order.order.number)
        #expect(atHQ.lines.count == 2)
        #expect(atHQ.customer.code == customer)
    }

    @Test func theSameFieldChangedAtTwoSitesGoesToTheLaterEditAndTheOtherCanBeRestored() async throws {
        // Given head office and a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let product = try #require(try await hq.catalogue.list().items.first).product
        let shopID = try #require(
            try await shop.store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE recordID = ?", arguments: [product.recordID])
            }
        )
        // When the shop changes the price offline, head office changes it later, and head office syncs first
        var atShop = try shop.catalogue.product(id: shopID).product
        atShop.unitPrice = Money(cents: 111)
        _ = try await shop.catalogue.update(atShop)
        try await Task.sleep(for: .milliseconds(20))
        var atHQ = product
        atHQ.unitPrice = Money(cents: 222)
        _ = try await hq.catalogue.update(atHQ)
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the later edit (head office's) holds at the shop, and the shop's inbox keeps its own price
        #expect(try shop.catalogue.product(id: shopID).product.unitPrice == Money(cents: 222))
        let conflict = try #require(try await shop.sync.conflicts().first)
        #expect(conflict.field == "unitPriceCents")
        #expect(conflict.lost == "111")
        #expect(conflict.kept == "222")
        // And when the shop's manager keeps the shop's price, it reaches head office
        try await company.northwind(["sync", "resolve", String(conflict.id), "--keep", "mine"], store: "oxf")
        try await company.sync("oxf")
        try await company.sync("hq")
        #expect(try hq.catalogue.product(id: try #require(product.id)).product.unitPrice == Money(cents: 111))
        #expect(try await shop.sync.conflicts().isEmpty)
    }

    @Test func aServingShopSyncsOnTheServersNoticeAndOnItsOwnCommits() async throws {
        // Given head office and a shop in sync, the shop serving its web app (syncing only when prompted)
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let serving = try ServingStore.start(store: company.store("oxf"))
        defer { serving.stop() }
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let products = try await hq.catalogue.list().items.prefix(2).map(\.product)
        // When head office renames a product and syncs
        var renamed = products[0]
        renamed.name = "Renamed at head office"
        _ = try await hq.catalogue.update(renamed)
        try await company.sync("hq")
        // Then the shop has it soon after, without anyone running sync there
        let recordID = renamed.recordID
        try await eventually("the shop to receive head office's rename") {
            try await productName(recordID, at: shop) == "Renamed at head office"
        }
        // And when the shop renames another product, its server sends it by itself
        let shopID = try #require(
            try await shop.store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE recordID = ?", arguments: [products[1].recordID])
            }
        )
        var local = try shop.catalogue.product(id: shopID).product
        local.name = "Renamed at the shop"
        _ = try await shop.catalogue.update(local)
        try await eventually("the shop's change to be sent") { try await shop.sync.pendingChanges() == 0 }
        try await company.sync("hq")
        #expect(try hq.catalogue.product(id: try #require(products[1].id)).product.name == "Renamed at the shop")
        #expect(try shop.sync.badge()?.text == "In sync")
    }
}

extension ShopSyncEndToEndTests {
    @Test func twoShopsCreatingTheSameCustomerCodeOfflineEndWithBothCustomersRenamedAlike() async throws {
        // Given head office and a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        // When the shop, then head office, each create a customer with the code NEWCO before syncing
        _ = try await shop.records.create(Customer(code: "NEWCO", companyName: "New Company (shop)"))
        try await Task.sleep(for: .milliseconds(20))
        _ = try await hq.records.create(Customer(code: "NEWCO", companyName: "New Company (head office)"))
        for store in ["oxf", "hq", "oxf", "hq"] { try await company.sync(store) }
        // Then both installations hold both customers: the earlier keeps NEWCO, the later is renamed with its site code
        let hqSite = try await hq.sync.siteCode()
        let codes: @Sendable (Backoffice) async throws -> [String: String] = { b in
            try await b.store.pool.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT code, companyName FROM customers WHERE code LIKE 'NEWCO%'")
                        .map { ($0["code"] as String, $0["companyName"] as String) }
                )
            }
        }
        let expected = ["NEWCO": "New Company (shop)", "NEWCO-\(hqSite)": "New Company (head office)"]
        #expect(try await codes(hq) == expected)
        #expect(try await codes(shop) == expected)
        #expect(try await hq.sync.pendingChanges() == 0)
        #expect(try await shop.sync.pendingChanges() == 0)
    }
}

extension ShopSyncEndToEndTests {
    @Test func anotherSitesOrderIsReadOnlyHere() async throws {
        // Given a shop that downloaded head office's orders
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let shop = try company.open("oxf")
        let hqSite = try await company.open("hq").sync.siteCode()
        let newOrders = try await shop.orders.list(OrderQuery(status: .new)).items
        let number = try #require(newOrders.first(where: { $0.order.number.hasPrefix(hqSite) })?.order.number)
        // When the shop tries to cancel one of them
        let error = await northwindError { _ = try await shop.orders.cancel(number: number) }
        // Then it is refused, naming the site that owns it, and the order is still new
        #expect(error == .invalidState("Order \(number) was taken at site \(hqSite); only that site can change, execute or cancel it."))
        #expect(try await shop.orders.order(number: number).order.status == .new)
    }
}

extension ShopSyncEndToEndTests {
    @Test func anExpiredTokenRefetchesTheZoneKeepingWhatIsPendingHere() async throws {
        // Given a shop holding two customers head office made, then away while head office deletes one of them and
        // the administrator purges every deletion
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let gone = try await hq.records.create(Customer(code: "GONE1", companyName: "Closing down"))
        let kept = try await hq.records.create(Customer(code: "KEPT1", companyName: "Staying"))
        try await company.sync("hq")
        try await company.sync("oxf")
        try await hq.records.delete(Customer.self, id: try #require(gone.id))
        try await company.sync("hq")
        let purge = try await CLI.run(["purge", "--database", company.database, "--days", "0"], program: "northwind-sync-server")
        #expect(purge.status == 0)
        // and the shop edits the other one meanwhile
        let shopKept = try #require(try await shop.store.pool.read { db in try Customer.filter(Column("code") == "KEPT1").fetchOne(db) })
        var edited = shopKept
        edited.contactName = "Edited at the shop"
        _ = try await shop.records.update(edited)
        // When the shop syncs (its token for the customers zone is older than the purge)
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then the deleted customer is gone at the shop, and the shop's edit survived and reached head office
        let codes = try await shop.store.pool.read { db in try String.fetchSet(db, sql: "SELECT code FROM customers WHERE code IN ('GONE1', 'KEPT1')")
        }
        #expect(codes == ["KEPT1"])
        let atHQ = try await hq.store.pool.read { db in try Customer.fetchOne(db, key: kept.id) }
        #expect(atHQ?.contactName == "Edited at the shop")
    }
}

/// The name of the product `recordID` in a store (ids differ between stores; sync ids do not).
func productName(_ recordID: String, at backoffice: Backoffice) async throws -> String? {
    try await backoffice.store.pool.read { db in
        try String.fetchOne(db, sql: "SELECT name FROM products WHERE recordID = ?", arguments: [recordID])
    }
}

/// Polls `condition` every 100 ms until it holds, or fails after `timeout`.
func eventually(_ what: String, timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw CLIError(description: "timed out after \(timeout) waiting for \(what)")
}

/// `northwind serve` on a joined store, syncing by itself only when something prompts it.
final class ServingStore: Sendable {
    let process: ChildProcess

    private init(process: ChildProcess) { self.process = process }

    static func start(store: String) throws -> ServingStore {
        guard let binary = CLI.binary("northwind") else { throw CLIError(description: "no northwind binary: build it first") }
        let process = try ChildProcess(binary.path, ["serve", "--store", store, "--port", "0", "--sync-interval", "3600"], output: .pipe)
        let output = process.output!
        let seen = process.read(output, until: { $0.contains("Syncing with") })
        guard seen.contains("Syncing with") else { throw CLIError(description: "northwind serve stopped: \(seen)") }
        drain(output)
        return ServingStore(process: process)
    }

    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        if !process.stop(within: .seconds(20)) {
            Issue.record("northwind serve (pid \(process.pid)) was still running 20 s after SIGTERM", sourceLocation: sourceLocation)
        }
    }
}

/// Debian's `faketime`, which runs a real process with its clock moved. CI sets `NORTHWIND_FAKETIME=require` so that
/// a missing faketime fails the run instead of skipping the test.
enum FakeTime {
    static let path = "/usr/bin/faketime"
    static let installed = FileManager.default.isExecutableFile(atPath: path)
    static let required = ProcessInfo.processInfo.environment["NORTHWIND_FAKETIME"] == "require"
    static var enabled: Bool { installed || required }
    static let skipMessage = "needs Debian's faketime (apt-get install faketime)"

    /// `northwind ARGUMENTS` with its clock moved by `offset` (faketime's syntax, e.g. "+1d").
    static func northwind(_ arguments: [String], offset: String) async throws -> CLI.Result {
        guard installed else { throw CLIError(description: skipMessage) }
        guard let binary = CLI.binary("northwind") else { throw CLIError(description: "no northwind binary: build it first") }
        let (termination, stdout, stderr) = try await ChildProcess.runOffPool(path, ["-f", offset, binary.path] + arguments)
        return CLI.Result(status: termination.status, stdout: stdout, stderr: stderr, crashed: termination.signalled)
    }
}

@Suite("Shop sync with a wrong clock", .enabled(if: FakeTime.enabled, Comment(rawValue: FakeTime.skipMessage)))
struct ShopSyncClockTests {
    @Test func aShopWhoseClockIsADayAheadSendsNothingUntilItIsRight() async throws {
        // Given a shop in sync that renames a product
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let shop = try company.open("oxf")
        var product = try #require(try await shop.catalogue.list().items.first).product
        product.name = "Renamed with a wrong clock"
        _ = try await shop.catalogue.update(product)
        // When it syncs with its clock a day ahead
        let skewed = try await FakeTime.northwind(["sync", "now", "--store", company.store("oxf")], offset: "+1d")
        // Then nothing is sent, and the message says what to do
        #expect(skewed.status != 0)
        #expect(skewed.stderr.contains("minutes ahead of the sync server's"))
        #expect(try await shop.sync.pendingChanges() > 0)
        // And once the clock is right, the change goes up
        try await company.sync("oxf")
        #expect(try await shop.sync.pendingChanges() == 0)
    }

    @Test(arguments: [("-1d", "behind"), ("+10m", "ahead of"), ("-10m", "behind")])
    func aShopWhoseClockIsOffEitherWaySendsNothing(offset: String, words: String) async throws {
        // Given a shop in sync with a change to send
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let shop = try company.open("oxf")
        _ = try await shop.records.create(Customer(code: "CLOCK", companyName: "Made before the clock went wrong"))
        // When it syncs with its clock off by the offset
        let skewed = try await FakeTime.northwind(["sync", "now", "--store", company.store("oxf")], offset: offset)
        // Then nothing is sent, and the message says which way the clock is off
        #expect(skewed.status != 0)
        #expect(skewed.stderr.contains("minutes \(words) the sync server's"), "\(skewed.stderr)")
        #expect(try await shop.sync.pendingChanges() > 0)
    }

    @Test func anEditMadeWhileTheClockRanADayAheadGoesUpOnceItIsRightWithoutWinningEveryMerge() async throws {
        // Given a shop that added a customer while its clock ran a day ahead
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let added = try await FakeTime.northwind(
            ["customers", "add", "--set", "code=AHEAD", "--set", "companyName=Added a day ahead", "--store", company.store("oxf")],
            offset: "+1d"
        )
        // When the clock is right again and the shop syncs, then head office renames the customer and both sync
        try await company.sync("oxf")
        try await company.sync("hq")
        let hq = try company.open("hq")
        var customer = try hq.people.customer(code: "AHEAD")
        customer.companyName = "Renamed at head office"
        _ = try await hq.records.update(customer)
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the customer went up (its clock was not refused), and head office's later rename stands everywhere
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try company.open("oxf").people.customer(code: "AHEAD").companyName == "Renamed at head office")
        #expect(try await company.open("oxf").sync.pendingChanges() == 0)
    }
}
