import Foundation
import GRDB
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

/// After the server's restore, a shop keeps head office's records as it last saw them until head office has sent
/// again what the restore lost: an order shipped does not show as new in between, nor does one taken vanish
/// (found by the convergence harness, seed 7, five installations, 180 s).
@Suite("A site's records after the server's restore", .serialized)
struct OwnerCatchUpEndToEndTests {
    /// Head office takes an order of one stocked product, the shop fetches it; then the server is backed up.
    static func orderAtHeadOffice(_ company: Company, backup: String = "server-backup") async throws -> (order: String, serverBackup: String) {
        let hq = try company.open("hq")
        let product = try #require(try await hq.catalogue.list().items.first { !$0.product.discontinued }?.product)
        _ = try await hq.stock.receive(productID: product.key, quantity: 5)
        let customer = try #require(try await hq.records.list(Customer.self, limit: 1).items.first?.code)
        let order = try await hq.orders.create(
            OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: product.key, quantity: 1)])
        ).order.number
        try await company.sync("hq")
        try await company.sync("oxf")
        let folder = company.directory.appendingPathComponent(backup).path
        _ = try ServerBackup.create(database: company.database, folder: folder)
        return (order, folder)
    }

    /// Head office's order, new in the server's backup and in head office's own, then shipped, synced and fetched by
    /// the shop: what both restores lose.
    struct ShippedAfterBothBackups {
        let order: String
        let shipped: OrderDetail
        let serverBackup: String
        let hqBackup: URL
        let place: BackupPlace
    }

    static func shippedAfterBothBackups(_ company: Company) async throws -> ShippedAfterBothBackups {
        let place = BackupPlace()
        let (order, folder) = try await orderAtHeadOffice(company)
        let hqBackup = try await company.open("hq").backups.create(in: place.folder, kind: .manual).file
        let shipped = try await company.open("hq").orders.execute(number: order)
        try await company.sync("hq")
        try await company.sync("oxf")
        return ShippedAfterBothBackups(order: order, shipped: shipped, serverBackup: folder, hqBackup: hqBackup, place: place)
    }

    /// The server and head office each restored from its backup.
    static func restoreBoth(_ company: Company, _ backups: ShippedAfterBothBackups) async throws {
        _ = try ServerBackup.restore(folder: backups.serverBackup, over: company.database)
        _ = try await Restore.perform(backups.hqBackup, over: StoreFiles(path: company.store("hq")), folder: backups.place.folder, force: true)
    }

    @Test func anOrderHeadOfficeShippedAfterTheServersBackupStaysShippedAtAShopThroughTheRestore() async throws {
        // Given an order of head office's, new in the server's backup, then shipped, synced and seen shipped at the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (order, folder) = try await Self.orderAtHeadOffice(company)
        _ = try await company.open("hq").orders.execute(number: order)
        try await company.sync("hq")
        try await company.sync("oxf")
        // When the server is restored from the backup and the shop syncs before head office has
        _ = try ServerBackup.restore(folder: folder, over: company.database)
        try await company.sync("oxf")
        let inBetween = try await company.open("oxf").orders.order(number: order).order.status
        let awaiting = try await company.open("oxf").sync.status().awaitingSites
        try await company.sync("hq")
        let after = try await company.sync("oxf")
        // Then the shop shows it shipped throughout, and its copy of head office's zone agrees with the server's
        #expect(inBetween == .shipped)
        #expect(awaiting == [try await company.open("hq").sync.siteCode()])
        #expect(try await company.open("oxf").sync.status().awaitingSites.isEmpty)
        #expect(try await company.open("oxf").orders.order(number: order).order.status == .shipped)
        #expect(after.zonesDiffering.isEmpty)
    }

    @Test func anOrderHeadOfficeTookAfterTheServersBackupStaysAtAShopThroughTheRestore() async throws {
        // Given the server backed up, then an order taken at head office and fetched by the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let (_, folder) = try await Self.orderAtHeadOffice(company)
        let (later, _) = try await Self.orderAtHeadOffice(company, backup: "later-backup")
        // When the server is restored from the backup that lacks it, and the shop syncs before head office has
        _ = try ServerBackup.restore(folder: folder, over: company.database)
        try await company.sync("oxf")
        let inBetween = await northwindError { _ = try await company.open("oxf").orders.order(number: later) }
        try await company.sync("hq")
        let after = try await company.sync("oxf")
        // Then the shop keeps the order throughout
        #expect(inBetween == nil)
        #expect(try await company.open("oxf").orders.order(number: later).lines.count == 1)
        #expect(after.zonesDiffering.isEmpty)
    }

    @Test func aShipmentHeadOfficeAndTheServerBothLostComesBackFromTheShopThatHeldIt() async throws {
        // Given an order new in the server's backup and in head office's own, then shipped and seen shipped at the shop
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let backups = try await Self.shippedAfterBothBackups(company)
        let order = backups.order
        let productID = try #require(backups.shipped.lines.first?.line.productID)
        let stockAfterShipping = try await company.open("hq").stock.byLocation(productID: productID).first { $0.isHere }?.units
        // When both the server and head office are restored from their backups, and each syncs in turn: head
        // office catches up without the shipment, the shop offers what it held, head office answers
        try await Self.restoreBoth(company, backups)
        try await company.sync("oxf")
        try await company.sync("hq")
        try await company.sync("oxf")
        let offered = try await company.open("oxf").orders.order(number: order).order.status
        try await company.sync("hq")
        let after = try await company.sync("oxf")
        // Then head office has the shipment back (its shelf too), the shop showed it shipped throughout, nothing
        // went to the shop's inbox, and both copies of head office's zone agree with the server's
        #expect(offered == .shipped)
        #expect(try await company.open("hq").orders.order(number: order).order.status == .shipped)
        #expect(try await company.open("hq").stock.byLocation(productID: productID).first { $0.isHere }?.units == stockAfterShipping)
        #expect(try await company.open("hq").orders.shipment(orderNumber: order, sequence: 1).lines.count == 1)
        #expect(try await company.open("oxf").orders.order(number: order).order.status == .shipped)
        #expect(try await company.open("oxf").sync.conflicts().isEmpty)
        #expect(after.zonesDiffering.isEmpty)
        #expect(try await company.sync("hq").zonesDiffering.isEmpty)
    }
}
