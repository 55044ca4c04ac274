import Foundation
import GRDB
import Northwind
import NorthwindStore
import Testing

@testable import NorthwindTestSupport

/// A shop restored from a backup, then synced with a real sync server: what it held goes up, what the server holds
/// comes back, and what it does next is not mistaken for what its old self sent.
@Suite("Restore and sync end to end", .serialized)
struct RestoreSyncTests {
    @Test func aShopRestoredAfterLosingItsStoreSendsWhatOnlyItsBackupHeld() async throws {
        // Given a shop in sync that adds a customer while offline, is backed up, and then loses its store
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let place = BackupPlace()
        let backup = try await Self.backUp(company, "oxf", adding: "OFFLN", to: place)
        try Self.lose(company, "oxf")
        // and head office adds a customer meanwhile
        _ = try await company.open("hq").records.create(Customer(code: "HQNEW", companyName: "Added at head office"))
        try await company.sync("hq")
        // When the shop is restored and syncs, then head office syncs
        _ = try await Restore.perform(backup, over: StoreFiles(path: company.store("oxf")), folder: place.folder, force: false)
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office has the shop's customer, and the shop has head office's
        #expect(try company.open("hq").people.customer(code: "OFFLN").companyName == "Added at OFFLN")
        #expect(try company.open("oxf").people.customer(code: "HQNEW").companyName == "Added at head office")
    }

    @Test func aRestoredShopGetsBackWhatItSentAfterItsBackup() async throws {
        // Given a shop backed up, which then adds a customer and syncs it
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let place = BackupPlace()
        let backup = try await Self.backUp(company, "oxf", to: place)
        _ = try await company.open("oxf").records.create(Customer(code: "AFTER", companyName: "Added after the backup"))
        try await company.sync("oxf")
        // When the backup is restored over it, the plan losing nothing, and the shop syncs
        let target = StoreFiles(path: company.store("oxf"))
        let plan = try await Restore.plan(backup, over: target)
        _ = try await Restore.perform(backup, over: target, folder: place.folder, force: true)
        try await company.sync("oxf")
        // Then the customer the server holds is back
        #expect(plan.lostTotal == 0, "\(plan.lines)")
        #expect(try company.open("oxf").people.customer(code: "AFTER").companyName == "Added after the backup")
    }

    @Test func aRestoredShopsNewChangesAreNotTakenForItsOldOnes() async throws {
        // Given a shop backed up, which then sends a change, and is restored from that backup
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let place = BackupPlace()
        let backup = try await Self.backUp(company, "oxf", to: place)
        _ = try await company.open("oxf").records.create(Customer(code: "FIRST", companyName: "Sent before the restore"))
        try await company.sync("oxf")
        _ = try await Restore.perform(backup, over: StoreFiles(path: company.store("oxf")), folder: place.folder, force: true)
        // When the restored shop makes a change in the same place in its change log, and syncs, then head office
        _ = try await company.open("oxf").records.create(Customer(code: "AGAIN", companyName: "Sent after the restore"))
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office has both: the server did not answer the new batch as one it had already seen
        let hq = try company.open("hq")
        #expect(try hq.people.customer(code: "FIRST").companyName == "Sent before the restore")
        #expect(try hq.people.customer(code: "AGAIN").companyName == "Sent after the restore")
    }

    @Test func aRestoreDryRunNamesTheUnsentChangesItWouldLose() async throws {
        // Given a shop backed up, which then adds two customers while offline
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let place = BackupPlace()
        let backup = try await Self.backUp(company, "oxf", to: place)
        let shop = try company.open("oxf")
        _ = try await shop.records.create(Customer(code: "LOST1", companyName: "Not yet sent"))
        _ = try await shop.records.create(Customer(code: "LOST2", companyName: "Not yet sent either"))
        // When a restore is planned over it
        let plan = try await Restore.plan(backup, over: StoreFiles(path: company.store("oxf")))
        // Then the plan says that two changes to customers would be lost
        #expect(plan.lostChanges == ["customers": 2])
        #expect(plan.lines.contains { $0.contains("2 in customers") }, "\(plan.lines)")
    }

