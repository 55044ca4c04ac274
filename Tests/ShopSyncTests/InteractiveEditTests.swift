import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@testable import NorthwindTestSupport

/// An edit made in a form while online keeps the rule of a single store: when someone saved first, at this
/// installation or another, the editor is told what changed and nothing is overwritten.
@Suite("Interactive edits across installations", .serialized)
struct InteractiveEditTests {
    /// The shop's store as `northwind serve` runs it: every interactive edit first pulls from the server.
    /// `patience` is how long an edit waits for that pull: a loaded test machine can take longer than serve's 2 s.
    static func serving(_ company: Company, _ name: String, patience: Duration = .seconds(2)) throws -> Backoffice {
        var backoffice = try company.open(name)
        backoffice.refreshBeforeEdit = ShopSyncEngine.refresher(for: backoffice, timeout: patience)
        return backoffice
    }

    /// The id at `backoffice` of the product with this record id.
    static func id(_ backoffice: Backoffice, _ recordID: String) throws -> Int64 {
        try #require(
            try backoffice.store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE recordID = ?", arguments: [recordID])
            }
        )
    }

    @Test func anEditorWhoseFormPredatesAnotherSitesSaveIsToldWhatChanged() async throws {
        // Given head office and a serving shop in sync, and a shop employee who opened a product's form
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try Self.serving(company, "oxf", patience: .seconds(60))
        let product = try #require(try await hq.catalogue.list().items.first).product
        var form = try shop.catalogue.product(id: try Self.id(shop, product.recordID)).product
        // When head office changes the price and syncs, and then the shop employee saves a new name
        var priced = product
        priced.unitPrice = Money(cents: product.unitPrice.cents + 100)
        _ = try await hq.catalogue.update(priced)
        try await company.sync("hq")
        form.name = "Renamed at the shop"
        let error = await #expect(throws: NorthwindError.self) { try await shop.catalogue.update(form) }
        // Then the save is refused with what head office changed, and the shop holds head office's price, not the name
        #expect("\(error.map { "\($0)" } ?? "")".contains("unit price is now"))
        let atShop = try shop.catalogue.product(id: form.id ?? 0).product
        #expect(atShop.unitPrice == priced.unitPrice)
        #expect(atShop.name == product.name)
    }

    @Test func anEditWhileTheServerIsOutOfReachSavesAtOnce() async throws {
        // Given a serving shop whose network is down
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let shop = try Self.serving(company, "oxf")
        company.cutNetwork()
        var product = try #require(try await shop.catalogue.list().items.first).product
        // When an employee saves a new name
        product.name = "Renamed offline"
        let clock = ContinuousClock()
        let started = clock.now
        let saved = try await shop.catalogue.update(product)
        // Then it saves, without waiting long for the server
        #expect(saved.name == "Renamed offline")
        #expect(clock.now - started < .seconds(5))
    }
}
