import Foundation
import GRDB
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// A company upgrades one installation at a time: for a while, shops of the version before purchasing (v21), which
/// shared `unitsOnOrder` as a NOT NULL catalog field, sync with installations that derive it.
@Suite("Sync with an installation not yet upgraded")
struct OlderVersionSyncTests {
    static let lastVersionBeforePurchasing = "v21: a version sent again names its zone and its server time"

    /// How v21 wrote a downloaded product: every column of its schema but its local ones, NULL where the record has
    /// no field (references are left NULL here: the old store in these tests has no parents).
    static func writeAsV21(_ record: SyncRecord, into db: Database) throws {
        let local: Set = ["id", "recordID", "version", "unitsInStock"]
        let columns = try db.columns(in: "products").map(\.name).filter { !local.contains($0) }
        let values = columns.map { name -> DatabaseValue in
            guard let field = record.fields[name], case .reference = field else {
                return record.fields[name].flatMap(RecordMapping.databaseValue) ?? .null
            }
            return .null
        }
        try db.execute(
            sql: "INSERT INTO products (recordID, \(columns.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: columns.count)))",
            arguments: StatementArguments([record.recordName.databaseValue] + values)
        )
    }

    @Test func aProductThisVersionCreatesCanBeWrittenByAShopOfTheVersionBeforePurchasing() async throws {
        // Given head office on this version, joined, with a product it has just created
        let office = try TemporaryStore()
        try await office.backoffice.syncEngine.join(SyncRelay.membership("HQ", role: "hq"), containerHasData: false)
        _ = try await office.backoffice.catalogue.create(Product(name: "Chai", unitPrice: Money(cents: 1800)))
        let batch = try #require(try await office.backoffice.syncEngine.nextOutboxBatch())
        let record = try #require(batch.operations.map(\.record).first { $0.recordType == "products" })

        // When a shop still on v21 writes the record as that version did
        let old = try OldStoreFile(upTo: Self.lastVersionBeforePurchasing) { try Self.writeAsV21(record, into: $0) }

        // Then the shop has the product, with nothing on order (rather than refusing it for a missing field)
        let row = try DatabaseQueue(path: old.path).read { db in try Row.fetchOne(db, sql: "SELECT name, unitsOnOrder FROM products") }
        #expect(row?["name"] == "Chai")
        #expect(row?["unitsOnOrder"] == 0)
    }

    @Test func anEditOfAProductAnOlderVersionSentNeverClearsItsUnitsOnOrderThere() async throws {
        // Given a shop on this version that downloaded a product from a v21 head office (with its 37 on order)
        let office = try TemporaryStore()
        try await office.backoffice.syncEngine.join(SyncRelay.membership("HQ", role: "hq"), containerHasData: false)
        _ = try await office.backoffice.catalogue.create(Product(name: "Chai", unitPrice: Money(cents: 1800)))
        var record = try #require(try await office.backoffice.syncEngine.nextOutboxBatch()?.operations.map(\.record).first)
        record.fields["unitsOnOrder"] = .int64(37)
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(SyncRelay.membership("OXF"), containerHasData: true)
        _ = try await shop.backoffice.syncEngine.applyDownloaded(zone: "catalog", records: [record], token: "t1")
        let downloaded = try #require(try shop.backoffice.catalogue.search("Chai").first?.product)
        #expect(downloaded.unitsOnOrder == 0)
        #expect(try await shop.backoffice.sync.pendingChanges() == 0)

        // When the shop changes its price
        var edited = downloaded
        edited.unitPrice = Money(cents: 1950)
        _ = try await shop.backoffice.catalogue.update(edited)

        // Then the update carries the price and leaves units on order alone: a NULL there would stop v21 shops
        let update = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch()?.operations.first)
        #expect(update.kind == .update)
        #expect(update.record.fields["unitPriceCents"] == .int64(1950))
        #expect(update.record.fields["unitsOnOrder"] == nil)
    }

    @Test func anEditAfterTheUpgradeDoesNotSendTheFigureTheShopHeldBefore() async throws {
        // Given a shop that synced a product on v21 (its base holds head office's 37 on order), now upgraded
        let office = try TemporaryStore()
        try await office.backoffice.syncEngine.join(SyncRelay.membership("HQ", role: "hq"), containerHasData: false)
        _ = try await office.backoffice.catalogue.create(Product(name: "Chai", unitPrice: Money(cents: 1800)))
        var record = try #require(try await office.backoffice.syncEngine.nextOutboxBatch()?.operations.map(\.record).first)
        let shop = try TemporaryStore()
        try await shop.backoffice.syncEngine.join(SyncRelay.membership("OXF"), containerHasData: true)
        _ = try await shop.backoffice.syncEngine.applyDownloaded(zone: "catalog", records: [record], token: "t1")
        record.fields["unitsOnOrder"] = .int64(37)
        let asV21Saved = record
        try await shop.store.pool.write { db in
            try db.execute(
                sql: "UPDATE sync_records SET fields = ? WHERE tableName = 'products' AND recordID = ?",
                arguments: [try ShopSync.encodeFields(asV21Saved.fields), asV21Saved.recordName]
            )
        }

        // When the shop changes the product's price
        var edited = try #require(try shop.backoffice.catalogue.search("Chai").first?.product)
        edited.unitPrice = Money(cents: 1950)
        _ = try await shop.backoffice.catalogue.update(edited)

        // Then the update carries the price only: a 0 would overwrite the figure older shops still show
        let update = try #require(try await shop.backoffice.syncEngine.nextOutboxBatch()?.operations.first)
        #expect(update.record.fields["unitPriceCents"] == .int64(1950))
        #expect(update.record.fields["unitsOnOrder"] == nil)
    }
}
