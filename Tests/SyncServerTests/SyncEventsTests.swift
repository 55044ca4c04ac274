import Foundation
import OpenAPIRuntime
import SyncAPI
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// Subscriptions, and their notices over server-sent events.
@Suite("Sync events")
struct SyncEventsTests {
    @Test(arguments: SyncEngine.all)
    func aQuerySubscriptionFiresOnlyForItsRecords(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop subscribed to new products in the catalogue, listening
            let (hq, shop) = try await server.company()
            try await shop.subscribe(.init(subscriptionID: "products", subscriptionType: .query, zoneID: ZoneID("catalog"), recordType: "Product"))
            let events = try await EventListener.open(shop)
            defer { events.close() }
            // When head office adds a supplier and a product
            _ = try await hq.modify([(.create, record("s1", type: "Supplier")), (.create, record("p1"))])
            // Then the shop is told of the product only, as created
            let notice = try await events.nextNotice()
            #expect(notice.zoneID == ZoneID("catalog"))
            #expect(notice.subscriptions.map(\.subscriptionID) == ["products"])
            #expect(notice.subscriptions.first?.recordNames == ["p1"])
            #expect(notice.subscriptions.first?.reasons == [.create])
        }
    }

    @Test(arguments: SyncEngine.all)
    func aZoneSubscriptionFiresOnlyOnTheChangesItNames(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a subscription to updates and deletions in the catalogue, and a product created before listening
            let (hq, shop) = try await server.company()
            try await shop.subscribe(.init(subscriptionID: "edits", subscriptionType: .zone, zoneID: ZoneID("catalog"), firesOn: [.update, .delete]))
            let created = try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))]).get()
            let tag = created.records[0].record?.recordChangeTag
            let events = try await EventListener.open(shop)
            defer { events.close() }
            // When a product is created, then p1 is renamed, then (once that is notified) deleted
            _ = try await hq.modify([(.create, record("p2"))])
            _ = try await hq.modify([(.update, record("p1", tag: tag, ["name": .string("Chai tea")]))])
            let first = try await events.nextNotice()
            _ = try await hq.modify([(.forceDelete, record("p1"))])
            let second = try await events.nextNotice()
            // Then the creation fires nothing, and the update and the deletion fire in turn
            #expect(first.subscriptions.first?.reasons == [.update])
            #expect(first.subscriptions.first?.recordNames == ["p1"])
            #expect(second.subscriptions.first?.reasons == [.delete])
        }
    }

    @Test(arguments: SyncEngine.all)
    func aStreamResumesFromTheLastEventID(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop that received a notice, then disconnected
            let (hq, shop) = try await server.company()
            try await shop.subscribe(.init(subscriptionID: "catalog", subscriptionType: .zone, zoneID: ZoneID("catalog")))
            let first = try await EventListener.open(shop)
            _ = try await hq.modify([(.create, record("p1"))])
            _ = try await first.nextNotice()
            let resumeFrom = try #require(await first.lastID)
            first.close()
            // When head office writes while it is away, and it reconnects with Last-Event-ID
            _ = try await hq.modify([(.create, record("p2"))])
            let again = try await EventListener.open(shop, lastEventID: resumeFrom)
            defer { again.close() }
            // Then it is told of what it missed, and only that
            let notice = try await again.nextNotice()
            #expect(notice.subscriptions.first?.recordNames == ["p2"])
        }
    }

    @Test(arguments: SyncEngine.all)
    func anIdleStreamIsKeptAliveWithPings(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, ping: 1) { server in
            // Given a shop listening, with nothing happening
            let (_, shop) = try await server.company()
            let events = try await EventListener.open(shop)
            defer { events.close() }
            // When two seconds pass
            try await Task.sleep(for: .milliseconds(2500))
            // Then pings have arrived
            #expect(await events.pings >= 1)
        }
    }

    @Test(arguments: SyncEngine.all)
    func aRevokedShopsStreamEnds(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, ping: 1) { server in
            // Given a shop listening
            let (_, shop) = try await server.company()
            let events = try await EventListener.open(shop)
            defer { events.close() }
            // When the administrator revokes it
            try await server.service.revoke(container: "acme", siteCode: "OXF")
            // Then its stream ends by the next ping (within a second or two; the bound allows for a loaded machine)
            #expect(try await events.ends(within: .seconds(10)))
        }
    }

    @Test(arguments: SyncEngine.all)
    func subscriptionsAreSavedListedAndDeleted(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop with two subscriptions
            let (_, shop) = try await server.company()
            try await shop.subscribe(.init(subscriptionID: "a", subscriptionType: .database))
            try await shop.subscribe(.init(subscriptionID: "b", subscriptionType: .zone, zoneID: ZoneID("site-OXF")))
            // When one is deleted
            let path = Operations.ModifySubscriptions.Input.Path(container: "acme", database: .shared)
            let deleted = try await shop.modifySubscriptions(
                path: path,
                body: .json(.init(operations: [.init(operationType: .delete, subscription: .init(subscriptionID: "a", subscriptionType: .database))]))
            ).ok.body.json
            // Then the list holds the other
            #expect(deleted.subscriptions.first?.error == nil)
            let listed = try await shop.listSubscriptions(path: .init(container: "acme", database: .shared), body: .json(.init())).ok.body.json
                .subscriptions
            #expect(listed.map(\.subscriptionID) == ["b"])
        }
    }

    @Test(arguments: SyncEngine.all)
    func aListAskedWithNoBodyAtAllAnswers(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's credential
            let credential = try await server.enrolCredential("OXF", role: .shop)
            // When it lists its subscriptions with a bare POST, as `curl -X POST` sends it
            let (status, _, error) = try await server.raw(
                "/sync/v1/acme/shared/subscriptions/list",
                body: Data(),
                credential: credential,
                contentType: nil
            )
            // Then the list answers, as for an empty JSON object
            #expect(status == 200, "\(String(describing: error))")
        }
    }

    @Test(arguments: SyncEngine.all)
    func aBadSubscriptionIsRefusedWithTheReason(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop
            let (_, shop) = try await server.company()
            // When it saves a query subscription without a record type, and one on a zone that does not exist
            let answer = try await shop.modifySubscriptions(
                path: .init(container: "acme", database: .shared),
                body: .json(
                    .init(operations: [
                        .init(operationType: .save, subscription: .init(subscriptionID: "q", subscriptionType: .query, zoneID: ZoneID("catalog"))),
                        .init(operationType: .save, subscription: .init(subscriptionID: "z", subscriptionType: .zone, zoneID: ZoneID("nowhere"))),
                    ])
                )
            ).ok.body.json
            // Then each is refused, saying why, and nothing is saved
            #expect(answer.subscriptions.map(\.error?.serverErrorCode) == [.badRequest, .zoneNotFound])
            let listed = try await shop.listSubscriptions(path: .init(container: "acme", database: .shared), body: .json(.init())).ok.body.json
                .subscriptions
            #expect(listed.isEmpty)
        }
    }

    @Test(arguments: SyncEngine.all)
    func theHundredAndFirstSubscriptionExceedsTheLimit(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop with 100 subscriptions
            let (_, shop) = try await server.company()
            let hundred = (0..<100).map {
                Components.Schemas.SubscriptionOperation(
                    operationType: .save,
                    subscription: .init(subscriptionID: "s\($0)", subscriptionType: .database)
                )
            }
            _ = try await shop.modifySubscriptions(path: .init(container: "acme", database: .shared), body: .json(.init(operations: hundred))).ok
            // When it saves one more
            let answer = try await shop.modifySubscriptions(
                path: .init(container: "acme", database: .shared),
                body: .json(
                    .init(operations: [.init(operationType: .save, subscription: .init(subscriptionID: "extra", subscriptionType: .database))])
                )
            ).ok.body.json
            // Then it is refused with LIMIT_EXCEEDED
            #expect(answer.subscriptions.first?.error?.serverErrorCode == .limitExceeded)
        }
    }

    @Test(arguments: SyncEngine.postgresOnly)
    func aCommitOnOneInstanceReachesAStreamOnAnother(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, ping: 60) { server in
            // Given a second instance on the same PostgreSQL, and a shop listening to it (pings too rare to poll)
            let (hq, _) = try await server.company()
            let credential = try await server.enrolCredential("CAM", role: .shop)
            let other = try ServerProcess.start(["serve", "--database", server.database, "--port", "0", "--ping-seconds", "60"])
            defer { other.stop() }
            let shop = SyncHarness.client(port: other.port, credential: credential)
            try await shop.subscribe(.init(subscriptionID: "catalog", subscriptionType: .zone, zoneID: ZoneID("catalog")))
            let events = try await EventListener.open(shop)
            defer { events.close() }
            // When head office writes through the first instance
            _ = try await hq.modify([(.create, record("p1"))])
            // Then the stream on the second instance is told long before its next ping (60 s) could have polled: the
            // announcement carried it (10 s, not less: under a loaded CI machine two seconds were missed)
            let notice = try await events.nextNotice(within: .seconds(10))
            #expect(notice.subscriptions.first?.recordNames == ["p1"])
        }
    }
}

