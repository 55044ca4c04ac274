import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

/// An offer of a lost record is taken back only by its zone's owner, and only for values the owner wrote itself in a
/// period it lost in a restore: a shop holding a credential cannot use an offer to write another site's records.
@Suite("Offers of lost records", .serialized)
struct RecordOfferTests {
    /// A shop's offer, written straight into its store, of head office's order with the given status, its clock
    /// naming head office at `clockMilliseconds`.
    static func forgeOffer(_ company: Company, order number: String, status: String, clockMilliseconds: Int64) async throws {
        let hq = try company.open("hq")
        let recordID = try await hq.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT recordID FROM orders WHERE number = ?", arguments: [number])
        }
        let body = try await hq.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT fields FROM sync_records WHERE tableName = 'orders' AND recordID = ?", arguments: [recordID])
        }
        var fields = try JSONDecoder().decode([String: FieldValue].self, from: Data(try #require(body).utf8))
        fields["status"] = .string(status)
        let hqSite = try await hq.sync.siteCode()
        guard case .string(let clockJSON)? = fields[FieldClocks.fieldName] else { throw CLIError(description: "the order has no clocks") }
        var clocks = try JSONDecoder().decode([String: String].self, from: Data(clockJSON.utf8))
        clocks["status"] = String(format: "%015lld", clockMilliseconds) + "." + hqSite
        fields[FieldClocks.fieldName] = .string(String(decoding: try JSONEncoder().encode(clocks), as: UTF8.self))
        let offered = SyncRecord(recordName: try #require(recordID), recordType: "orders", zoneID: ZoneID("site-\(hqSite)"), fields: fields)
        let oxf = try company.open("oxf")
        let oxfSite = try await oxf.sync.siteCode()
        try await oxf.store.pool.write { db in
            try db.execute(
                sql: "INSERT INTO record_offers (site, zoneName, recordType, recordName, changeTag, body) VALUES (?, ?, 'orders', ?, 'forged', ?)",
                arguments: [oxfSite, "site-\(hqSite)", offered.recordName, offered.json]
            )
        }
    }

    @Test func anOfferOfValuesHeadOfficeNeverLostIsRefusedAndChangesNothing() async throws {
        // Given head office's new order, synced to the shop, and a shop that forges an offer of it cancelled, its
        // clock naming head office, which has never been restored
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (order, _) = try await OwnerCatchUpEndToEndTests.orderAtHeadOffice(company)
        try await Self.forgeOffer(company, order: order, status: "cancelled", clockMilliseconds: Timestamp.now.milliseconds - 1000)
        // When the shop sends it and head office fetches it
        try await company.sync("oxf")
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the order stays new everywhere, and head office's answer, refused, is at the shop
        #expect(try await company.open("hq").orders.order(number: order).order.status == .new)
        #expect(try await company.open("oxf").orders.order(number: order).order.status == .new)
        let answers = try await company.open("oxf").store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT accepted, reason FROM record_offer_answers").map { ($0["accepted"] as Bool, $0["reason"] as String) }
        }
        #expect(answers.count == 1)
        #expect(answers.first?.0 == false)
        #expect(answers.first?.1.contains("not written here in a period this store lost") == true, "\(answers)")
    }

    @Test func anOfferWrittenAsAnotherSitesIsRefusedByTheServer() async throws {
        // Given a shop's offer row that names head office as the site that wrote it
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (order, _) = try await OwnerCatchUpEndToEndTests.orderAtHeadOffice(company)
        try await Self.forgeOffer(company, order: order, status: "cancelled", clockMilliseconds: Timestamp.now.milliseconds - 1000)
        let hqSite = try await company.open("hq").sync.siteCode()
        try await company.open("oxf").store.pool.write { db in try db.execute(sql: "UPDATE record_offers SET site = ?", arguments: [hqSite]) }
        // When the shop syncs
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then the server refuses it (the shop's inbox says so), and head office never sees it
        let refused = try await company.open("oxf").sync.conflicts().filter { $0.table == "record_offers" }
        #expect(refused.count == 1)
        #expect(refused.first?.reason.contains("zone's owner") == true, "\(refused)")
        let seen = try await company.open("hq").store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM record_offers") }
        #expect(seen == 0)
    }

    @Test func aShipmentComesBackWhenHeadOfficeCaughtUpBeforeTheShopFetchedAgain() async throws {
        // Given head office's order shipped after both its own backup and the server's, and fetched by the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let backups = try await OwnerCatchUpEndToEndTests.shippedAfterBothBackups(company)
        let order = backups.order
        // When both are restored, head office catches up first, then the shop fetches everything again (the
        // shipment's rows are gone from the server, and still referred to here), and each syncs once more
        try await OwnerCatchUpEndToEndTests.restoreBoth(company, backups)
        try await company.sync("hq")
        try await company.sync("oxf")
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then head office has its shipment back, and the shop never sent head office's rows as its own
        #expect(try await company.open("hq").orders.shipment(orderNumber: order, sequence: 1).lines.count == 1)
        #expect(try await company.open("hq").orders.order(number: order).order.status == .shipped)
        let hqZone = "site-" + (try await company.open("hq").sync.siteCode())
        let zones = try await company.open("oxf").store.pool.read { db in
            try String.fetchSet(db, sql: "SELECT zoneName FROM sync_records WHERE tableName IN ('shipments', 'shipment_lines', 'invoices')")
        }
        #expect(zones == [hqZone])
    }
}

extension RecordOfferTests {
    @Test func aShipmentComesBackFromAShopResumedAsThisCopyBeforeItFetchedAgain() async throws {
        // Given head office's order shipped after both its own backup and the server's, and fetched by the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let backups = try await OwnerCatchUpEndToEndTests.shippedAfterBothBackups(company)
        // When both are restored and head office catches up without the shipment, while the shop's store is made
        // the site's again (`sync resume`, after a copy of it ran elsewhere), so that its next sync fetches
        // everything again as a restored store does; then each syncs in turn
        try await OwnerCatchUpEndToEndTests.restoreBoth(company, backups)
        try await company.sync("hq")
        try await company.open("oxf").sync.resumeAsThisCopy()
        for name in ["oxf", "hq", "oxf", "hq", "oxf"] { try await company.sync(name) }
        // Then the shop offered what it held once its full sync was over, and head office has its shipment back
        let hq = try company.open("hq")
        #expect(try await hq.orders.order(number: backups.order).order.status == .shipped)
        #expect(try await hq.orders.shipment(orderNumber: backups.order, sequence: 1).lines.count == 1)
        #expect(try await company.open("oxf").sync.conflicts().isEmpty)
    }
}

extension RecordOfferTests {
    @Test func aShipmentComesBackFromAShopRestoredFromItsOwnBackupThatHeldIt() async throws {
        // Given head office's order shipped after both its own backup and the server's, fetched by the shop, which
        // then backs itself up
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let backups = try await OwnerCatchUpEndToEndTests.shippedAfterBothBackups(company)
        let shopBackup = try await company.open("oxf").backups.create(in: backups.place.folder, kind: .manual).file
        // When the server and head office are restored, head office catches up without the shipment, the shop is
        // restored from its backup (so its next sync fetches everything again, offering nothing until it is over),
        // and each syncs in turn
        try await OwnerCatchUpEndToEndTests.restoreBoth(company, backups)
        try await company.sync("hq")
        _ = try await Restore.perform(shopBackup, over: StoreFiles(path: company.store("oxf")), folder: backups.place.folder, force: true)
        for name in ["oxf", "hq", "oxf", "hq", "oxf"] { try await company.sync(name) }
        // Then head office has its shipment back
        let hq = try company.open("hq")
        #expect(try await hq.orders.order(number: backups.order).order.status == .shipped)
        #expect(try await hq.orders.shipment(orderNumber: backups.order, sequence: 1).lines.count == 1)
    }
}
