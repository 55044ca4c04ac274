import Foundation
import Hummingbird
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime

/// How a sync server instance listens and how hard it lets clients push.
public struct SyncServerOptions: Sendable {
    public var host: String
    public var port: Int
    /// Requests a second per installation, on average, and the burst allowed above it.
    public var requestsPerSecond: Double
    public var burst: Double
    /// How often event streams ping, and poll for changes an announcement may have missed.
    public var ping: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8444,
        requestsPerSecond: Double = 200,
        burst: Double = 400,
        ping: Duration = .seconds(15)
    ) {
        self.host = host
        self.port = port
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.ping = ping
    }
}

/// Builds the sync server's Hummingbird application.
public enum SyncServerApp {
    public static func make(service: SyncService, options: SyncServerOptions, logger: Logger) async throws -> some ApplicationProtocol {
        let router = Router()
        router.add(middleware: SyncGate(service: service, throttle: Throttle(rate: options.requestsPerSecond, burst: options.burst)))
        router.add(middleware: RawResponder(service: service))
        await service.startListening()
        try SyncHandler(service: service, ping: options.ping).registerHandlers(
            on: router,
            serverURL: URL(string: "/")!,
            configuration: Configuration(jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
        )
        return Application(
            router: router,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "northwind-sync"),
            logger: logger
        )
    }
}
