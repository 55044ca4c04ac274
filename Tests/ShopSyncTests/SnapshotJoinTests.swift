import Foundation
import GRDB
@_spi(SyncEngine) import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// A new shop's first download, loaded whole from the zones fetched from scratch (`SyncEngineSide.loadSnapshot`).
@Suite("Joining from a snapshot", .serialized)
struct SnapshotJoinTests {
    /// Every synced row a store holds, by table and record id, with its values as text: what must agree everywhere
    /// (local ids, edit counters and the stock figures each store derives stay out).
    static func rows(
        _ backoffice: Backoffice,
        _ tables: [String] = ["categories", "products", "customers", "employees", "orders", "order_lines"]
    )
        throws -> [String: [String: String]]
    {
        try backoffice.store.pool.read { db in
            var all: [String: [String: String]] = [:]
            for table in tables {
                let columns = try db.columns(in: table).map(\.name).filter {
                    !["id", "version", "unitsInStock", "unitsOnOrder"].contains($0) && !$0.hasSuffix("ID")
                }
                for row in try Row.fetchAll(db, sql: "SELECT recordID, \(columns.joined(separator: ", ")) FROM \(table)") {
                    all[table, default: [:]][row["recordID"]] = columns.map { "\(row[$0] as DatabaseValue)" }.joined(separator: "|")
                }
            }
            return all
        }
    }

    /// Head office with demo data, synced, and an empty shop `oxf` that has joined and not synced yet.
    static func joinedShop() async throws -> (Company, Backoffice) {
        let company = try Company()
        try await company.start(shops: [])
        let shop = try Backoffice.open(StoreConfiguration(path: company.store("oxf")), seedIfCreated: false)
        _ = try await ShopSyncEngine.join(shop, server: company.url, token: try await company.token(role: .shop))
        return (company, shop)
    }

    /// The shop holds head office's rows as they are.
    static func expectSameRows(_ company: Company, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (shopRows, hqRows) = (try rows(company.open("oxf")), try rows(company.open("hq")))
        #expect(shopRows == hqRows, "\(difference(shopRows, hqRows))", sourceLocation: sourceLocation)
    }

    /// The first difference between two stores' rows, for the failure message.
    static func difference(_ a: [String: [String: String]], _ b: [String: [String: String]]) -> String {
        for (table, rows) in a.sorted(by: { $0.key < $1.key }) {
            let other = b[table] ?? [:]
            if rows.count != other.count { return "\(table): \(rows.count) rows against \(other.count)" }
            for (id, values) in rows where other[id] != values { return "\(table) \(id): \(values) against \(other[id] ?? "none")" }
        }
        return "none"
    }

    /// Stages the catalogue zone, whole and empty, with the server's checksum said to be `checksum`.
    static func stageEmptyCatalogue(_ shop: Backoffice, checksum: String) async throws {
        try await shop.syncEngine.stageSnapshot(zone: "catalog", records: [], first: true, token: "t", moreComing: false, checksum: checksum)
    }

    static func staged(_ backoffice: Backoffice) throws -> Int {
        try backoffice.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_snapshot") ?? -1 }
    }

    @Test func aNewShopsFirstDownloadLoadsWholeAndHoldsWhatHeadOfficeHolds() async throws {
        // Given head office with demo data, synced, and an empty shop that has joined
        let (company, _) = try await Self.joinedShop()
        // When the shop syncs for the first time, then once more
        let first = try await company.sync("oxf")
        let second = try await company.sync("oxf")
        // Then the first sync loaded every record from the snapshot, and the shop holds head office's rows as they are
        #expect(first.loadedFromSnapshot > 1000, "\(first)")
        #expect(first.downloaded == first.loadedFromSnapshot)
        try Self.expectSameRows(company)
        // And the report summaries and the product search, lifted for the load and rebuilt, agree with head office's
        let sums = { (b: Backoffice) in
            try await b.store.pool.read { db in
                try ["order_totals", "product_year_sales", "customer_year_sales", "employee_year_sales"].map { table in
                    try Int.fetchOne(db, sql: "SELECT count(*) * 1000003 + ifnull(sum(amountCents), 0) FROM \(table)") ?? -1
                }
            }
        }
        #expect(try await sums(company.open("oxf")) == sums(company.open("hq")))
        #expect(try !company.open("oxf").catalogue.search("marrons").isEmpty)
        // And nothing is left staged or waiting, and the second sync had nothing to fetch or send
        #expect(try Self.staged(company.open("oxf")) == 0)
        #expect(second.downloaded == 0 && second.pending == 0 && second.waiting == 0 && second.zonesDiffering.isEmpty, "\(second)")
    }

