import Foundation
import GRDB
@_spi(SyncEngine) import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@testable import NorthwindTestSupport

/// Category pictures and employee photos travel as assets: the record names the bytes, which go up and down apart.
@Suite("Pictures in shop sync", .serialized)
struct PictureSyncTests {
    /// Bytes no other test uses, `size` long (over 100 KB they live in a file beside the store).
    static func picture(_ seed: UInt8, size: Int = 2_000) -> BinaryContent {
        BinaryContent(bytes: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }), contentType: "image/png")
    }

    /// The row id at `store` of the row `recordID` of `table`.
    static func id(_ backoffice: Backoffice, _ table: String, _ recordID: String) throws -> Int64 {
        try #require(
            try backoffice.store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT id FROM \(table) WHERE recordID = ?", arguments: [recordID])
            }
        )
    }

    @Test func aCategoryPictureSetAtHeadOfficeReachesTheShop() async throws {
        // Given head office and a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let category = try #require(try await hq.records.list(Category.self).items.first)
        // When head office sets the category's picture and both sync
        try await hq.catalogue.setPicture(categoryID: try #require(category.id), Self.picture(1))
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the shop shows the same bytes, of the same type
        let atShop = try await shop.catalogue.picture(categoryID: try Self.id(shop, "categories", category.recordID))
        #expect(atShop == Self.picture(1))
    }

    @Test func aPictureChangedAgainBeforeItsBatchWentUpGoesUpInstead() async throws {
        // Given head office and a shop in sync, and a picture set at the shop whose batch was built but not sent (as
        // a sync cut off before sending leaves it)
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let category = try #require(try await shop.records.list(Category.self).items.first)
        let id = try #require(category.id)
        try await shop.catalogue.setPicture(categoryID: id, Self.picture(5))
        _ = try await shop.syncEngine.nextOutboxBatch()
        // When the picture is changed again, so that the first one's bytes are gone here, and both sync
        try await shop.catalogue.setPicture(categoryID: id, Self.picture(6))
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office has the second picture: the batch naming bytes nobody holds was built afresh
        #expect(try await hq.catalogue.picture(categoryID: try Self.id(hq, "categories", category.recordID)) == Self.picture(6))
        #expect(try await shop.sync.pendingChanges() == 0)
    }

    @Test func aLargeEmployeePhotoSetAtAShopReachesHeadOfficeAndItsRemovalFollows() async throws {
        // Given head office and a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let employee = try #require(try await shop.records.list(Employee.self).items.first)
        let large = Self.picture(2, size: 300_000)
        // When the shop sets a photo larger than the store keeps inline, and both sync
        try await shop.people.setPhoto(employeeID: try #require(employee.id), large)
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office has the photo, kept in a file beside its store
        let hqID = try Self.id(hq, "employees", employee.recordID)
        #expect(try await hq.people.photo(employeeID: hqID) == large)
        let file = try await hq.store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT photoFile FROM employees WHERE id = ?", arguments: [hqID])
        }
        #expect(file != nil)
        // And when the shop removes the photo, head office's goes too
        try await shop.people.setPhoto(employeeID: try #require(employee.id), nil)
        try await company.sync("oxf")
        try await company.sync("hq")
        #expect(try await hq.people.photo(employeeID: hqID) == nil)
    }

    @Test func aPictureChangedAtTwoSitesGoesToTheLaterAndTheOtherCanBeRestored() async throws {
        // Given head office and a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let shop = try company.open("oxf")
        let category = try #require(try await hq.records.list(Category.self).items.first)
        let shopID = try Self.id(shop, "categories", category.recordID)
        // When the shop changes the picture offline, head office changes it later, and head office syncs first
        try await shop.catalogue.setPicture(categoryID: shopID, Self.picture(3))
        try await Task.sleep(for: .milliseconds(20))
        try await hq.catalogue.setPicture(categoryID: try #require(category.id), Self.picture(4))
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the shop shows head office's later picture, and its inbox keeps its own
        #expect(try await shop.catalogue.picture(categoryID: shopID) == Self.picture(4))
        let conflict = try #require(try await shop.sync.conflicts().first)
        #expect(conflict.field == "picture")
        // And when the shop's manager keeps the shop's picture, it reaches head office
        try await shop.sync.resolveConflict(id: conflict.id, keepMine: true)
        try await company.sync("oxf")
        try await company.sync("hq")
        #expect(try await hq.catalogue.picture(categoryID: try #require(category.id)) == Self.picture(3))
        #expect(try await shop.catalogue.picture(categoryID: shopID) == Self.picture(3))
    }
}