extension Client {
    /// Saves one subscription, which must be accepted.
    func subscribe(_ subscription: Components.Schemas.Subscription) async throws {
        let answer = try await modifySubscriptions(
            path: .init(container: "acme", database: .shared),
            body: .json(.init(operations: [.init(operationType: .save, subscription: subscription)]))
        ).ok.body.json
        if let error = answer.subscriptions.first?.error { throw error }
    }
}

/// An open event stream, read in the background into a log the test inspects.
final class EventListener: Sendable {
    private let reader: Task<Void, Never>
    private let log: Log

    actor Log {
        var changes: [ServerSentEvent] = []
        var taken = 0
        var pings = 0
        var lastID: String?
        var ended = false

        func end() { ended = true }

        func add(_ event: ServerSentEvent) {
            if let id = event.id { lastID = id }
            if event.event == "ping" { pings += 1 } else if event.event == "change" { changes.append(event) }
        }

        func take() -> ServerSentEvent? {
            guard taken < changes.count else { return nil }
            taken += 1
            return changes[taken - 1]
        }
    }

    private init(reader: Task<Void, Never>, log: Log) {
        self.reader = reader
        self.log = log
    }

    static func open(_ client: Client, lastEventID: String? = nil) async throws -> EventListener {
        let response = try await client.events(path: .init(container: "acme", database: .shared), headers: .init(lastEventID: lastEventID))
        let body = try response.ok.body.textEventStream
        let log = Log()
        let reader = Task {
            do {
                for try await event in body.asDecodedServerSentEvents() { await log.add(event) }
            } catch {}
            await log.end()
        }
        return EventListener(reader: reader, log: log)
    }

    func close() { reader.cancel() }

    var lastID: String? { get async { await log.lastID } }
    var pings: Int { get async { await log.pings } }

    /// Whether the server ended the stream within `limit`.
    func ends(within limit: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if await log.ended { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The next `change` event's notice, waiting for it up to `within`.
    func nextNotice(within limit: Duration = .seconds(10)) async throws -> Components.Schemas.Notice {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let event = await log.take() {
                return try JSONDecoder().decode(Components.Schemas.Notice.self, from: Data((event.data ?? "").utf8))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw SyncError(.internalError, "no change event within \(limit)")
    }
}
