import Foundation
import Logging
import OpenAPIRuntime
import ServiceLifecycle
import SyncAPI
import SyncProtocol

extension SyncService {
    typealias Subscription = Components.Schemas.Subscription

    func modifySubscriptions(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        operations: [Components.Schemas.SubscriptionOperation]
    ) async throws(SyncError) -> [Components.Schemas.SubscriptionResult] {
        if operations.count > SyncLimits.operationsPerRequest {
            throw SyncError(.limitExceeded, "\(operations.count) subscription operations in one request. " + SyncLimits.summary)
        }
        let ids = operations.map(\.subscription.subscriptionID)
        guard Set(ids).count == ids.count else { throw SyncError(.badRequest, "a subscription appears twice in one request") }
        let zones = Set(
            try await guarded { try await storage.zones(container: container, scope: scope) }.filter { !$0.deleted }.map(\.zoneID.zoneName)
        )
        return try await guarded {
            try await storage.modifySubscriptions(container: container, scope: scope, siteCode: caller.siteCode) { stored in
                let current = try stored.map(Subscription.init(stored:))
                var saved = Dictionary(uniqueKeysWithValues: current.map { ($0.subscriptionID, $0) })
                var results: [Components.Schemas.SubscriptionResult] = []
                for operation in operations {
                    let subscription = operation.subscription
                    let id = subscription.subscriptionID
                    do throws(SyncError) {
                        switch operation.operationType {
                        case .save:
                            try SubscriptionRules.check(subscription)
                            if let zone = subscription.zoneID?.zoneName, !zones.contains(zone) {
                                throw SyncError(.zoneNotFound, "zone \(zone) does not exist in this database; create it before subscribing")
                            }
                            if saved[id] == nil && saved.count >= SubscriptionRules.maximumPerDatabase {
                                throw SyncError(
                                    .limitExceeded,
                                    "an installation has at most \(SubscriptionRules.maximumPerDatabase) subscriptions per database; delete one first"
                                )
                            }
                            saved[id] = subscription
                            results.append(.init(subscriptionID: id, subscription: subscription))
                        case .delete:
                            guard saved.removeValue(forKey: id) != nil else {
                                throw SyncError(.notFound, "there is no subscription \(id) to delete")
                            }
                            results.append(.init(subscriptionID: id))
                        }
                    } catch {
                        results.append(.init(subscriptionID: id, error: error))
                    }
                }
                return (try saved.values.sorted { $0.subscriptionID < $1.subscriptionID }.map { try $0.stored() }, results)
            }
        }
    }

    func listSubscriptions(_ caller: Installation, container: String, scope: DatabaseScope) async throws(SyncError) -> [Subscription] {
        try await guarded {
            try await storage.subscriptions(container: container, scope: scope, siteCode: caller.siteCode).map(Subscription.init(stored:))
        }
    }

    /// Starts announcing other instances' commits to this instance's event streams (PostgreSQL only), and returns
    /// once it hears them (or after 10 s, with a warning to come from the retries): a stream opened on an instance
    /// that had not started listening yet would miss commits until its next ping.
    public func startListening() async {
        let signal = signal
        let (started, listening) = AsyncStream<Void>.makeStream()
        guard storage.listen({ container in await signal.changed(container) }, ready: { listening.yield() }) != nil else { return }
        await withTaskGroup { group in
            group.addTask {
                for await _ in started { return }
            }
            group.addTask { try? await Task.sleep(for: .seconds(10)) }
            await group.next()
            group.cancelAll()
        }
    }

    /// The caller's event stream: a `change` event per zone whose changes fired its subscriptions, resumable from
    /// any event's id, and a `ping` each `ping` interval (which also polls, in case an announcement was lost).
    func events(
        _ caller: Installation,
        container: String,
        scope: DatabaseScope,
        lastEventID: String?,
        ping: Duration
    ) async throws(SyncError) -> AsyncStream<ServerSentEvent> {
        let epoch = try await guarded { try await storage.epoch() }
        let zones = try await guarded { try await storage.zones(container: container, scope: scope) }
        var known = Dictionary(uniqueKeysWithValues: zones.map { ($0.zoneID.zoneName, $0.seq) })
        if let lastEventID {
            // A resume point from before a restore, or not ours at all, notifies every zone with changes.
            let token = TokenCoding.decode(DatabaseToken.self, lastEventID)
            known = token?.epoch == epoch ? token!.zones : [:]
        }
        let (id, wakes) = await signal.add(container: container)
        let feed = EventFeed(service: self, caller: caller, container: container, scope: scope, epoch: epoch, known: known, wakes: wakes)
        let signal = signal
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: ping)
                await signal.tick(id)
            }
        }
        // A revoked site's stream ends within a second, whichever instance or command revoked it; so does one opened
        // with a credential since replaced (rotated, or given anew).
        let installations = storage
        let watcher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let found = try? await installations.installations(container: container).first { $0.siteCode == caller.siteCode }
                guard let current = found else { continue }
                if current.revoked != nil || current.credentialIssued != caller.credentialIssued {
                    ticker.cancel()
                    await signal.remove(id)
                    return
                }
            }
        }
        let end: @Sendable () -> Void = {
            ticker.cancel()
            watcher.cancel()
            Task { await signal.remove(id) }
        }
        return AsyncStream(unfolding: { await feed.next(onShutdown: end) }, onCancel: end)
    }
}

