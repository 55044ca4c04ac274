import Foundation
import Logging
import Northwind
import NorthwindLoading
import NorthwindSync
import NorthwindWeb
import ServiceLifecycle

/// What the first-run page needs from this machine and from the layers the web app does not see: the demo data,
/// joining a company, and which boot this is.
enum FirstRunMachine {
    /// `syncServer` and `headOfficeToken`: this machine's own sync server and the token that enrols head office in
    /// it (`sync.server`, `sync.enrolmentToken`), which the appliance sets up at its first boot.
    static func support(syncServer: String, headOfficeToken: String, store: String) -> FirstRunSupport {
        FirstRunSupport(
            loadDemo: { backoffice in _ = try DemoData.seed(into: backoffice.store, options: .init()) },
            joinCompany: { backoffice, server, token in
                _ = try await ShopSyncEngine.join(backoffice, server: server, token: token)
                // Everything the company shares comes down now, so the shop opens on its catalogue.
                _ = try await ShopSyncEngine(backoffice: backoffice, server: syncServer.isEmpty ? nil : syncServer).syncNow()
            },
            joinAsHeadOffice: { backoffice in
                guard !syncServer.isEmpty, !headOfficeToken.isEmpty else { return nil }
                let membership = try await ShopSyncEngine.join(backoffice, server: syncServer, token: headOfficeToken)
                // Head office's catalogue goes up now, so the first shop finds it.
                _ = try await ShopSyncEngine(backoffice: backoffice).syncNow()
                return """
                    Head office has joined the company "\(membership.container)" on this machine's sync server, as \
                    \(membership.siteCode). A shop joins it from its own first-run page, with this machine's address \
                    and an enrolment token made for that shop. Make one on this machine's console: runuser -u northwind-sync -- \
                    northwind-sync-server enroll --container \(membership.container) --role shop
                    """
            },
            bootID: bootID,
            onDone: { markDone(store: store) }
        )
    }

    /// `.setup-done` beside the store: the appliance's console banner says "pending" until it exists.
    static func markDone(store: String) {
        let marker = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent(".setup-done")
        if !FileManager.default.fileExists(atPath: marker.path) { FileManager.default.createFile(atPath: marker.path, contents: Data()) }
    }

    /// This boot's id: Linux's `boot_id`, new at every start of the machine. Nil elsewhere.
    @Sendable static func bootID() -> String? {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits for the store to join a company (on the first-run page), then syncs as `serve` does for a joined store.
    struct SyncOnceJoined: Service {
        let backoffice: Backoffice
        let sync: ShopSyncService

        func run() async throws {
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                if (try? await backoffice.syncMembership()) != nil { return try await sync.run() }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