    @Test func editsOfDifferentFieldsOfAQuoteAtTwoSitesBothStand() async throws {
        // Given a quote made at head office and synced to a shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let productID = try #require(try await hq.catalogue.list().items.first { !$0.product.discontinued }?.product.id)
        let customer = try #require(try await hq.records.list(Customer.self, limit: 1).items.first?.code)
        let made = try await hq.quotes.create(
            QuoteContent(
                customerCode: customer,
                validUntil: LocalDate("2026-12-31") ?? .today,
                notes: "Draft",
                lines: [try hq.quotes.newLine(productID: productID, quantity: 4)]
            ),
            by: Self.nancy
        )
        try await company.sync("hq")
        try await company.sync("oxf")
        let shop = try company.open("oxf")
        let there = try await shop.quotes.quote(number: made.number)
        // When head office changes the notes and the shop the line's quantity, each offline, and both sync
        var notes = made.content
        notes.notes = "Delivery on Fridays"
        _ = try await hq.quotes.saveDraft(number: made.number, base: made.content, content: notes, history: QuoteHistory(), editor: Self.nancy)
        var quantity = there.content
        quantity.lines[0].quantity = 12
        _ = try await shop.quotes.saveDraft(number: made.number, base: there.content, content: quantity, history: QuoteHistory(), editor: Self.janet)
        try await company.sync("hq")
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then both sites hold the new notes and the new quantity, and neither is in conflict
        for site in [hq, shop] {
            let session = try await site.quotes.open(number: made.number, editor: Self.nancy)
            #expect(session.quote.content.notes == "Delivery on Fridays")
            #expect(session.quote.content.lines.map(\.quantity) == [12])
            #expect(!session.state.contains(.inConflict), "\(session.conflicts)")
        }
    }

    @Test func aShopRestoredFromABackupCannotShipAnOrderTwice() async throws {
        // Given a shop that takes an order, is backed up, then ships the order and syncs it
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let place = BackupPlace()
        let (order, backup) = try await Self.orderShippedAfterBackup(company, place)
        // When the backup is restored, the order executed again before a sync, then after one
        _ = try await Restore.perform(backup, over: StoreFiles(path: company.store("oxf")), folder: place.folder, force: true)
        let restored = try company.open("oxf")
        let beforeSync = await northwindError { _ = try await restored.orders.execute(number: order) }
        try await company.sync("oxf")
        let afterSync = await northwindError { _ = try await restored.orders.execute(number: order) }
        try await company.sync("hq")
        // Then the first is refused until a full sync, the second because the order has shipped, and the line has
        // one shipment at the shop and at head office
        #expect(beforeSync?.description.contains("restored from a backup") == true, "\(String(describing: beforeSync))")
        #expect(afterSync?.description.contains("already shipped") == true, "\(String(describing: afterSync))")
        for site in ["oxf", "hq"] {
            let shipments = try await company.open(site).store.pool.read { db in
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM stock_movements m JOIN orders o ON o.id = m.orderID
                        WHERE o.number = ? AND m.reason = 'shipped'
                        """,
                    arguments: [order]
                )
            }
            #expect(shipments == 1, "\(site)")
        }
    }

    /// An order taken at the shop, backed up while new, then shipped and synced; the shop's store is closed after.
    static func orderShippedAfterBackup(_ company: Company, _ place: BackupPlace) async throws -> (order: String, backup: URL) {
        let shop = try company.open("oxf")
        let product = try #require(try await shop.catalogue.list().items.first { !$0.product.discontinued }?.product)
        _ = try await shop.stock.receive(productID: product.key, quantity: 5)
        let customer = try #require(try await shop.records.list(Customer.self, limit: 1).items.first?.code)
        let order = try await shop.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: product.key, quantity: 1)])
        ).order.number
        try await company.sync("oxf")
        let backup = try await Self.backUp(company, "oxf", to: place)
        _ = try await shop.orders.execute(number: order)
        try await company.sync("oxf")
        return (order, backup)
    }

    static let nancy = QuoteEditor(login: "nancy.davolio", name: "Nancy Davolio")
    static let janet = QuoteEditor(login: "janet.leverling", name: "Janet Leverling")

    /// Backs up `site` into `place`, after adding a customer with `code` that is not synced, and returns the file.
    static func backUp(_ company: Company, _ site: String, adding code: String? = nil, to place: BackupPlace) async throws -> URL {
        let backoffice = try company.open(site)
        if let code { _ = try await backoffice.records.create(Customer(code: code, companyName: "Added at \(code)")) }
        return try await backoffice.backups.create(in: place.folder, kind: .manual).file
    }

    /// The store's files are gone, as with a dead disk.
    static func lose(_ company: Company, _ site: String) throws {
        let files = StoreFiles(path: company.store(site))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: files.path + suffix) }
        try? FileManager.default.removeItem(at: files.external)
    }
}
