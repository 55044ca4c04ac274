import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// Two installations that link the same employee to the same territory offline make two records for one pair,
/// which the store allows once: the link made first stays everywhere, the other goes, and the inbox says so.
@Suite("Shop sync: the same link made at two sites")
struct DuplicateLinkTests {
    /// A joined store whose first employee has just been linked here, offline, to a territory it had no link to.
    struct Linked {
        let store: TemporaryStore
        let employee: String
        let territory: String
        let local: String

        static func make() async throws -> Linked {
            let store = try TemporaryStore(seed: DemoData.Options(scale: 1))
            try await store.backoffice.syncEngine.join(ShopSyncTests.membership("OXF", role: "hq"), containerHasData: false)
            let (employee, territory, local) = try await store.store.pool.write { db in
                let employee = try #require(try Row.fetchOne(db, sql: "SELECT id, recordID FROM employees ORDER BY id LIMIT 1"))
                let territory = try #require(
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT id, recordID FROM territories
                            WHERE id NOT IN (SELECT territoryID FROM employee_territories WHERE employeeID = ?) ORDER BY id LIMIT 1
                            """,
                        arguments: [employee["id"]]
                    )
                )
                try db.execute(
                    sql: "INSERT INTO employee_territories (employeeID, territoryID) VALUES (?, ?)",
                    arguments: [employee["id"], territory["id"]]
                )
                let local = try #require(
                    try String.fetchOne(db, sql: "SELECT recordID FROM employee_territories WHERE id = ?", arguments: [db.lastInsertedRowID])
                )
                return (employee["recordID"] as String, territory["recordID"] as String, local)
            }
            return Linked(store: store, employee: employee, territory: territory, local: local)
        }

        /// The same link, made at site "LON" at `milliseconds` since 1970.
        func remote(at milliseconds: Int64) -> SyncRecord {
            let clock = FieldClock(milliseconds: milliseconds, site: "LON")
            return SyncRecord(
                recordName: newRecordID(),
                recordType: "employee_territories",
                zoneID: ZoneID("people"),
                fields: [
                    "employeeID": .reference(RecordReference(recordName: employee)),
                    "territoryID": .reference(RecordReference(recordName: territory, zoneName: "catalog")),
                    FieldClock.fieldName: FieldClock.field(["employeeID": clock, "territoryID": clock]),
                ]
            )
        }

        /// The record ids of this pair's links.
        func links() async throws -> [String] {
            try await store.store.pool.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT l.recordID FROM employee_territories l
                        JOIN employees e ON e.id = l.employeeID JOIN territories t ON t.id = l.territoryID
                        WHERE e.recordID = ? AND t.recordID = ?
                        """,
                    arguments: [employee, territory]
                )
            }
        }
    }

    @Test func anEarlierLinkFromAnotherSiteReplacesTheOneMadeHere() async throws {
        // Given a link made here just now
        let linked = try await Linked.make()
        // When the same link, made an hour earlier at London, arrives
        let earlier = linked.remote(at: Timestamp.now.milliseconds - 3_600_000)
        let applied = try await linked.store.backoffice.syncEngine.applyDownloaded(zone: "people", records: [earlier], token: "p1")
        // Then London's link is the one kept, and the inbox names the one removed here
        #expect(try await linked.links() == [earlier.recordName])
        #expect(applied.discarded == 1)
        let conflict = try #require(try await linked.store.backoffice.sync.conflicts().first)
        #expect(conflict.recordID == linked.local)
    }

    @Test func aLaterLinkFromAnotherSiteIsDroppedAndTheOneMadeHereStays() async throws {
        // Given a link made here
        let linked = try await Linked.make()
        // When the same link, made an hour later at London, arrives
        let later = linked.remote(at: Timestamp.now.milliseconds + 3_600_000)
        _ = try await linked.store.backoffice.syncEngine.applyDownloaded(zone: "people", records: [later], token: "p1")
        // Then the link made here stays alone, and the inbox names London's
        #expect(try await linked.links() == [linked.local])
        let conflict = try #require(try await linked.store.backoffice.sync.conflicts().first)
        #expect(conflict.recordID == later.recordName)
    }
}
