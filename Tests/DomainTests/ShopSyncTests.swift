import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

@Suite("Shop sync: the store's side")
struct ShopSyncTests {
    static func membership(_ site: String, role: String = "shop") -> SyncMembership {
        SyncMembership(server: "http://127.0.0.1:1", container: "acme", siteCode: site, role: role, credential: "nws_test")
    }

    @Test func aFieldChangedOnOneSideOnlyIsMerged() {
        // Given a base, a server that changed the price and a store that changed the name
        let base: [String: FieldValue] = ["name": .string("Chai"), "price": .int64(1800)]
        let server: [String: FieldValue] = ["name": .string("Chai"), "price": .int64(1900)]
        let local: [String: FieldValue] = ["name": .string("Chai tea"), "price": .int64(1800)]
        // When they merge
        let result = FieldMerge.merge(base: base, server: server, local: local, localClock: FieldClock(milliseconds: 5, site: "OXF"))
        // Then both edits stand and nothing is discarded
        #expect(result.fields == ["name": .string("Chai tea"), "price": .int64(1900)])
        #expect(result.discarded.isEmpty)
    }

    @Test func aHeldVersionThatBeatsTheRestoredServersValueSendsThatValueToTheInbox() {
        // Given a name this store held, acknowledged at 9 before the server's restore, and a name another site wrote
        // at 7 since the restore (base forgotten, as after a restore)
        let held: [String: FieldValue] = [
            "name": .string("X"), FieldClock.fieldName: FieldClock.field(["name": FieldClock(milliseconds: 9, site: "OXF")]),
        ]
        let server: [String: FieldValue] = [
            "name": .string("Y"), FieldClock.fieldName: FieldClock.field(["name": FieldClock(milliseconds: 7, site: "KRK")]),
        ]
        // When they merge
        let result = FieldMerge.merge(
            base: [:],
            server: server,
            local: ["name": .string("X")],
            localClock: FieldClock(milliseconds: 20, site: "HQ"),
            held: held
        )
        // Then the later, held name stands with its own clock, and the other site's is in the inbox, not lost silently
        #expect(result.fields == ["name": .string("X")])
        #expect(result.clocks["name"] == FieldClock(milliseconds: 9, site: "OXF"))
        #expect(result.discarded.map(\.lost) == [.string("Y")])
    }

    @Test func aFieldAHeldVersionClearedIsNotFilledAgainByTheRestoredServersOlderValue() {
        // Given a note this store cleared at 9 (acknowledged before the server's restore), and the restored server's
        // note from 3
        let held: [String: FieldValue] = [FieldClock.fieldName: FieldClock.field(["note": FieldClock(milliseconds: 9, site: "OXF")])]
        let server: [String: FieldValue] = [
            "note": .string("old"), FieldClock.fieldName: FieldClock.field(["note": FieldClock(milliseconds: 3, site: "HQ")]),
        ]
        // When they merge
        let result = FieldMerge.merge(base: [:], server: server, local: [:], localClock: FieldClock(milliseconds: 20, site: "OXF"), held: held)
        // Then the note stays cleared
        #expect(result.fields["note"] == nil)
        #expect(result.clocks["note"] == FieldClock(milliseconds: 9, site: "OXF"))
    }

