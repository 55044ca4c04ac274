import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@testable import NorthwindTestSupport

/// A change the sync server refuses goes to the inbox once: it is not sent again, nor restored as its children's
/// parent, so the refuse → discard → restore loop that filled a disk cannot start.
@Suite("Refused changes", .serialized)
struct RefusalLoopTests {
    @Test func aTransferTheServerRefusesGoesToTheInboxOnceAndSyncSaysSo() async throws {
        // Given head office and a shop in sync, and at head office a transfer with a 1.5 MB note and its movement
        // out, written past the gate as an older version could have (the server takes at most 1 MiB a record)
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let here = try await hq.sync.siteCode()
        let shop = try await company.open("oxf").sync.siteCode()
        let queue = try DatabaseQueue(path: company.store("hq"))
        try await queue.write { db in
            let before = try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0
            let product = try Int64.fetchOne(db, sql: "SELECT id FROM products WHERE unitsInStock > 0 LIMIT 1") ?? 0
            try db.execute(
                sql: "INSERT INTO stock_transfers (productID, quantity, fromLocation, toLocation, note) VALUES (?, 1, ?, ?, ?)",
                arguments: [product, here, shop, String(repeating: "x", count: 1_500_000)]
            )
            try db.execute(
                sql: "INSERT INTO stock_movements (productID, delta, reason, note, transferID) VALUES (?, -1, 'transferOut', 'to shop', ?)",
                arguments: [product, db.lastInsertedRowID]
            )
            try db.execute(sql: "UPDATE change_log SET txn = ? WHERE seq > ?", arguments: [before + 1, before])
        }
        try queue.close()
        // When head office syncs five times
        var reports: [SyncReport] = []
        for _ in 0..<5 { reports.append(try await company.sync("hq")) }
        // Then the transfer and its movement each went to the inbox once, with nothing left to send
        let status = try await hq.sync.status()
        #expect(status.openConflicts == 2, "\(reports)")
        #expect(reports.map(\.refused).reduce(0, +) == 2)
        #expect(reports.last?.pending == 0)
        // And `sync status` names the last refusal, and the inbox has the server's reason for the transfer
        #expect(status.lastRefusal?.contains("stock_") == true, "\(status.lastRefusal ?? "none")")
        let reasons = try await hq.sync.conflicts().map(\.reason)
        #expect(reasons.contains { $0.contains("LIMIT_EXCEEDED") }, "\(reasons)")
        #expect(status.lastError == nil)
        // And the inbox pages: one entry a page, the total said
        let page = try await hq.sync.conflictPage(limit: 1)
        #expect(page.items.count == 1 && page.total == 2)
    }

    @Test func theInboxKeepsEveryOpenEntryAndPrunesTheOldestResolvedPastItsCapacity() async throws {
        // Given a store whose inbox holds more resolved entries than it keeps, and one open entry
        let company = try Company()
        try await company.start(shops: [])
        let hq = try company.open("hq")
        let capacity = 10_000
        try await hq.store.pool.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO sync_conflicts (tableName, recordID, field, reason, resolvedAt)
                    SELECT 'products', 'r' || i, 'name', 'test', '2026-01-01T00:00:00.000Z' FROM n
                    """,
                arguments: [capacity + 50]
            )
            try db.execute(sql: "INSERT INTO sync_conflicts (tableName, recordID, field, reason) VALUES ('products', 'open', 'name', 'open one')")
        }
        // When a sync applies anything
        try await company.sync("hq")
        // Then the inbox is back at its capacity, the open entry kept and the oldest resolved ones gone
        let (total, open, oldest) = try await hq.store.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_conflicts") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_conflicts WHERE resolvedAt IS NULL") ?? 0,
                try String.fetchAll(db, sql: "SELECT recordID FROM sync_conflicts WHERE recordID IN ('r1', 'r51', 'r52') ORDER BY recordID")
            )
        }
        #expect(total == capacity)
        #expect(open == 1)
        #expect(oldest == ["r52"])
    }
}
