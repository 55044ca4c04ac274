import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Northwind
import NorthwindLoading
import NorthwindStore
import Synchronization
import Testing

@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// A report download that finds every long-read turn taken for longer than the store's wait is refused as busy.
@Suite("Downloads when the store is busy")
struct BusyDownloadTests {
    @Test func aDownloadBeyondTheLimitIsA503SayingWhyAfterTheWait() async throws {
        // Given a store whose downloads wait half a second for a turn, and every turn held by a read that does not end
        let fixture = try await WebFixture.make()
        let backoffice = try Backoffice.open(
            StoreConfiguration(path: fixture.store.path, orphanGracePeriod: 0, longReadWait: 0.5),
            seedIfCreated: false
        )
        let held = HeldReads(backoffice.store, count: Store.longReadLimit)
        defer { held.release() }
        try await held.waitUntilHeld()
        let app = try await WebApp.build(backoffice: backoffice, options: WebOptions(port: 0))
        try await app.test(.router) { client in
            // When a manager downloads a report as CSV through the API
            let answer = try await client.execute(
                uri: "/api/v1/reports/current-product-list?format=csv",
                method: .get,
                headers: bearer(fixture.managerToken)
            )
            // Then it is refused as unavailable, saying what is running and what to do
            #expect(answer.status == .serviceUnavailable)
            let body = String(buffer: answer.body)
            #expect(body.contains("\(Store.longReadLimit) report downloads are already running"), "\(body)")
            #expect(body.contains("Try again"))
        }
        held.release()
    }
}

/// Long reads on threads of their own that hold their turn until `release`.
private final class HeldReads: Sendable {
    private let started = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    private let count: Int
    private let released = Mutex<Bool>(false)

    init(_ store: Store, count: Int) {
        self.count = count
        for _ in 0..<count {
            Thread.detachNewThread { [self] in
                _ = try? store.longRead { _ in
                    started.signal()
                    gate.wait()
                }
            }
        }
    }

    func waitUntilHeld() async throws {
        for _ in 0..<count {
            guard started.wait(timeout: .now() + 10) == .success else { throw HeldReadsTimeout() }
        }
    }

    func release() {
        guard
            !released.withLock({ done in
                defer { done = true }
                return done
            })
        else { return }
        for _ in 0..<count { gate.signal() }
    }
}

private struct HeldReadsTimeout: Error {}
