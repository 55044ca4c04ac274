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
    static func support(syncServer: String) -> FirstRunSupport {
        FirstRunSupport(
            loadDemo: { backoffice in _ = try DemoData.seed(into: backoffice.store, options: .init()) },
            joinCompany: { backoffice, server, token in
                _ = try await ShopSyncEngine.join(backoffice, server: server, token: token)
                // Everything the company shares comes down now, so the shop opens on its catalogue.
                _ = try await ShopSyncEngine(backoffice: backoffice, server: syncServer.isEmpty ? nil : syncServer).syncNow()
            },
            bootID: bootID
        )
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
