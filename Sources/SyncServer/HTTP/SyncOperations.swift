import Foundation
import Hummingbird
import NIOCore
import ServerOperations

/// The sync server's request context: the caller's address, which `/metrics` needs.
public struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// The sync server's `/healthz`, `/readyz` and `/metrics`.
enum SyncOperations {
    static let paths: Set<String> = ["/healthz", "/readyz", "/metrics"]

    static func register(on router: Router<SyncRequestContext>, service: SyncService, databaseFile: String?) {
        ProcessMetrics.bootstrap()
        OperationsRoutes.register(
            on: router,
            ready: {
                // The epoch is read from the server's own tables: an answer means the database is up and migrated.
                do {
                    _ = try await service.storage.epoch()
                    return [ReadinessCheck(name: "database", ok: true, detail: "The database answers, migrated.")]
                } catch {
                    return [ReadinessCheck(name: "database", ok: false, detail: "The database does not answer: \(error)")]
                }
            },
            collect: {
                guard let databaseFile else { return }
                let bytes = [databaseFile, databaseFile + "-wal"].reduce(Int64(0)) { total, file in
                    total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0)
                }
                ProcessMetrics.set(
                    "northwind_sync_database_size_bytes",
                    Double(bytes),
                    help: "The SQLite database and its write-ahead log, in bytes."
                )
            }
        )
    }
}
