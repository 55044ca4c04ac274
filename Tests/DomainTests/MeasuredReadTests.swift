import Foundation
import GRDB
import NorthwindStore
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// `Backoffice.measuredRead` runs a read on the caller's thread only while that shape of read has been measured cheap.
/// The connection's description says where a read ran: the pool's readers are "northwind.reader.N", the hot-path
/// connections "northwind.quick".
@Suite("Measured reads")
struct MeasuredReadTests {
    @Test func aShapeNeverMeasuredReadsOnAReaderThread() async throws {
        // Given a store that has served no reads
        let store = try TemporaryStore()

        // When a shape of read runs for the first time
        let connection = try await store.backoffice.measuredRead("first") { db in db.description }

        // Then it ran on one of the pool's reader threads
        #expect(connection.hasPrefix("northwind.reader"))
    }

    @Test func aShapeMeasuredCheapReadsOnTheCallersThread() async throws {
        // Given a shape whose last read took microseconds
        let store = try TemporaryStore()
        _ = try await store.backoffice.measuredRead("cheap") { _ in 0 }

        // When it runs again
        let connection = try await store.backoffice.measuredRead("cheap") { db in db.description }

        // Then it ran on a hot-path connection, without the hop
        #expect(connection == "northwind.quick")
    }

    @Test func aShapeThatTookLongerThanTheBudgetGoesBackToAReaderThread() async throws {
        // Given a shape measured cheap, whose next read takes longer than the budget
        let store = try TemporaryStore()
        _ = try await store.backoffice.measuredRead("grows") { _ in 0 }
        let slow = try await store.backoffice.measuredRead("grows") { db in
            Thread.sleep(forTimeInterval: 0.002)
            return db.description
        }
        #expect(slow == "northwind.quick")

        // When it runs again
        let connection = try await store.backoffice.measuredRead("grows") { db in db.description }

        // Then it ran on a reader thread
        #expect(connection.hasPrefix("northwind.reader"))
    }

    @Test func aCheapReadThatStartsWhileAnotherRunsGoesToAReaderThread() async throws {
        // Given a shape measured cheap, and another read running
        let store = try TemporaryStore()
        let b = store.backoffice
        _ = try await b.measuredRead("cheap") { _ in 0 }
        let gate = Gate()
        let other = Task { try await b.measuredRead("other") { _ in gate.hold() } }
        while !gate.entered.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }

        // When the cheap shape runs meanwhile
        let connection = try await b.measuredRead("cheap") { db in db.description }
        gate.open.store(true, ordering: .releasing)
        try await other.value

        // Then it hopped to a reader thread, as reads do under load
        #expect(connection.hasPrefix("northwind.reader"))
    }

    @Test func aReadOnTheCallersThreadSeesOneSnapshot() async throws {
        // Given a shape measured cheap
        let store = try TemporaryStore()
        _ = try await store.backoffice.measuredRead("snapshot") { _ in 0 }

        // When a write commits between the read's two statements
        let (before, after) = try await store.backoffice.measuredRead("snapshot") { db in
            let before = try Int.fetchOne(db, sql: "SELECT count(*) FROM categories") ?? -1
            try store.store.pool.write { db in
                try db.execute(sql: "INSERT INTO categories (recordID, name) VALUES ('measured-read', 'Measured')")
            }
            return (before, try Int.fetchOne(db, sql: "SELECT count(*) FROM categories") ?? -1)
        }

        // Then both statements saw the store as it was when the read began
        #expect(after == before)
        #expect(try store.count("SELECT count(*) FROM categories") == before + 1)
    }
}

/// Holds a read on its thread until the test opens it.
private final class Gate: Sendable {
    let entered = Atomic<Bool>(false)
    let open = Atomic<Bool>(false)

    func hold() {
        entered.store(true, ordering: .releasing)
        while !open.load(ordering: .acquiring) { usleep(100) }
    }
}