    @Test func aHeldValueThatALaterWriteBeatsGivesWayAndGoesToTheInbox() {
        // Given a held name from 5 and a name written at 9 on the restored server
        let held: [String: FieldValue] = [
            "name": .string("X"), FieldClock.fieldName: FieldClock.field(["name": FieldClock(milliseconds: 5, site: "OXF")]),
        ]
        let server: [String: FieldValue] = [
            "name": .string("Z"), FieldClock.fieldName: FieldClock.field(["name": FieldClock(milliseconds: 9, site: "KRK")]),
        ]
        // When they merge
        let result = FieldMerge.merge(
            base: [:],
            server: server,
            local: ["name": .string("X")],
            localClock: FieldClock(milliseconds: 20, site: "OXF"),
            held: held
        )
        // Then the later name stands, and the held one goes to the inbox: its writer may never have seen the later
        #expect(result.fields == ["name": .string("Z")])
        #expect(
            result.discarded == [
                DiscardedValue(
                    field: "name",
                    kept: .string("Z"),
                    keptClock: FieldClock(milliseconds: 9, site: "KRK"),
                    lost: .string("X"),
                    lostClock: FieldClock(milliseconds: 5, site: "OXF")
                )
            ]
        )
    }

    @Test func aFieldChangedOnBothSidesGoesToTheLaterClock() {
        // Given both sides changed the price; the server's write is later than the local one
        let clocks = FieldClock.field(["price": FieldClock(milliseconds: 9, site: "HQ")])
        let base: [String: FieldValue] = ["price": .int64(1800)]
        let server: [String: FieldValue] = ["price": .int64(1900), FieldClock.fieldName: clocks]
        let local: [String: FieldValue] = ["price": .int64(2000)]
        // When they merge
        let result = FieldMerge.merge(base: base, server: server, local: local, localClock: FieldClock(milliseconds: 5, site: "OXF"))
        // Then the server's value wins, and the local one is kept in the discarded list
        #expect(result.fields == ["price": .int64(1900)])
        #expect(
            result.discarded == [
                DiscardedValue(
                    field: "price",
                    kept: .int64(1900),
                    keptClock: FieldClock(milliseconds: 9, site: "HQ"),
                    lost: .int64(2000),
                    lostClock: FieldClock(milliseconds: 5, site: "OXF")
                )
            ]
        )
    }

    @Test func equalClocksAreSettledByTheSiteCodeAlike() {
        // Given two writes in the same millisecond from two sites
        let a = FieldClock(milliseconds: 7, site: "HQ")
        let b = FieldClock(milliseconds: 7, site: "OXF")
        // Then every installation orders them the same way, by site code
        #expect(a < b)
        #expect(FieldClock(milliseconds: 8, site: "A") > b)
    }

    /// Every batch the store has to send, each acknowledged as sent.
    static func drain(_ shop: TemporaryStore) async throws -> [OutboxBatch] {
        var batches: [OutboxBatch] = []
        while let batch = try await shop.backoffice.syncEngine.nextOutboxBatch() {
            batches.append(batch)
            try await shop.store.pool.write { db in
                // Sent, as an acknowledgement would record it.
                try ShopSync.setState(db, "uploadedThrough", String(batch.throughSeq))
                try ShopSync.setState(db, "pendingBatch", nil)
                try ShopSync.setState(db, "pendingBatchID", nil)
            }
        }
        return batches
    }

    @Test func aLocalTransactionUploadsAsOneBatch() async throws {
        // Given an empty store that joined a company
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        // When a category is created, then a product in it
        let category = try await shop.backoffice.records.create(Category(name: "Teas"))
        _ = try await shop.backoffice.catalogue.create(Product(name: "Chai", categoryID: category.id, unitPrice: Money(cents: 1800)))
        let batches = try await Self.drain(shop)
        // Then each transaction is its own batch, and the product refers to its category by record id
        #expect(batches.map { $0.operations.map(\.record.recordType) } == [["categories"], ["products"]])
        let created = try #require(batches.last?.operations.last)
        #expect(created.kind == .create)
        #expect(created.record.recordType == "products")
        #expect(created.record.zoneID.zoneName == "catalog")
        guard case .reference(let reference)? = created.record.fields["categoryID"] else {
            Issue.record("categoryID should travel as a reference, got \(String(describing: created.record.fields["categoryID"]))")
            return
        }
        #expect(reference.recordName == batches[0].operations[0].record.recordName)
        #expect(created.record.fields["unitsInStock"] == nil)
    }

    @Test func aTransactionCommittedWhileABatchIsBuiltGoesInTheNext() async throws {
        // Given a joined store with a category created, and its batch read (as a read transaction builds it) but not
        // yet recorded
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        _ = try await shop.backoffice.records.create(Category(name: "Teas"))
        let engine = shop.backoffice.syncEngine
        let built = try await shop.store.pool.read { db in try ShopSync.buildBatch(db, site: try #require(try engine.syncSite(db))) }
        // When another transaction commits before the batch is recorded
        _ = try await shop.backoffice.records.create(Category(name: "Coffees"))
        _ = try await shop.store.pool.write { db in try ShopSync.record(built, db) }
        // Then the batch holds only what was read, and goes first; the later category goes in the next batch
        let batches = try await Self.drain(shop)
        #expect(batches.map { $0.operations.map { $0.record.fields["name"] } } == [[.string("Teas")], [.string("Coffees")]])
    }

    @Test func aBatchReadBeforeAServerRestoreIsNoticedIsBuiltAgain() async throws {
        // Given a joined store whose category went up in the server's first epoch, was renamed here since, and whose
        // next batch (an update of the server's copy) was read but not yet recorded
        let shop = try TemporaryStore()
        let engine = shop.backoffice.syncEngine
        try await engine.join(Self.membership("OXF"), containerHasData: true)
        _ = try await engine.noteServerEpoch("first")
        var category = try await shop.backoffice.records.create(Category(name: "Teas"))
        let sent = try #require(try await engine.nextOutboxBatch())
        _ = try await engine.acknowledge(sent, outcomes: sent.operations.map { .saved($0.record) })
        category.name = "Herbal teas"
        _ = try await shop.backoffice.records.update(category)
        let built = try await shop.store.pool.read { db in try ShopSync.buildBatch(db, site: try #require(try engine.syncSite(db))) }
        #expect(built.batch?.operations.map(\.kind) == [.update])
        // When the server is found restored (a new epoch) before the batch is recorded
        _ = try await engine.noteServerEpoch("second")
        let recorded = try await shop.store.pool.write { db in try ShopSync.recordIfUnmoved(built, db, site: try #require(try engine.syncSite(db))) }
        // Then the batch is built again: the category goes up whole, not as an update of a copy the server may have lost
        #expect(recorded?.operations.map(\.kind) == [.create])
        #expect(recorded?.operations.first?.record.fields["name"] == .string("Herbal teas"))
    }

    @Test func aBatchNotAcknowledgedGoesAgainExactlyAsBuilt() async throws {
        // Given a joined store with a batch built and sent, but not acknowledged
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        var category = try await shop.backoffice.records.create(Category(name: "Teas"))
        let sent = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
        // When the same record is changed again and the batch is built again
        category.name = "Herbal teas"
        _ = try await shop.backoffice.records.update(category)
        let again = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
        // Then it is the same batch with the same content, so that a replayed answer fits it; the change goes next
        #expect(again.batchID == sent.batchID)
        #expect(again.operations.map(\.record) == sent.operations.map(\.record))
        #expect(again.operations.first?.record.fields["name"] == .string("Teas"))
    }

    @Test func theBadgeCountsPendingChangesOnlyUpToItsCap() async throws {
        // Given a store that joined a company and has one change more to send than the badge counts
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        try await shop.store.pool.write { db in
            for n in 0...ShopSync.badgeCountCap {
                try db.execute(sql: "INSERT INTO shippers (companyName) VALUES (?)", arguments: ["Shipper \(n)"])
            }
        }
        // When a page asks for the badge
        let badge = try shop.backoffice.sync.badge()
        // Then it says there are more than it counted, while the status counts them all
        #expect(badge == SyncBadge(state: .pending, text: "1000+ pending"))
        #expect(try await shop.backoffice.sync.pendingChanges() == ShopSync.badgeCountCap + 1)
    }

    @Test func anotherLocationsMovementLeavesThisShelfAlone() async throws {
        // Given head office, with demo data, joined to a new company
        let shop = try TemporaryStore(seed: DemoData.Options(scale: 1))
        try await shop.backoffice.syncEngine.join(Self.membership("HQ", role: "hq"), containerHasData: false)
        let pending = try await shop.backoffice.sync.pendingChanges()
        let (productID, recordID, before): (Int64, String, Int) = try await shop.store.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT id, recordID, unitsInStock FROM products ORDER BY id LIMIT 1"))
            return (row["id"], row["recordID"], row["unitsInStock"])
        }
        // When a movement made at another location arrives by sync
        let movement = SyncRecord(
            recordName: newRecordID(),
            recordType: "stock_movements",
            zoneID: ZoneID("site-LON"),
            fields: [
                "productID": .reference(RecordReference(recordName: recordID, zoneName: "catalog")),
                "delta": .int64(-5),
                "reason": .string("shipped"),
                "createdAt": .string("2026-11-24T10:00:00.000Z"),
                "location": .string("LON"),
            ]
        )
        let applied = try await shop.backoffice.syncEngine.applyDownloaded(zone: "site-LON", records: [movement], token: "t1")
        // Then this shelf is unchanged, the other location's level is kept apart, and nothing more is to upload
        #expect(applied.saved == 1)
        let (after, elsewhere): (Int, Int?) = try await shop.store.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT unitsInStock FROM products WHERE id = ?", arguments: [productID]) ?? -1,
                try Int.fetchOne(db, sql: "SELECT units FROM stock_levels WHERE location = 'LON' AND productID = ?", arguments: [productID])
            )
        }
        #expect(after == before)
        #expect(elsewhere == -5)
        #expect(try await shop.backoffice.sync.pendingChanges() == pending)
    }

    @Test func aProductShowsEveryLocationsStockAndOnlyThisShelfsMovements() async throws {
        // Given head office, joined, and a product with 5 received here
        let shop = try TemporaryStore(seed: DemoData.Options(scale: 1))
        try await shop.backoffice.syncEngine.join(Self.membership("HQ", role: "hq"), containerHasData: false)
        let (productID, recordID): (Int64, String) = try await shop.store.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT id, recordID FROM products ORDER BY id LIMIT 1"))
            return (row["id"], row["recordID"])
        }
        _ = try await shop.backoffice.stock.receive(productID: productID, quantity: 5)
        let here = try shop.backoffice.catalogue.product(id: productID).product.unitsInStock
        // When movements of two other locations arrive by sync, one of them two receipts
        func movement(_ site: String, _ delta: Int) -> SyncRecord {
            SyncRecord(
                recordName: newRecordID(),
                recordType: "stock_movements",
                zoneID: ZoneID("site-\(site)"),
                fields: [
                    "productID": .reference(RecordReference(recordName: recordID, zoneName: "catalog")),
                    "delta": .int64(Int64(delta)),
                    "reason": .string("received"),
                    "createdAt": .string("2026-11-24T10:00:00.000Z"),
                    "location": .string(site),
                ]
            )
        }
        let paris = [movement("PAR", 7)]
        let london = [movement("LON", 12), movement("LON", 3)]
        _ = try await shop.backoffice.syncEngine.applyDownloaded(zone: "site-PAR", records: paris, token: "p1")
        _ = try await shop.backoffice.syncEngine.applyDownloaded(zone: "site-LON", records: london, token: "l1")
        // Then the product's stock lists this location first, then the others by code, each as its movements add up
        let levels = try await shop.backoffice.stock.byLocation(productID: productID)
        #expect(
            levels == [
                LocationStock(location: "HQ", units: here, isHere: true), LocationStock(location: "LON", units: 15, isHere: false),
                LocationStock(location: "PAR", units: 7, isHere: false),
            ]
        )
        // And this shelf's movements are only its own
        let movements = try await shop.backoffice.stock.movements(productID: productID)
        #expect(movements.first?.delta == 5)
        #expect(Set(movements.map(\.recordID)).isDisjoint(with: (paris + london).map(\.recordName)))
    }

    @Test func aCustomerDeletedElsewhereWhileOrdersHereReferToItIsRestoredAndSentAgain() async throws {
        // Given head office with demo data, joined, everything sent
        let shop = try TemporaryStore(seed: DemoData.Options(scale: 1))
        try await shop.backoffice.syncEngine.join(Self.membership("HQ", role: "hq"), containerHasData: false)
        try await shop.store.pool.write { db in try ShopSync.setState(db, "uploadedThrough", String(try SyncEngineSide.lastSeq(db))) }
        let recordID: String = try #require(
            try await shop.store.pool.read { db in
                try String.fetchOne(db, sql: "SELECT recordID FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customerID = c.id)")
            }
        )
        // When its deletion at another site arrives by sync
        let deletion = SyncRecord(recordName: recordID, recordType: "customers", zoneID: ZoneID("customers"), deleted: true)
        let applied = try await shop.backoffice.syncEngine.applyDownloaded(zone: "customers", records: [deletion], token: "t1")
        // Then the customer is still here, the inbox says it was restored, and it goes up again as a new record
        #expect(applied.discarded == 1)
        #expect(try await shop.store.pool.read { db in try Customer.filter(Column("recordID") == recordID).fetchCount(db) } == 1)
        let conflict = try #require(try await shop.backoffice.sync.conflicts().first)
        #expect(conflict.reason.contains("restored"))
        let batch = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
        #expect(batch.operations.map(\.kind) == [.create])
        #expect(batch.operations.map(\.record.recordName) == [recordID])
    }

    /// A joined store holding one customer, sent, then edited here and not sent yet.
    static func customerEditedHere(_ shop: TemporaryStore) async throws -> Customer {
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        var customer = try await shop.backoffice.records.create(Customer(code: "NEWCO", companyName: "New Company"))
        _ = try await Self.drain(shop)
        customer.city = "Oxford"
        return try await shop.backoffice.records.update(customer)
    }

    @Test func anEditWaitingToGoUpThatADeleteElsewhereDiscardsGoesToTheInbox() async throws {
        // Given a customer edited here, the edit not sent yet
        let shop = try TemporaryStore()
        let customer = try await Self.customerEditedHere(shop)
        // When its deletion at another site arrives by sync
        let deletion = SyncRecord(recordName: customer.recordID, recordType: "customers", zoneID: ZoneID("customers"), deleted: true)
        let applied = try await shop.backoffice.syncEngine.applyDownloaded(zone: "customers", records: [deletion], token: "t1")
        // Then the delete stands, and the inbox keeps the row as edited here
        #expect(applied.discarded == 1)
        #expect(try await shop.store.pool.read { db in try Customer.filter(Column("recordID") == customer.recordID).fetchCount(db) } == 0)
        let conflict = try #require(try await shop.backoffice.sync.conflicts().first)
        #expect(conflict.recordID == customer.recordID)
        #expect(conflict.field == "*")
        #expect(conflict.lost?.contains("Oxford") == true)
    }

    @Test func keepingMineBringsBackARowDeletedElsewhereAndSendsIt() async throws {
        // Given a customer edited here whose update the server answered NOT_FOUND (deleted at another site)
        let shop = try TemporaryStore()
        let customer = try await Self.customerEditedHere(shop)
        let batch = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
        _ = try await shop.backoffice.syncEngine.acknowledge(batch, outcomes: [.goneOnServer])
        let conflict = try #require(try await shop.backoffice.sync.conflicts().first)
        // When a manager keeps the edit made here
        try await shop.backoffice.sync.resolveConflict(id: conflict.id, keepMine: true)
        // Then the customer is back as edited, and goes up as a new record
        let restored = try await shop.store.pool.read { db in try Customer.filter(Column("recordID") == customer.recordID).fetchOne(db) }
        #expect(restored?.city == "Oxford")
        let again = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
        #expect(again.operations.map(\.kind) == [.create])
        #expect(again.operations.map(\.record.recordName) == [customer.recordID])
    }

    /// Head office with demo data, joined, everything sent; and its first product still sold.
    static func headOfficeInSync() async throws -> (TemporaryStore, productID: Int64) {
        let shop = try TemporaryStore(seed: DemoData.Options(scale: 1))
        try await shop.backoffice.syncEngine.join(Self.membership("HQ", role: "hq"), containerHasData: false)
        try await shop.store.pool.write { db in try ShopSync.setState(db, "uploadedThrough", String(try SyncEngineSide.lastSeq(db))) }
        let productID = try await shop.store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE discontinued = 0 ORDER BY id LIMIT 1")
        }
        return (shop, try #require(productID))
    }

    @Test func aStockMovementGoesUpWithoutItsProduct() async throws {
        // Given head office in sync
        let (shop, productID) = try await Self.headOfficeInSync()
        // When goods are received
        _ = try await shop.backoffice.stock.receive(productID: productID, quantity: 5)
        // Then only the movement is pending: the product's stock is this location's and does not travel
        #expect(try await shop.backoffice.sync.pendingChanges() == 1)
        let batches = try await Self.drain(shop)
        #expect(batches.map { $0.operations.map(\.record.recordType) } == [["stock_movements"]])
    }

    @Test func anOrderExecutedBeforeItWentUpTravelsWithItsMovementsInOneBatch() async throws {
        // Given head office in sync, with goods on the shelf
        let (shop, productID) = try await Self.headOfficeInSync()
        _ = try await shop.backoffice.stock.receive(productID: productID, quantity: 5)
        _ = try await Self.drain(shop)
        // When an order is taken and executed before anything goes up
        let customer = try #require(try await shop.store.pool.read { db in try String.fetchOne(db, sql: "SELECT code FROM customers LIMIT 1") })
        let order = try await shop.backoffice.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: productID, quantity: 2)])
        )
        _ = try await shop.backoffice.orders.execute(number: order.order.number)
        let batches = try await Self.drain(shop)
        // Then the order goes up shipped in the same batch as its line, its shipment and movement: nobody sees it
        // shipped without them
        #expect(batches.count == 1)
        #expect(
            batches.first.map { Set($0.operations.map(\.record.recordType)) } == [
                "orders", "order_lines", "shipments", "shipment_lines", "invoices", "invoice_lines", "stock_movements",
            ]
        )
        let sent = try #require(batches.first?.operations.first { $0.record.recordType == "orders" })
        #expect(sent.record.fields["status"] == .string("shipped"))
    }

    @Test func pictureBytesThatDoNotMatchTheirHashAreRefusedAndNothingIsApplied() async throws {
        // Given a joined store with a category, sent
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        let category = try await shop.backoffice.records.create(Category(name: "Teas"))
        _ = try await Self.drain(shop)
        // When a download names a new picture for it, and the bytes that came are other bytes
        let named = Data(repeating: 1, count: 600)
        let reference = AssetReference(sha256: RecordMapping.sha256(named), size: 600, contentType: "image/png")
        let record = SyncRecord(
            recordName: category.recordID,
            recordType: "categories",
            zoneID: ZoneID("catalog"),
            fields: ["name": .string("Herbal teas"), "picture": .asset(reference)]
        )
        await #expect(throws: NorthwindError.self) {
            try await shop.backoffice.syncEngine.applyDownloaded(
                zone: "catalog",
                records: [record],
                token: "t1",
                assets: [reference.sha256: Data(repeating: 2, count: 600)]
            )
        }
        // Then nothing of the page is applied: no picture, the old name, and no token saved
        let id = try #require(category.id)
        #expect(try await shop.backoffice.catalogue.picture(categoryID: id) == nil)
        #expect(try await shop.store.pool.read { db in try Category.fetchOne(db, key: id)?.name } == "Teas")
        #expect(try await shop.backoffice.syncEngine.token(zone: "catalog") == nil)
    }

    @Test func aServerCopyThatChangesNothingHereLeavesARowBeingEditedAsItWas() async throws {
        // Given a joined store whose category went up and was acknowledged, then renamed here (not yet sent)
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        var category = try await shop.backoffice.records.create(Category(name: "Teas"))
        let batch = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
        _ = try await shop.backoffice.syncEngine.acknowledge(batch, outcomes: batch.operations.map { .saved($0.record) })
        category.name = "Herbal teas"
        category = try await shop.backoffice.records.update(category)
        // When the server's copy, unchanged since this store sent it, comes down again (as its own change's notice
        // brings it)
        _ = try await shop.backoffice.syncEngine.applyDownloaded(zone: "catalog", records: batch.operations.map(\.record), token: "t1")
        // Then the row is not written again: a manager who opened it after the rename can still save it
        let id = try #require(category.id)
        let now = try #require(try await shop.store.pool.read { db in try Category.fetchOne(db, key: id) })
        #expect(now.name == "Herbal teas")
        #expect(now.version == category.version)
        category.description = "Loose leaf"
        _ = try await shop.backoffice.records.update(category)
    }

    @Test func aZoneFetchedAgainAndCutOffHalfwayStillLosesWhatTheServerNoLongerHas() async throws {
        // Given a joined store with two customers, both sent and acknowledged
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(Self.membership("OXF"), containerHasData: true)
        var sent: [SyncRecord] = []
        for code in ["GONE", "KEPT"] {
            _ = try await shop.backoffice.records.create(Customer(code: code, companyName: "Company \(code)"))
            let batch = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch())
            _ = try await shop.backoffice.syncEngine.acknowledge(batch, outcomes: batch.operations.map { .saved($0.record) })
            sent += batch.operations.map(\.record)
        }
        // When its token expires, the zone's first page (with only the second customer) is applied, the sync is cut
        // off, and a later sync applies the last page
        try await shop.backoffice.syncEngine.resetToken(zone: "customers")
        _ = try await shop.backoffice.syncEngine.applyDownloaded(zone: "customers", records: [sent[1]], token: "t1", moreComing: true)
        let reopened = Backoffice(store: try Store(StoreConfiguration(path: shop.path)))
        _ = try await reopened.syncEngine.applyDownloaded(zone: "customers", records: [], token: "t2", moreComing: false)
        // Then the customer the server no longer has is gone, and the other stays
        let codes = try await shop.store.pool.read { db in try String.fetchAll(db, sql: "SELECT code FROM customers ORDER BY code") }
        #expect(codes == ["KEPT"])
    }
}
