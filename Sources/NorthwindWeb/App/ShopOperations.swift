import Foundation
import Hummingbird
import Northwind
import NorthwindStore
import ServerOperations

/// The shop server's `/healthz`, `/readyz` and `/metrics`: what it checks before saying it is ready, and the
/// figures it reads from the store at each scrape.
struct ShopOperations {
    let environment: WebEnvironment

    init(_ environment: WebEnvironment) { self.environment = environment }

    func register(on router: Router<WebContext>) {
        ProcessMetrics.bootstrap()
        let environment = environment
        OperationsRoutes.register(
            on: router,
            ready: { await Self.checks(environment) },
            collect: { await Self.collect(environment) }
        )
    }

    /// Ready: the store answers with every migration run, and sync is either not needed or reaches its server.
    static func checks(_ environment: WebEnvironment) async -> [ReadinessCheck] {
        let figures: ServerFigures
        do {
            figures = try await environment.backoffice.reports.serverFigures(backups: try environment.settings.backupFolder())
        } catch {
            return [ReadinessCheck(name: "store", ok: false, detail: "The store does not answer; the server's log says why.")]
        }
        // No path and no error text: /readyz answers whoever asks, the network included.
        return [
            ReadinessCheck(name: "store", ok: true, detail: "The store answers."),
            ReadinessCheck(
                name: "migrations",
                ok: figures.migrated,
                detail: figures.migrated ? "Every migration has run." : "Migrations are pending: this store is older than the program."
            ),
            ReadinessCheck(
                name: "sync",
                ok: !figures.joined || !figures.syncOffline,
                detail: !figures.joined
                    ? "Not needed: this store has not joined a sync server."
                    : figures.syncOffline ? "The sync server is out of reach; changes wait in the outbox." : "The sync server answers."
            ),
        ]
    }

    static func collect(_ environment: WebEnvironment) async {
        guard let figures = try? await environment.backoffice.reports.serverFigures(backups: try environment.settings.backupFolder()) else { return }
        ProcessMetrics.set("northwind_store_size_bytes", Double(figures.storeBytes), help: "The store file and its write-ahead log, in bytes.")
        // A store that has not joined keeps its changes for a first upload; they wait on nobody.
        ProcessMetrics.set(
            "northwind_sync_outbox_depth",
            figures.joined ? Double(figures.outboxDepth) : 0,
            help: "Local changes the sync server has not acknowledged; 0 when not joined."
        )
        // -1 when there never was one: Prometheus has no nil, and an alert on "> 3600" must not fire on a fresh store.
        ProcessMetrics.set(
            "northwind_sync_seconds_since_success",
            figures.joined ? figures.secondsSinceSync ?? -1 : -1,
            help: "Seconds since the last successful sync; -1 before the first, or when not joined."
        )
        ProcessMetrics.set(
            "northwind_backup_seconds_since_good",
            figures.secondsSinceBackup ?? -1,
            help: "Seconds since the newest backup that was checked good; -1 when there is none."
        )
    }
}
