import Foundation
import GRDB
import NorthwindLoading
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindStore
@testable import NorthwindTestSupport

/// Report downloads read for as long as their clients take: they must never keep the pages from the store.
@Suite("Long reads")
struct LongReadTests {
    @Test func downloadsWhoseClientsStopReadingLeaveThePagesTheirReaders() async throws {
        // Given more downloads than the pool has readers, each stopped by a client that reads nothing after the first row
        let temporary = try TemporaryStore(seed: .init(scale: 1))
        let downloads = StalledDownloads(temporary.backoffice, count: Store.longReadLimit + 1)
        defer { downloads.finish() }
        try await downloads.waitUntilStarted(Store.longReadLimit)
        // When a manager opens a report page
        let page = try await withDeadline(.seconds(10), orElse: downloads.finish) {
            try await temporary.backoffice.reports.run("ten-most-expensive-products")
        }
        // Then it answers while the downloads still wait on their clients
        #expect(page?.rows.count == 10, "the report page waited on the stalled downloads")
        downloads.finish()
        try await downloads.waitUntilEnded()
    }

    @Test func aLongReadThatFailsGivesBackItsTurn() async throws {
        // Given as many long reads as may run at once, each failing inside its transaction
        let temporary = try TemporaryStore()
        let store = temporary.store
        for _ in 0..<Store.longReadLimit {
            #expect(throws: LongReadTimeout.self) { try store.longRead { _ in throw LongReadTimeout(what: "nothing") } }
        }
        // When one more long read runs, on a thread of its own as a download's does
        let answer = AnswerBox()
        Thread.detachNewThread {
            if let one = try? store.longRead({ db in try Int.fetchOne(db, sql: "SELECT 1") }) { answer.value.store(one, ordering: .releasing) }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while answer.value.load(ordering: .acquiring) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        // Then it runs: every failed one gave its turn back
        #expect(answer.value.load(ordering: .acquiring) == 1, "a failed long read kept its turn")
    }

    @Test func aDownloadBeyondTheLimitWaitsItsTurnThenCompletes() async throws {
        // Given as many stalled downloads as may run at once, and one more, on a store whose long reads wait long
        // enough for a loaded test machine (the refusal after the wait has its own test)
        let temporary = try TemporaryStore(seed: .init(scale: 1))
        let backoffice = try Backoffice.open(
            StoreConfiguration(path: temporary.path, orphanGracePeriod: 0, longReadWait: 600),
            seedIfCreated: false
        )
        let downloads = StalledDownloads(backoffice, count: Store.longReadLimit + 1)
        defer { downloads.finish() }
        try await downloads.waitUntilStarted(Store.longReadLimit)
        try await Task.sleep(for: .milliseconds(300))
        let startedWhileFull = downloads.started
        // When their clients read on
        downloads.finish()
        // Then the one more started only once another had ended, and every download completed
        #expect(startedWhileFull == Store.longReadLimit)
        try await downloads.waitUntilEnded()
        #expect(downloads.started == Store.longReadLimit + 1)
    }
}

extension LongReadTests {
    @Test func aDownloadThatFindsNoTurnInTimeIsRefusedAsBusy() async throws {
        // Given a store whose long reads wait half a second for a turn, and as many stalled downloads as may run
        let temporary = try TemporaryStore(seed: .init(scale: 1))
        let backoffice = try Backoffice.open(
            StoreConfiguration(path: temporary.path, orphanGracePeriod: 0, longReadWait: 0.5),
            seedIfCreated: false
        )
        let downloads = StalledDownloads(backoffice, count: Store.longReadLimit)
        defer { downloads.finish() }
        try await downloads.waitUntilStarted(Store.longReadLimit)
        // When one more download starts
        let clock = ContinuousClock()
        let started = clock.now
        let error = await northwindError {
            try backoffice.reports.stream("current-product-list") { _ in
            } row: { _ in
            }
        }
        // Then it is refused as busy, saying why and what to do, instead of waiting for the stalled clients
        guard case let .storeUnavailable(message) = error else {
            Issue.record("expected the store to be busy, got \(String(describing: error))")
            return
        }
        #expect(message.contains("\(Store.longReadLimit) report downloads are already running"))
        #expect(message.contains("Try again"))
        #expect(clock.now - started < .seconds(5))
        downloads.finish()
        try await downloads.waitUntilEnded()
    }
}

/// Report downloads on threads of their own, as the web app runs them, whose clients stop after the first row until
/// `finish`.
private final class StalledDownloads: Sendable {
    private let startedCount = Atomic<Int>(0)
    private let endedCount = Atomic<Int>(0)
    private let clients = DispatchSemaphore(value: 0)
    private let finished = Atomic<Bool>(false)
    let count: Int

    var started: Int { startedCount.load(ordering: .acquiring) }

    init(_ backoffice: Backoffice, count: Int) {
        self.count = count
        for _ in 0..<count {
            Thread.detachNewThread { [self] in
                var first = true
                try? backoffice.reports.stream("current-product-list") { _ in
                } row: { _ in
                    guard first else { return }
                    first = false
                    startedCount.add(1, ordering: .releasing)
                    clients.wait()
                }
                endedCount.add(1, ordering: .releasing)
            }
        }
    }

    func waitUntilStarted(_ number: Int) async throws {
        try await poll("\(number) downloads to start") { self.started >= number }
    }

    func waitUntilEnded() async throws {
        try await poll("every download to end") { self.endedCount.load(ordering: .acquiring) == self.count }
    }

    /// Lets every client read on; once only.
    func finish() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for _ in 0..<count { clients.signal() }
    }

    private func poll(_ what: String, _ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done() {
            guard ContinuousClock.now < deadline else { throw LongReadTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// What a long read on another thread answered (0 until it does).
private final class AnswerBox: Sendable {
    let value = Atomic<Int>(0)
}

private struct LongReadTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "waited 10 s for \(what)" }
}

/// `body`'s answer, or nil once `limit` has passed; then `orElse` runs, to free whatever `body` waits for.
private func withDeadline<T: Sendable>(
    _ limit: Duration,
    orElse: @escaping @Sendable () -> Void,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            orElse()
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
