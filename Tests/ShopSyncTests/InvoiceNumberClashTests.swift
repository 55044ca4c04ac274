import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport
@testable import SyncServer

/// A store put back whole to an older copy issues again an invoice number an earlier copy issued and sent; both
/// documents reach the server. Every installation must hold the same ledger, with no number twice and no line
/// waiting for ever (convergence seed 11 with store faults stalled on it: head office kept one invoice, the shops
/// the other).
@Suite("An invoice number given twice", .serialized)
struct InvoiceNumberClashTests {
    /// Each invoice's number and order, by number; and how many records wait for a parent.
    static func ledger(_ company: Company, _ name: String) async throws -> (invoices: [[String]], waiting: Int) {
        try await company.open(name).store.pool.read { db in
            let invoices = try Row.fetchAll(
                db,
                sql: "SELECT i.number, o.number AS orderNumber FROM invoices i JOIN orders o ON o.id = i.orderID ORDER BY i.number"
            ).map { [$0["number"] as String, $0["orderNumber"] as String] }
            return (invoices, try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_waiting") ?? 0)
        }
    }

    /// Head office's two orders fetched by the shop, a copy of head office's whole folder (store and watermark)
    /// taken, and then the first order shipped, sent and fetched: its invoice is the year's first.
    static func firstShippedAfterACopy(_ company: Company) async throws -> (first: String, second: String, copy: String) {
        let (first, _) = try await OwnerCatchUpEndToEndTests.orderAtHeadOffice(company, backup: "first")
        let (second, _) = try await OwnerCatchUpEndToEndTests.orderAtHeadOffice(company, backup: "second")
        let copy = company.directory.appendingPathComponent("hq-copy.sqlite").path
        try company.open("hq").store.pool.backup(to: DatabaseQueue(path: copy))
        try FileManager.default.copyItem(at: StoreFiles(path: company.store("hq")).syncWatermark, to: StoreFiles(path: copy).syncWatermark)
        _ = try await company.open("hq").orders.execute(number: first)
        try await company.sync("hq")
        try await company.sync("oxf")
        return (first, second, copy)
    }

    /// Head office's folder put back whole to the copy; the copy ships the second order (its invoice takes the
    /// year's first number again), takes back what it shipped when `returning` (a credit note of that invoice), and
    /// meets the server's refusal, answered by `sync resume`; then each syncs in turn.
    static func putBackShipAndResume(
        _ company: Company,
        second: String,
        copy: String,
        returning: Bool = false,
        shipAgain first: String? = nil
    ) async throws {
        let files = StoreFiles(path: company.store("hq"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: files.path + suffix) }
        try FileManager.default.copyItem(atPath: copy, toPath: files.path)
        try FileManager.default.removeItem(at: files.syncWatermark)
        try FileManager.default.copyItem(at: StoreFiles(path: copy).syncWatermark, to: files.syncWatermark)
        let shipped = try await company.open("hq").orders.execute(number: second)
        if returning {
            let product = try #require(shipped.lines.first?.line.productID)
            _ = try await company.open("hq").invoicing.takeReturn(
                orderNumber: second,
                shipmentSequence: 1,
                lines: [ShipLine(productID: product, quantity: 1)]
            )
        }
        // The copy ships again, when asked, the order the earlier copy shipped: the same shipment, another invoice.
        if let first { _ = try await company.open("hq").orders.execute(number: first) }
        await #expect(throws: ShopSyncError.self) { try await company.sync("hq") }
        try await company.open("hq").sync.resumeAsThisCopy()
        for name in ["hq", "oxf", "hq", "oxf"] { try await company.sync(name) }
    }

    @Test func theLaterInvoiceIsIssuedAgainUnderTheNextNumberAndEveryInstallationHoldsTheSameLedger() async throws {
        // Given head office's first order shipped and invoiced after a copy of its folder was taken
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (first, second, copy) = try await Self.firstShippedAfterACopy(company)
        let firstNumber = try #require(try await Self.ledger(company, "hq").invoices.first?.first)
        // When head office is put back whole to the copy, ships the second order, resumes, and each syncs in turn
        try await Self.putBackShipAndResume(company, second: second, copy: copy)
        // Then the first order keeps the number, the second is invoiced under the next, and both installations
        // hold exactly that, with nothing waiting
        let hq = try await Self.ledger(company, "hq")
        let shop = try await Self.ledger(company, "oxf")
        #expect(hq.invoices.map { $0[1] } == [first, second])
        #expect(hq.invoices.first?.first == firstNumber)
        #expect(hq.invoices.last?.first != firstNumber)
        #expect(shop.invoices == hq.invoices)
        #expect(hq.waiting == 0 && shop.waiting == 0)
    }

    @Test func headOfficesInboxSaysWhichInvoiceToSendTheCustomerAndTheNewOneNamesTheOneItReplaces() async throws {
        // Given head office's first order shipped and invoiced after a copy of its folder was taken
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (_, second, copy) = try await Self.firstShippedAfterACopy(company)
        let firstNumber = try #require(try await Self.ledger(company, "hq").invoices.first?.first)
        // When head office is put back whole to the copy, ships the second order, resumes, and each syncs in turn
        try await Self.putBackShipAndResume(company, second: second, copy: copy)
        // Then head office's inbox tells the manager to send the invoice issued again, which names the number it
        // replaces; resolving that entry brings nothing back into the ledger
        let hq = try company.open("hq")
        let reissued = try #require(try await Self.ledger(company, "hq").invoices.last?.first)
        let entry = try #require(try await hq.sync.conflicts().first { $0.reason.contains("send the customer invoice \(reissued)") })
        #expect(entry.reason.contains("in place of the one numbered \(firstNumber)"))
        #expect(try await hq.invoicing.invoice(number: reissued).invoice.rendition.contains("Replaces invoice \(firstNumber)"))
        try await hq.sync.resolveConflict(id: entry.id, keepMine: false)
        #expect(try await Self.ledger(company, "hq").invoices.count == 2)
    }

    @Test func anInvoiceInAShopsZoneNumberedInHeadOfficesSeriesTakesNothingsPlace() async throws {
        // Given head office's order shipped and invoiced, held by the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (order, _) = try await OwnerCatchUpEndToEndTests.orderAtHeadOffice(company, backup: "first")
        _ = try await company.open("hq").orders.execute(number: order)
        try await company.sync("hq")
        try await company.sync("oxf")
        let shop = try company.open("oxf")
        let before = try await Self.ledger(company, "oxf").invoices
        // When a copy of head office's invoice under another record id, with the earliest clocks, arrives in the
        // shop's own zone (a shop holding a credential writes only its own zone)
        let shopZone = "site-" + (try await shop.sync.siteCode())
        var forged = try #require(
            try await shop.store.pool.read { db -> SyncRecord? in
                guard let site = try shop.syncSite(db), let recordID = try String.fetchOne(db, sql: "SELECT recordID FROM invoices") else {
                    return nil
                }
                let zone = try String.fetchOne(db, sql: "SELECT zoneName FROM sync_records WHERE recordID = ?", arguments: [recordID]) ?? ""
                return try RecordMapping.record(db, table: SyncTable.byName["invoices"]!, recordID: recordID, site: site, zoneName: zone)
            }
        )
        forged.recordName = newRecordID()
        forged.zoneID = ZoneID(shopZone)
        forged.fields[FieldClock.fieldName] = FieldClock.field(["counter": FieldClock(milliseconds: 1, site: "forger")])
        let forgery = forged
        let applied = try await shop.syncEngine.applyDownloaded(zone: shopZone, records: [forgery], token: "forged-1")
        // Then it is refused and listed, and head office's invoice keeps its number
        #expect(applied.discarded == 1)
        #expect(try await Self.ledger(company, "oxf").invoices == before)
        #expect(try await shop.sync.conflicts().contains { $0.recordID == forgery.recordName && $0.reason.contains("another site's series") })
    }

