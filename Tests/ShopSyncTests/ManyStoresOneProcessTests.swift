import Foundation
import GRDB
import Logging
import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@Suite("Many stores syncing in one process")
struct ManyStoresOneProcessTests {
    /// AsyncHTTPClient's shared client opens at most eight connections to a host, and each store's sync service holds
    /// one for good with its event stream. The company benchmark's twenty shops in one process once waited out every
    /// request's deadline behind their streams.
    @Test func nineStoresEachHoldingAStreamStillSendAndReceive() async throws {
        // Given head office and eight shops joined to one server, each store's sync service running in this process
        let company = try Company()
        let shops = (1...8).map { "shop\($0)" }
        try await company.start(shops: shops)
        let stores = try (["hq"] + shops).map { try company.open($0) }
        var quiet = Logger(label: "many-stores")
        quiet.logLevel = .critical
        let services = stores.map { store in
            Task { [quiet] in try await ShopSyncService(backoffice: store, interval: { .seconds(3600) }, logger: quiet).run() }
        }
        defer { for service in services { service.cancel() } }
        // When head office renames a product once the services have opened their streams
        try await Task.sleep(for: .seconds(2))
        var product = try #require(try await stores[0].catalogue.list().items.first?.product)
        product.name = "Renamed with nine streams open"
        _ = try await stores[0].catalogue.update(product)
        // Then every shop receives it, its sync sent and fetched beside the nine open streams
        let recordID = product.recordID
        for (index, shop) in stores.enumerated().dropFirst() {
            try await eventually("shop \(index) to receive the rename") {
                try await shop.store.pool.read { db in
                    try String.fetchOne(db, sql: "SELECT name FROM products WHERE recordID = ?", arguments: [recordID])
                } == "Renamed with nine streams open"
            }
        }
    }
}
