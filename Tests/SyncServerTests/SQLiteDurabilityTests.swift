import Foundation
import GRDB
import Testing

@testable import SyncServer

@Suite("Sync server: durability on SQLite")
struct SQLiteDurabilityTests {
    @Test func everyCommitReachesTheDiskBeforeItIsAcknowledged() async throws {
        // Given the sync server's SQLite storage (GRDB's pool would leave it at NORMAL, where a power cut undoes
        // commits, and so batches already acknowledged to shops that will not send them again)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durability-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SQLiteStorage(path: folder.appendingPathComponent("sync.sqlite").path)
        // When its writer's durability is read
        let level = try await storage.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        // Then it is FULL (2): the write-ahead log is synced at every commit
        #expect(level == 2)
    }
}