    @Test func aReturnCreditedAgainstTheInvoiceSetAsideIsCreditedAgainAgainstTheNewOne() async throws {
        // Given head office's first order shipped and invoiced after a copy of its folder was taken
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (_, second, copy) = try await Self.firstShippedAfterACopy(company)
        // When head office is put back whole to the copy, ships the second order and takes it back (a credit note of
        // the invoice whose number is given twice), resumes, and each syncs in turn
        try await Self.putBackShipAndResume(company, second: second, copy: copy, returning: true)
        // Then at both installations the return has one credit note, of the invoice issued again, under a number
        // past the one set aside with the first invoice (which the customer may hold)
        for name in ["hq", "oxf"] {
            let notes = try company.open(name).store.pool.read { db -> [Row] in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT c.counter, i.number AS corrects, (SELECT count(*) FROM sync_set_aside s WHERE s.kind = 'creditNote') AS setAside,
                          (SELECT number FROM invoices WHERE kind = 'invoice' ORDER BY counter DESC LIMIT 1) AS reissued
                        FROM invoices c JOIN invoices i ON i.id = c.correctsID WHERE c.kind = 'creditNote'
                        """
                )
            }
            #expect(notes.count == 1)
            #expect(notes.first?["corrects"] as String? == notes.first?["reissued"] as String?)
            #expect(notes.first?["reissued"] as String? != nil)
            #expect(notes.first?["counter"] == 2 && notes.first?["setAside"] == 1)
        }
    }

    @Test func aShopThatJoinsAfterwardsHoldsTheSameLedgerWithNothingWaiting() async throws {
        // Given head office put back whole after its first order shipped, having shipped the second under the same
        // number, resumed and synced with the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (_, second, copy) = try await Self.firstShippedAfterACopy(company)
        try await Self.putBackShipAndResume(company, second: second, copy: copy)
        // When a new shop joins and downloads everything, the three documents in whatever order the server gives
        let joining = try Backoffice.open(StoreConfiguration(path: company.store("new")), seedIfCreated: false)
        _ = try await ShopSyncEngine.join(joining, server: company.url, token: try await company.token(role: .shop))
        try await company.sync("new")
        try await company.sync("new")
        // Then it holds head office's ledger, and nothing waits
        let hq = try await Self.ledger(company, "hq")
        let new = try await Self.ledger(company, "new")
        #expect(new.invoices == hq.invoices)
        #expect(new.waiting == 0)
    }

    @Test func aShipmentInvoicedByTwoCopiesKeepsTheInvoiceIssuedFirstEverywhere() async throws {
        // Given head office's first order shipped and invoiced after a copy of its folder was taken
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (first, second, copy) = try await Self.firstShippedAfterACopy(company)
        let firstNumber = try #require(try await Self.ledger(company, "hq").invoices.first?.first)
        // When head office is put back whole to the copy, ships the second order (the year's first number again)
        // and the first order again (the same shipment, invoiced under the next number), resumes, and each syncs
        try await Self.putBackShipAndResume(company, second: second, copy: copy, shipAgain: first)
        // Then both installations hold the first order's invoice issued first, and the second order's issued again,
        // with nothing waiting
        let hq = try await Self.ledger(company, "hq")
        let shop = try await Self.ledger(company, "oxf")
        #expect(hq.invoices.map { $0[1] } == [first, second])
        #expect(hq.invoices.first?.first == firstNumber)
        #expect(shop.invoices == hq.invoices)
        #expect(hq.waiting == 0 && shop.waiting == 0)
    }
}
