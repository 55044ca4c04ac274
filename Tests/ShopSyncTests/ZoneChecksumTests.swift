import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

/// A store keeps each zone's checksum by triggers instead of hashing every record at each catch-up; what it keeps must
/// always be what hashing every record would give, and a kept sum that is wrong must never make it fetch a zone again.
@Suite("Zone checksums kept by the store", .serialized)
struct ZoneChecksumTests {
    /// The zone's sum from `sync_records`, hashed here as the server hashes, and the one the store keeps (nil: unknown).
    static func sums(_ shop: Backoffice, zone: String) async throws -> (counted: UInt64, kept: UInt64?) {
        try await shop.store.pool.read { db in
            var counted: UInt64 = 0
            for row in try Row.fetchAll(db, sql: "SELECT recordID, changeTag FROM sync_records WHERE zoneName = ?", arguments: [zone]) {
                counted ^= ZoneChecksum.of(recordName: row["recordID"], changeTag: row["changeTag"])
            }
            let kept = try Int64.fetchOne(db, sql: "SELECT sum FROM sync_zone_sums WHERE zoneName = ?", arguments: [zone])
            return (counted, kept.map { UInt64(bitPattern: $0) })
        }
    }

    static func serverChecksum(_ company: Company, zone: String) async throws -> UInt64? {
        let service = try await SyncService.open(database: company.database)
        let zones = try await service.storage.zones(container: "acme", scope: .shared)
        await service.close()
        return zones.first { $0.zoneID.zoneName == zone }?.checksum
    }

    @Test func theKeptChecksumFollowsRecordsAddedChangedAndDeleted() async throws {
        // Given a shop in sync with head office
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        // When head office adds two customers, renames one and deletes the other, and the shop syncs after each step
        let kept = try await hq.records.create(Customer(code: "KEPT1", companyName: "Kept Provisions"))
        let gone = try await hq.records.create(Customer(code: "GONE1", companyName: "Gone Provisions"))
        try await company.sync("hq")
        try await company.sync("oxf")
        var renamed = kept
        renamed.companyName = "Kept and Renamed Provisions"
        _ = try await hq.records.update(renamed)
        try await hq.records.delete(Customer.self, id: try #require(gone.id))
        try await company.sync("hq")
        let report = try await company.sync("oxf")
        // Then the shop's kept sum is its records' count, which is the server's checksum
        let sums = try await Self.sums(try company.open("oxf"), zone: "customers")
        #expect(sums.kept == sums.counted)
        #expect(try await Self.serverChecksum(company, zone: "customers") == sums.counted)
        #expect(report.zonesDiffering.isEmpty)
    }

    @Test func aStoreWhoseRecordsHaveNoChecksumYetCountsThemAtItsNextCatchUp() async throws {
        // Given a shop whose records' checksums are unknown, as after the migration that added them
        let company = try Company()
        try await company.start(shops: ["oxf"])
        try await company.open("oxf").store.pool.write { db in try db.execute(sql: "UPDATE sync_records SET checksum = NULL") }
        #expect(try await Self.sums(try company.open("oxf"), zone: "customers").kept == nil)
        // When head office adds a customer and the shop syncs
        _ = try await company.open("hq").records.create(Customer(code: "NEW01", companyName: "New Provisions"))
        try await company.sync("hq")
        let report = try await company.sync("oxf")
        // Then the zone's sum is kept again, agrees with the records and the server, and no record is left unknown
        let sums = try await Self.sums(try company.open("oxf"), zone: "customers")
        #expect(sums.kept == sums.counted)
        #expect(try await Self.serverChecksum(company, zone: "customers") == sums.counted)
        #expect(report.zonesDiffering.isEmpty)
        let unknown = try await company.open("oxf").store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_records WHERE zoneName = 'customers' AND checksum IS NULL")
        }
        #expect(unknown == 0)
    }

    @Test func aKeptChecksumThatIsWrongIsCountedAgainWithoutFetchingTheZoneAgain() async throws {
        // Given a shop in sync whose kept sum of the customers zone is wrong (a bug, or a hand edit of the file)
        let company = try Company()
        try await company.start(shops: ["oxf"])
        try await company.open("oxf").store.pool.write { db in
            try db.execute(sql: "UPDATE sync_zone_sums SET sum = sum + 1 WHERE zoneName = 'customers'")
        }
        // When head office adds a customer and the shop syncs
        _ = try await company.open("hq").records.create(Customer(code: "NEW02", companyName: "Newer Provisions"))
        try await company.sync("hq")
        let report = try await company.sync("oxf")
        // Then the shop downloaded only that customer, not the zone again, and its kept sum is right once more
        #expect(report.downloaded == 1, "\(report)")
        #expect(report.zonesDiffering.isEmpty)
        let sums = try await Self.sums(try company.open("oxf"), zone: "customers")
        #expect(sums.kept == sums.counted)
        #expect(try await Self.serverChecksum(company, zone: "customers") == sums.counted)
    }
}
