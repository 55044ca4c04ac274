import Foundation
import Hummingbird
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime
import ServerOperations
import ServiceLifecycle
import SyncAPI

/// How a sync server instance listens and how hard it lets clients push.
public struct SyncServerOptions: Sendable {
    public var host: String
    public var port: Int
    /// Requests a second per installation, on average, and the burst allowed above it.
    public var requestsPerSecond: Double
    public var burst: Double
    /// How often event streams ping, and poll for changes an announcement may have missed.
    public var ping: Duration
    /// The SQLite file, whose size `/metrics` shows; nil on PostgreSQL.
    public var databaseFile: String?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8444,
        requestsPerSecond: Double = 200,
        burst: Double = 400,
        ping: Duration = .seconds(15),
        databaseFile: String? = nil
    ) {
        self.host = host
        self.port = port
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.ping = ping
        self.databaseFile = databaseFile
    }
}

/// Builds the sync server's Hummingbird application.
public enum SyncServerApp {
    /// `throttle`, when given, is the rate limit that `systemctl reload` may change while the server runs.
    public static func make(
        service: SyncService,
        options: SyncServerOptions,
        throttle: Throttle? = nil,
        services: [any Service] = [],
        logger: Logger
    ) async throws -> some ApplicationProtocol {
        let router = Router(context: SyncRequestContext.self)
        // Requests by route and status, and their latency, for /metrics.
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: SyncGate(service: service, throttle: throttle ?? Throttle(rate: options.requestsPerSecond, burst: options.burst)))
        SyncOperations.register(on: router, service: service, databaseFile: options.databaseFile)
        await service.startListening()
        try SyncHandler(service: service, ping: options.ping).registerHandlers(
            on: router,
            serverURL: URL(string: "/")!,
            configuration: Configuration(jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
            // `records/modify` reads its own request (`ModifyRequest`); it and `changes/zone` send JSON their handlers
            // wrote (`SyncHandler`).
            middlewares: [RawRequestBody.Middleware(), RawAnswer.Middleware()]
        )
        return Application(
            router: router,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "northwind-sync"),
            services: services,
            onServerRunning: { channel in
                SystemdNotify.ready(status: "Serving the sync protocol on \(options.host):\(channel.localAddress?.port ?? options.port).")
            },
            logger: logger
        )
    }
}
