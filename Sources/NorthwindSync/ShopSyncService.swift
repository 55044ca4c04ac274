import Foundation
import Logging
@_spi(SyncEngine) import Northwind
import NorthwindStore
import ServiceLifecycle
import Synchronization

/// Keeps a joined store in sync while `northwind serve` runs: after every local commit (at once, or gathered while a
/// burst lasts), on every notice
/// the server pushes, and every `interval` as a safety net. A failed sync is retried with a backoff that doubles up
/// to a minute, or waits what the server asked (`retryAfter`); so is a sync after one the server refused changes in
/// (they are in the inbox, logged as a warning). Stops with the server, gracefully.
public struct ShopSyncService: Service {
    let backoffice: Backoffice
    /// Read every second while waiting, so that a change to `sync.interval` applies within a second.
    let interval: @Sendable () -> Duration
    let debounce: Duration
    let server: String?
    let logger: Logger

    /// `server`, when given, replaces the address the store joined with (`sync.server`).
    public init(
        backoffice: Backoffice,
        interval: @escaping @Sendable () -> Duration = { .seconds(60) },
        debounce: Duration = .milliseconds(300),
        server: String? = nil,
        logger: Logger
    ) {
        self.backoffice = backoffice
        self.interval = interval
        self.debounce = debounce
        self.server = server
        self.logger = logger
    }

    public func run() async throws {
        guard let membership = try await backoffice.sync.membership(), URL(string: server ?? membership.server) != nil else { return }
        let engine = ShopSyncEngine(backoffice: backoffice, server: server)
        // Made again at each reconnection: the credential may have been rotated since.
        let (backoffice, server) = (backoffice, server)
        let client: @Sendable () async -> SyncClient? = {
            guard let current = try? await backoffice.sync.membership(), let url = URL(string: server ?? current.server) else { return nil }
            return try? SyncClient(server: url, container: current.container, credential: current.credential, authority: current.authority)
        }
        let feed = try ChangeFeed(store: backoffice.store)
        defer { feed.close() }
        // One pending wake-up is enough: the work it stands for accumulates in `pending`, and a sync covers
        // everything committed before it starts.
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pending = PendingWork()
        let (logger, interval, debounce) = (logger, interval, debounce)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in feed.subscribe() {
                        pending.add(.localCommit)
                        wake.yield()
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        pending.add(.everything)
                        wake.yield()
                        // A second at a time, so that a shorter `sync.interval` applies within a second.
                        var waited = Duration.zero
                        while waited < interval(), !Task.isCancelled {
                            try? await Task.sleep(for: .seconds(1))
                            waited += .seconds(1)
                        }
                    }
                }
                group.addTask { await Self.listen(client, siteCode: membership.siteCode, pending: pending, wake: wake, logger: logger) }
                group.addTask {
                    await Self.syncOnEveryWake(
                        engine,
                        wakes: wakes,
                        wake: wake,
                        pending: pending,
                        debounce: debounce,
                        backoffice: backoffice,
                        logger: logger
                    )
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Syncs at each wake-up; after a failure or a refusal it waits, longer each time up to a minute.
    static func syncOnEveryWake(
        _ engine: ShopSyncEngine,
        wakes: AsyncStream<Void>,
        wake: AsyncStream<Void>.Continuation,
        pending: PendingWork,
        debounce: Duration,
        backoffice: Backoffice,
        logger: Logger
    ) async {
        var backoff = Duration.seconds(1)
        for await _ in wakes {
            // Local commits come in bursts (a form, an import); the server's notice is already one. A commit after a
            // quiet spell goes at once; while commits keep coming, they are gathered until a short gap without one,
            // for at most `debounce`.
            if pending.onlyLocalCommits, pending.inBurst {
                let started = ContinuousClock.now
                var seen = pending.commits
                while ContinuousClock.now - started < debounce, !Task.isCancelled {
                    try? await Task.sleep(for: Self.burstGap)
                    let now = pending.commits
                    if now == seen { break }
                    seen = now
                }
            }
            if Task.isCancelled { return }
            let work = pending.take()
            // What a sync brings is committed here too, and wakes this loop as a local commit: with nothing to send
            // and nothing to fetch, the server is not asked (with twenty shops, each order cost every other shop
            // such a round).
            if work.localCommits, !work.pullEverything, work.zones.isEmpty, await Self.nothingToSend(backoffice) { continue }
            do throws(ShopSyncError) {
                // A local commit only pushes; what others saved comes with the server's notices, which
                // name their zone, and with the periodic sync.
                let report = try await engine.syncNow(pulling: work.pullEverything ? nil : work.zones)
                if report.uploaded + report.downloaded > 0 {
                    logger.info("sync: sent \(report.uploaded), received \(report.downloaded), merged \(report.merged)")
                }
                if report.sentAgainAfterServerRestore > 0 {
                    logger.warning(
                        "sync: the sync server's data was restored from a backup; \(report.sentAgainAfterServerRestore) records this store had sent go up again"
                    )
                }
                if report.refused > 0 {
                    // Each refusal is in the inbox once and is not sent again; the wait keeps whatever
                    // follows from it (a user retrying, a bug of ours) from becoming a busy loop.
                    let last = (try? await backoffice.sync.status().lastRefusal) ?? nil
                    logger.warning(
                        "sync: the server refused \(report.refused) changes; they are in the conflict inbox (northwind sync conflicts). Last: \(last ?? "")"
                    )
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(60))
                } else {
                    backoff = .seconds(1)
                }
            } catch {
                // Shutting down interrupts a sync in flight: that is no failure to report.
                if Task.isCancelled { return }
                var wait = backoff
                if case .busy(let seconds) = error.kind { wait = max(wait, .seconds(seconds)) }
                logger.warning("sync failed, trying again in \(wait): \(error.message)")
                backoff = min(backoff * 2, .seconds(60))
                try? await Task.sleep(for: wait)
                // The retry pulls everything: a notice may have come while the server was out of reach.
                pending.add(.everything)
                wake.yield()
            }
        }
    }

