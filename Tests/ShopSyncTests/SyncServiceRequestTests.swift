import Foundation
import FoundationNetworking
import GRDB
import Logging
import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@testable import NorthwindTestSupport

@Suite("The sync service's requests to the server")
struct SyncServiceRequestTests {
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
                try await productName(recordID, at: shop) == "Renamed with nine streams open"
            }
        }
    }

    /// A sync's own writes wake the service as any commit does; with nothing to send, it must not ask the server
    /// again (twenty shops each did so for every other shop's order).
    @Test func aShopThatOnlyReceivedAChangeAsksTheServerNothingMore() async throws {
        // Given head office and a shop in sync, the shop's sync service running, its event stream open (a first
        // rename has reached the shop, which takes an open stream) and every sync that prompted over
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let shop = try company.open("oxf")
        var quiet = Logger(label: "one-shop")
        quiet.logLevel = .critical
        let service = Task { [quiet] in try await ShopSyncService(backoffice: shop, interval: { .seconds(3600) }, logger: quiet).run() }
        defer { service.cancel() }
        _ = try await Self.settledListings(company)
        let hq = try company.open("hq")
        try await Self.rename(at: hq, to: "Renamed once", in: company, seenAt: shop)
        let before = try await Self.settledListings(company)
        // When head office renames a product and syncs, and the shop receives it on the server's notice
        try await Self.rename(at: hq, to: "Renamed, and nothing more", in: company, seenAt: shop)
        // Then the zones were listed twice: by head office's sync and by the shop's; not a third time for the
        // shop's commit of what it received
        let listings = try await Self.settledListings(company) - before
        #expect(listings <= 2, "the zones were listed \(listings) times")
    }

    /// Head office renames its first product and syncs; returns once `shop` shows the new name.
    static func rename(at hq: Backoffice, to name: String, in company: Company, seenAt shop: Backoffice) async throws {
        var product = try #require(try await hq.catalogue.list().items.first?.product)
        product.name = name
        _ = try await hq.catalogue.update(product)
        try await company.sync("hq")
        try await eventually("the shop to receive \(name)") { try await productName(product.recordID, at: shop) == name }
    }

    /// The zone listings once the count has stayed the same for two seconds: the service's start-up syncs, or the
    /// syncs a change prompted, are over. A fixed wait was too short with the whole suite running on two cores.
    static func settledListings(_ company: Company) async throws -> Int {
        var last = try await zoneListings(company)
        var steady = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now - steady < .seconds(2) {
            guard ContinuousClock.now < deadline else { throw CLIError(description: "the zone listings never settled (\(last))") }
            try await Task.sleep(for: .milliseconds(250))
            let now = try await zoneListings(company)
            if now != last { (last, steady) = (now, ContinuousClock.now) }
        }
        return last
    }

    /// How many times the server has listed zones, from its `/metrics`.
    static func zoneListings(_ company: Company) async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(company.server.port)/metrics")!)
        let body = String(decoding: data, as: UTF8.self)
        var count = 0
        for line in body.split(separator: "\n") where line.hasPrefix("hb_requests{") && line.contains("zones/list") {
            count += Int(line.split(separator: " ").last ?? "") ?? 0
        }
        return count
    }
}
