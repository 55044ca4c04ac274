import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// Acknowledged changes survive the ordinary operations that used to lose them silently: a sync server restored from
/// a backup, and a shop's store reverted to an older copy of its file.
@Suite("Sync loses nothing", .serialized)
struct SyncTrustEndToEndTests {
    @Test func aShopsAcknowledgedCustomerGoesUpAgainAfterTheServerIsRestoredFromAnOlderBackup() async throws {
        // Given a sync server backed up, then a shop's new customer sent and acknowledged
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let folder = company.directory.appendingPathComponent("server-backup").path
        _ = try ServerBackup.create(database: company.database, folder: folder)
        _ = try await company.open("oxf").create(Customer(code: "AFTER", companyName: "Sent after the server's backup"))
        let sent = try await company.sync("oxf")
        // When the server is restored from the backup, which lacks the customer, and the shop, then head office sync
        _ = try ServerBackup.restore(folder: folder, over: company.database)
        let resent = try await company.sync("oxf")
        try await company.sync("hq")
        // Then the shop kept the customer and sent it again, and head office has it
        #expect(sent.pending == 0)
        #expect(resent.sentAgainAfterServerRestore > 0)
        #expect(try company.open("oxf").customer(code: "AFTER").companyName == "Sent after the server's backup")
        #expect(try company.open("hq").customer(code: "AFTER").companyName == "Sent after the server's backup")
        #expect(try await company.open("oxf").syncStatus().lastServerRestore != nil)
    }

    @Test func aShopsAcknowledgedEditIsNotUndoneByARestoredServersOlderCopy() async throws {
        // Given a server backed up, then a customer renamed at the shop, sent and acknowledged
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let folder = company.directory.appendingPathComponent("server-backup").path
        _ = try ServerBackup.create(database: company.database, folder: folder)
        let shop = try company.open("oxf")
        let code = try #require(try await shop.list(Customer.self, limit: 1).items.first?.code)
        var customer = try shop.customer(code: code)
        customer.companyName = "Renamed after the server's backup"
        _ = try await shop.update(customer)
        try await company.sync("oxf")
        // When the server is restored from the backup, which has the old name, and everyone syncs
        _ = try ServerBackup.restore(folder: folder, over: company.database)
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then the shop's acknowledged name stands at the shop and at head office
        #expect(try company.open("oxf").customer(code: code).companyName == "Renamed after the server's backup")
        #expect(try company.open("hq").customer(code: code).companyName == "Renamed after the server's backup")
    }

    @Test func aShopRevertedToAnOlderCopyOfItsFileDoesNotLoseItsNextChange() async throws {
        // Given a shop's file copied aside, then a customer sent and acknowledged
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let snapshot = company.directory.appendingPathComponent("oxf-copy.sqlite").path
        try Self.copy(from: company.store("oxf"), to: snapshot)
        _ = try await company.open("oxf").create(Customer(code: "FIRST", companyName: "Sent before the revert"))
        try await company.sync("oxf")
        // When the file is put back as it was (so its change log repeats the same positions), and the shop makes
        // another change and syncs, then head office syncs
        try Self.copy(from: snapshot, to: company.store("oxf"))
        _ = try await company.open("oxf").create(Customer(code: "AGAIN", companyName: "Sent after the revert"))
        let report = try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office has both: the second change was not answered with the first one's answer
        #expect(report.pending == 0)
        let hq = try company.open("hq")
        #expect(try hq.customer(code: "FIRST").companyName == "Sent before the revert")
        #expect(try hq.customer(code: "AGAIN").companyName == "Sent after the revert")
        // and the reverted shop got back the change its copy had lost
        #expect(try company.open("oxf").customer(code: "FIRST").companyName == "Sent before the revert")
    }

    /// A store's whole content, through SQLite's backup: as a file copy would be, write-ahead log included.
    static func copy(from source: String, to destination: String) throws {
        let from = try DatabaseQueue(path: source)
        let to = try DatabasePool(path: destination)
        try from.backup(to: to)
        try to.close()
        try from.close()
    }
}
