import Foundation
import Hummingbird
import HummingbirdTesting
import NorthwindStore
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

@Suite("Sync status on every page")
struct SyncBadgeTests {
    @Test func aStoreThatHasNotJoinedShowsNoSyncStatus() async throws {
        // Given a store that never joined a sync server
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a signed-in employee opens a page
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let page = String(buffer: try await client.execute(uri: "/products", method: .get, headers: session.headers).body)
            // Then the header says nothing of sync
            #expect(!page.contains("class=\"sync "))
        }
    }

    @Test func aJoinedStoreShowsPendingChangesThenTheError() async throws {
        // Given a store that joined a company (head office, with its data still to send)
        let fixture = try await WebFixture.make()
        let b = fixture.store.backoffice
        try await b.syncEngine.join(
            SyncMembership(server: "http://127.0.0.1:9", container: "acme", siteCode: "HQ", role: "hq", credential: "nws_x"),
            containerHasData: false
        )
        let pending = try await b.sync.pendingChanges()
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When a page opens before any sync
            let before = String(buffer: try await client.execute(uri: "/orders", method: .get, headers: session.headers).body)
            // Then its header counts the changes waiting to be sent
            #expect(before.contains("class=\"sync sync-pending\" role=\"status\">\(pending) pending<"))
            // And once a sync failed to reach the server, every page says offline since when
            try await b.syncEngine.recordOutcome(error: "Cannot reach the sync server", offline: true)
            let after = String(buffer: try await client.execute(uri: "/customers", method: .get, headers: session.headers).body)
            #expect(after.contains("class=\"sync sync-offline\""))
            #expect(after.contains("Offline since "))
        }
    }
}
