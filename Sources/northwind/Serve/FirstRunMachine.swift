import Foundation
import Logging
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import NorthwindWeb
import ServiceLifecycle

/// What the first-run page needs from this machine and from the layers the web app does not see: the demo data,
/// joining a company, and which boot this is.
enum FirstRunMachine {
    /// Where head office joins if the first run makes this machine head office, and with which token: the
    /// appliance's own sync server (`NORTHWIND_APPLIANCE_SYNC_URL` and `NORTHWIND_APPLIANCE_HQ_TOKEN`, from
    /// /etc/northwind/head-office.env, made at its first boot), else `sync.server` and `sync.enrolmentToken`. The
    /// appliance's are not `sync.server`: that one would also steer a shop's sync away from the head office it joins.
    static func headOfficeSync(
        server: String,
        token: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (
        server: String, token: String
    ) {
        if let url = environment["NORTHWIND_APPLIANCE_SYNC_URL"], !url.isEmpty, let hq = environment["NORTHWIND_APPLIANCE_HQ_TOKEN"], !hq.isEmpty {
            return (url, hq)
        }
        return (server, token)
    }

    /// `syncServer`: `sync.server`, which replaces the address a store joined with; `headOffice`: where head office
    /// joins (`headOfficeSync`).
    static func support(syncServer: String, headOffice: (server: String, token: String), store: String) -> FirstRunSupport {
        FirstRunSupport(
            loadDemo: { backoffice in _ = try DemoData.seed(into: backoffice.store, options: .init()) },
            joinCompany: { backoffice, server, token, fingerprint in
                do {
                    _ = try await ShopSyncEngine.join(backoffice, server: server, token: token, fingerprint: fingerprint)
                } catch let error as ShopSyncError {
                    // Said beside the field to change.
                    if error.kind == .untrusted { throw NorthwindError.invalid("fingerprint", error.message) }
                    if error.isSiteCodeTaken { throw NorthwindError.invalid("siteCode", error.message) }
                    throw error
                }
                // Everything the company shares comes down now, so the shop opens on its catalogue. Joined is joined:
                // a download that fails here is finished by the sync that runs from now on.
                _ = try? await ShopSyncEngine(backoffice: backoffice, server: syncServer.isEmpty ? nil : syncServer).syncNow()
            },
            joinAsHeadOffice: { backoffice in
                guard !headOffice.server.isEmpty, !headOffice.token.isEmpty else { return nil }
                let membership = try await ShopSyncEngine.join(backoffice, server: headOffice.server, token: headOffice.token)
                // Head office's catalogue goes up now, so the first shop finds it.
                _ = try? await ShopSyncEngine(backoffice: backoffice, server: syncServer.isEmpty ? nil : syncServer).syncNow()
                let fingerprint =
                    caFingerprint().map { "this fingerprint, which its console shows too: \($0)" }
                    ?? "the certificate fingerprint this machine's console shows"
                return """
                    Head office has joined the company "\(membership.container)" on this machine's sync server, as \
                    \(membership.siteCode). A shop joins it from its own first-run page with three things: this machine's \
                    address (https://northwind.local/, or https:// and its IP address), an enrolment token made for that \
                    shop on this machine's console (runuser -u northwind-sync -- northwind-sync-server enroll --container \
                    \(membership.container) --role shop), and \(fingerprint).
                    """
            },
            bootID: bootID,
            onDone: { markDone(store: store) }
        )
    }

    /// The appliance's local certificate authority's fingerprint (`NORTHWIND_APPLIANCE_CA_FINGERPRINT_FILE`, written
    /// by its console banner), if this is an appliance and the authority is made.
    static func caFingerprint(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let file = environment["NORTHWIND_APPLIANCE_CA_FINGERPRINT_FILE"], !file.isEmpty,
            let text = try? String(contentsOfFile: file, encoding: .utf8),
            let hex = CertificateFingerprint.normalised(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        return CertificateFingerprint.display(hex)
    }

    /// `.setup-done` beside the store: the appliance's console banner says "pending" until it exists.
    static func markDone(store: String) {
        let marker = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent(".setup-done")
        if !FileManager.default.fileExists(atPath: marker.path) { _ = FileManager.default.createFile(atPath: marker.path, contents: Data()) }
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
                if (try? await backoffice.sync.membership()) != nil { return try await sync.run() }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
