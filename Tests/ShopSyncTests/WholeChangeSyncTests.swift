import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// A change made of several records (an order shipped: the order, its shipment and its movements) is seen whole or
/// not at all, also when a version sent again after the server's restore meets the server's newer one.
@Suite("A change seen whole", .serialized)
struct WholeChangeSyncTests {
    @Test func anOrderSentAgainAfterBothRestoresNeverShowsShippedWithoutItsShipment() async throws {
        // Given head office's order, a backup of head office, and then the order executed and sent
        let company = try Company()
        try await company.start(shops: [])
        let place = BackupPlace()
        // (Head office's store is closed before the restore: a store open here would refuse it.)
        let (number, backup) = try await { () async throws -> (String, URL) in
            let hq = try company.open("hq")
            let productID = try #require(
                try await hq.catalogue.list().items.first { !$0.product.discontinued && $0.product.unitsInStock > 0 }?.product.id
            )
            let customer = try #require(try await hq.records.list(Customer.self, limit: 1).items.first?.code)
            let number = try await hq.orders.create(
                OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: productID, quantity: 1)])
            ).order.number
            try await company.sync("hq")
            let backup = try await hq.backups.create(in: place.folder, kind: .manual).file
            _ = try await hq.orders.execute(number: number)
            try await company.sync("hq")
            return (number, backup)
        }()
        // When the server is restored (a new epoch, which still holds the shipment), head office is restored from its
        // backup, and head office's next sync sends its versions again but ends before it fetches anything
        let folder = company.directory.appendingPathComponent("server-backup").path
        _ = try ServerBackup.create(database: company.database, folder: folder)
        _ = try ServerBackup.restore(folder: folder, over: company.database)
        _ = try await Restore.perform(backup, over: StoreFiles(path: company.store("hq")), folder: place.folder, force: true)
        let pushed = try await ShopSyncEngine(backoffice: try company.open("hq")).syncNow(pulling: [])
        // Then the order is still new there, not shipped without the shipment that shipped it
        #expect(pushed.sentAgainAfterServerRestore > 0)
        #expect(try await company.open("hq").orders.order(number: number).order.status == .new)
        // And a whole sync brings the whole change: shipped, with the one movement that shipped it
        try await company.sync("hq")
        let restored = try company.open("hq")
        #expect(try await restored.orders.order(number: number).order.status == .shipped)
        let shipped = try await restored.store.pool.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM stock_movements m JOIN orders o ON o.id = m.orderID WHERE o.number = ? AND m.reason = 'shipped'",
                arguments: [number]
            )
        }
        #expect(shipped == 1)
    }
}