/// One connection's event stream. It pulls: nothing is computed until the client has taken the previous event.
actor EventFeed {
    let service: SyncService
    let caller: Installation
    let container: String
    let scope: DatabaseScope
    let epoch: String
    /// The last change number notified per zone: the resume point each event's id carries.
    var known: [String: Int64]
    var wakes: AsyncStream<ChangeSignal.Wake>.Iterator
    var pending: [ServerSentEvent] = []
    var caughtUp = false

    init(
        service: SyncService,
        caller: Installation,
        container: String,
        scope: DatabaseScope,
        epoch: String,
        known: [String: Int64],
        wakes: AsyncStream<ChangeSignal.Wake>
    ) {
        self.service = service
        self.caller = caller
        self.container = container
        self.scope = scope
        self.epoch = epoch
        self.known = known
        self.wakes = wakes.makeAsyncIterator()
    }

    func next(onShutdown: @escaping @Sendable () -> Void) async -> ServerSentEvent? {
        while pending.isEmpty {
            if !caughtUp {
                // What changed while the client was away, before waiting for anything new.
                caughtUp = true
            } else {
                var iterator = wakes
                let wake = await withGracefulShutdownHandler {
                    await iterator.next()
                } onGracefulShutdown: {
                    onShutdown()
                }
                wakes = iterator
                guard let wake else { return nil }
                if case .tick = wake { pending.append(ServerSentEvent(event: "ping")) }
            }
            guard await check() else { return nil }
        }
        return pending.removeFirst()
    }

    /// Reads the zones and queues an event for each whose changes fire a subscription. False when the caller has
    /// been revoked: the stream ends.
    private func check() async -> Bool {
        let storage = service.storage
        do {
            let installations = try await storage.installations(container: container)
            if installations.first(where: { $0.siteCode == caller.siteCode })?.revoked != nil { return false }
            let zones = try await storage.zones(container: container, scope: scope)
            let subscriptions = try await storage.subscriptions(container: container, scope: scope, siteCode: caller.siteCode)
                .map(Components.Schemas.Subscription.init(stored:))
            for zone in zones where !zone.deleted && zone.seq != known[zone.zoneID.zoneName] ?? 0 {
                let name = zone.zoneID.zoneName
                // A counter below what was notified means the data was replaced: notify from the start.
                let from = min(known[name] ?? 0, zone.seq)
                let watching = subscriptions.filter { $0.subscriptionType == .database || $0.zoneID?.zoneName == name }
                var fired: [Components.Schemas.FiredSubscription] = []
                if !watching.isEmpty {
                    var page: ChangesPage?
                    if from >= zone.purgedThrough {
                        page = try await storage.changes(
                            container: container,
                            scope: scope,
                            zoneName: name,
                            after: from,
                            limit: SyncLimits.recordsPerChangesPage,
                            recordTypes: nil
                        )
                    }
                    let records = try page?.records.map { try $0.decoded() }
                    fired = watching.compactMap { SubscriptionRules.fired($0, by: records, complete: page.map { !$0.moreComing } ?? false) }
                }
                known[name] = zone.seq
                if !fired.isEmpty {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = .sortedKeys
                    let notice = Components.Schemas.Notice(zoneID: zone.zoneID, subscriptions: fired)
                    pending.append(
                        ServerSentEvent(
                            id: DatabaseToken(epoch: epoch, zones: known).encoded,
                            event: "change",
                            data: String(decoding: try encoder.encode(notice), as: UTF8.self)
                        )
                    )
                }
            }
        } catch {
            // The next wake or tick tries again.
            service.logger.warning("an event stream could not read changes: \(String(reflecting: error))")
        }
        return true
    }
}

extension Components.Schemas.Subscription {
    /// A subscription as storage kept it (its JSON, as `stored()` wrote it).
    init(stored: StoredSubscription) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(stored.body.utf8))
    }

    func stored() throws -> StoredSubscription {
        StoredSubscription(id: subscriptionID, body: String(decoding: try JSONEncoder().encode(self), as: UTF8.self))
    }
}