    @Test func picturesLoadWithTheirRowsAndNothingWaits() async throws {
        // Given head office with a category's picture and an employee's photo large enough to live in a file, synced
        let company = try Company()
        try await company.start(shops: [])
        let hq = try company.open("hq")
        let category = try #require(try await hq.records.list(Category.self).items.first)
        let employee = try #require(try await hq.records.list(Employee.self).items.first)
        let picture = BinaryContent(bytes: Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }), contentType: "image/png")
        let photo = BinaryContent(bytes: Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }), contentType: "image/jpeg")
        try await hq.catalogue.setPicture(categoryID: try #require(category.id), picture)
        try await hq.people.setPhoto(employeeID: try #require(employee.id), photo)
        try await company.sync("hq")
        // When an empty shop joins and syncs for the first time
        let shop = try Backoffice.open(StoreConfiguration(path: company.store("oxf")), seedIfCreated: false)
        _ = try await ShopSyncEngine.join(shop, server: company.url, token: try await company.token(role: .shop))
        let report = try await company.sync("oxf")
        // Then both loaded with their rows from the snapshot: every record came from it, none waited for a picture
        // to go the ordinary way after
        #expect(report.loadedFromSnapshot > 1000 && report.downloaded == report.loadedFromSnapshot && report.waiting == 0, "\(report)")
        let ids = try await shop.store.pool.read { db in
            (
                try Int64.fetchOne(db, sql: "SELECT id FROM categories WHERE recordID = ?", arguments: [category.recordID]),
                try Int64.fetchOne(db, sql: "SELECT id FROM employees WHERE recordID = ?", arguments: [employee.recordID])
            )
        }
        #expect(try await shop.catalogue.picture(categoryID: try #require(ids.0)) == picture)
        #expect(try await shop.people.photo(employeeID: try #require(ids.1)) == photo)
    }

    /// Killed inside the third page's staging, or after every row is written and before the load commits.
    @Test(.enabled(if: FaultSwitches.compiledIn, "crash points are in debug builds only"), arguments: ["snapshot-stage:3", "snapshot-load"])
    func aShopKilledWhileStagingOrLoadingItsSnapshotHoldsNothingAndLoadsItAtTheNextSync(point: String) async throws {
        // Given head office synced, and an empty shop that has joined
        let (company, _) = try await Self.joinedShop()
        // When its first `sync now` is killed with SIGKILL at that point
        let killed = try await CLI.run(["sync", "now", "--store", company.store("oxf")], environment: ["NORTHWIND_CRASH_AT": point])
        // Then it holds no product, no customer and no token: the store is as it was
        #expect(killed.crashed, "the sync was to be killed at \(point): \(killed.stderr)")
        let left = try await company.open("oxf").store.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM products) + (SELECT count(*) FROM customers)") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_state WHERE key LIKE 'token:%'") ?? -1
            )
        }
        #expect(left == (0, 0))
        // And the next sync loads the whole company from a snapshot again
        let again = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        #expect(again.status == 0, "\(again.stderr)\(again.stdout)")
        #expect(again.stdout.contains("first download"), "\(again.stdout)")
        try Self.expectSameRows(company)
    }

    @Test func aStagedZoneThatDiffersFromItsChecksumLoadsNothingAndTheOrdinaryDownloadFollows() async throws {
        // Given head office synced, and a joined shop that staged its catalogue zone without one of its records
        let (company, shop) = try await Self.joinedShop()
        #expect(try await shop.syncEngine.beginSnapshot())
        // (Nothing staged has the checksum 0000000000000000; the server's says the zone holds records.)
        try await Self.stageEmptyCatalogue(shop, checksum: "0123456789abcdef")
        // When the staged zone is loaded
        let loaded = try await shop.syncEngine.loadSnapshot(zones: ["catalog"])
        // Then nothing is loaded, nothing stays staged, and the store no longer takes the snapshot's way
        #expect(loaded == nil)
        #expect(try Self.staged(shop) == 0)
        #expect(try await shop.syncEngine.beginSnapshot() == false)
        #expect(try await shop.syncEngine.token(zone: "catalog") == nil)
        // And the ordinary download then brings everything
        let report = try await company.sync("oxf")
        #expect(report.loadedFromSnapshot == 0 && report.downloaded > 1000, "\(report)")
        try Self.expectSameRows(company)
    }

    @Test func aShopThatHadARowAcknowledgedAndDeletedBeforeItsFirstDownloadTakesTheOrdinaryWay() async throws {
        // Given a joined shop that created a customer, sent it, deleted it and sent that, all before any download
        // (a sync that only sends, as a serving shop's does after each commit)
        let (company, shop) = try await Self.joinedShop()
        let created = try await shop.records.create(Customer(code: "GONE1", companyName: "Gone Again Provisions"))
        _ = try await ShopSyncEngine(backoffice: shop).syncNow(pulling: [])
        try await shop.records.delete(Customer.self, id: try #require(created.id))
        _ = try await ShopSyncEngine(backoffice: shop).syncNow(pulling: [])
        // When the shop syncs in full
        let report = try await company.sync("oxf")
        // Then its download went the ordinary way, which knows what it deleted, and the customer stays deleted
        #expect(report.loadedFromSnapshot == 0 && report.downloaded > 1000, "\(report)")
        let codes = try await company.open("oxf").store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT code FROM customers WHERE code = 'GONE1'")
        }
        #expect(codes.isEmpty)
    }

    @Test func aLoadTakesOnlyTheZonesItChecked() async throws {
        // Given a joined shop whose staging holds an empty catalogue zone, finished (its checksum is that of no
        // record), and a page of the people zone never finished (another download's, say)
        let (company, shop) = try await Self.joinedShop()
        #expect(try await shop.syncEngine.beginSnapshot())
        try await Self.stageEmptyCatalogue(shop, checksum: "0000000000000000")
        let employee = SyncRecord(
            recordName: "e-unchecked",
            recordType: "employees",
            zoneID: ZoneID("people"),
            recordChangeTag: "1",
            fields: ["lastName": .string("Unchecked"), "firstName": .string("Ursula")]
        )
        try await shop.syncEngine.stageSnapshot(zone: "people", records: [employee], first: true, token: "t", moreComing: true, checksum: nil)
        // When only the catalogue zone is loaded
        let loaded = try await shop.syncEngine.loadSnapshot(zones: ["catalog"])
        // Then the load succeeds and brings no employee: the unfinished zone's page was not its to load
        #expect(loaded?.saved == 0)
        let employees = try await shop.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM employees") ?? -1 }
        #expect(employees == 0)
        withExtendedLifetime(company) {}
    }

    @Test func aShopThatChangedSomethingBeforeItsFirstDownloadKeepsItAndSendsIt() async throws {
        // Given head office synced, and a joined shop that creates a customer before its first sync
        let (company, shop) = try await Self.joinedShop()
        _ = try await shop.records.create(Customer(code: "EARLY", companyName: "Early Bird Provisions"))
        // When the shop syncs, then head office
        let report = try await company.sync("oxf")
        try await company.sync("hq")
        // Then the shop downloaded the ordinary way, kept its customer, and head office has it too
        #expect(report.loadedFromSnapshot == 0 && report.downloaded > 1000, "\(report)")
        let codes = { (b: Backoffice) in
            try await b.store.pool.read { db in try String.fetchAll(db, sql: "SELECT code FROM customers WHERE code = 'EARLY'") }
        }
        #expect(try await codes(company.open("oxf")) == ["EARLY"])
        #expect(try await codes(company.open("hq")) == ["EARLY"])
        try Self.expectSameRows(company)
    }
}