    /// Whether the outbox and users' settings hold nothing to send; a store that cannot answer is synced anyway.
    static func nothingToSend(_ backoffice: Backoffice) async -> Bool {
        guard let changes = try? await backoffice.sync.pendingChanges(),
            let logins = try? await backoffice.userSettingsSync.loginsWithPending()
        else { return false }
        // A login the protocol cannot name stays pending for good (`syncUserSettings` leaves it here).
        return changes == 0 && !logins.contains { ShopSyncEngine.canSync(login: $0) }
    }

    /// Commits closer together than this belong to one burst, which is sent when it pauses this long.
    static let burstGap = Duration.milliseconds(15)

    /// What the next sync must do, gathered from every wake-up since the last one.
    final class PendingWork: Sendable {
        enum Reason: Sendable {
            case localCommit
            /// The server said this zone changed.
            case zone(String)
            /// The periodic sync, or a retry.
            case everything
        }

        struct Work: Sendable {
            var pullEverything = false
            var zones: Set<String> = []
            var localCommits = false
        }

        private let work = Mutex(Work())
        /// Local commits so far, and whether the latest came within `burstGap` of the one before.
        private let commitLog = Mutex((count: 0, last: ContinuousClock.Instant?.none, inBurst: false))

        var commits: Int { commitLog.withLock { $0.count } }
        var inBurst: Bool { commitLog.withLock { $0.inBurst } }

        func add(_ reason: Reason) {
            if case .localCommit = reason {
                let now = ContinuousClock.now
                commitLog.withLock { log in
                    log.inBurst = log.last.map { now - $0 < ShopSyncService.burstGap } ?? false
                    log.count += 1
                    log.last = now
                }
            }
            work.withLock { work in
                switch reason {
                case .localCommit: work.localCommits = true
                case .zone(let name): work.zones.insert(name)
                case .everything: work.pullEverything = true
                }
            }
        }

        /// Nothing but local commits is waiting: the sync can wait for the burst to end.
        var onlyLocalCommits: Bool { work.withLock { !$0.pullEverything && $0.zones.isEmpty } }

        func take() -> Work {
            work.withLock { work in
                defer { work = Work() }
                return work
            }
        }
    }

    /// Follows the server's event stream, reconnecting (from the last notice seen) whenever it drops. A notice is
    /// only a hint to sync; the periodic sync covers a notice lost in between.
    static func listen(
        _ client: @Sendable () async -> SyncClient?,
        siteCode: String,
        pending: PendingWork,
        wake: AsyncStream<Void>.Continuation,
        logger: Logger
    ) async {
        var lastID: String?
        var backoff = Duration.seconds(1)
        while !Task.isCancelled {
            do {
                guard let client = await client() else { throw ShopSyncError(.notJoined, "cannot read this store's membership") }
                try await client.subscribeToEverything(id: "northwind-\(siteCode)")
                let notices = try await client.changeNotices(after: lastID)
                if lastID == nil {
                    // A stream opened without a resume point announces only what changes from now on: what others
                    // saved between the last sync and now would wait for the periodic sync. Pull it now.
                    pending.add(.everything)
                    wake.yield()
                }
                for try await notice in notices {
                    if !notice.id.isEmpty { lastID = notice.id }
                    backoff = .seconds(1)
                    // Only this site writes its own zone: that notice is the echo of what it just sent.
                    if notice.zone == "site-\(siteCode)" { continue }
                    pending.add(notice.zone.map { .zone($0) } ?? .everything)
                    wake.yield()
                }
            } catch {
                logger.debug("sync event stream: \(error)")
            }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(60))
        }
    }
}
