import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

/// One thing `/readyz` checks: the store, the migrations, the sync server.
public struct ReadinessCheck: Sendable, Codable, Equatable {
    public var name: String
    public var ok: Bool
    public var detail: String

    public init(name: String, ok: Bool, detail: String) {
        self.name = name
        self.ok = ok
        self.detail = detail
    }
}

/// `/healthz`, `/readyz` and `/metrics`, as both servers answer them, for systemd, load balancers and Prometheus.
public enum OperationsRoutes {
    /// Registers the three routes. `ready` runs the readiness checks; `collect` sets the gauges read at scrape
    /// time (sizes, ages, depths) before `/metrics` answers.
    ///
    /// `/metrics` answers only a caller on this machine that no proxy forwarded: the figures (orders a day, sync
    /// lag) are the company's business, and a Prometheus on the same machine, or reached over SSH, needs no
    /// password. Anything else gets 404, as if there were no such page.
    public static func register<Context: RemoteAddressRequestContext>(
        on router: Router<Context>,
        ready: @escaping @Sendable () async -> [ReadinessCheck],
        collect: @escaping @Sendable () async -> Void
    ) {
        // Alive: the process answers. Nothing is read, so a stuck store does not make systemd kill a live server.
        router.get("healthz") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: "ok\n"))
            )
        }
        router.get("readyz") { _, _ -> Response in
            let checks = await ready()
            let body = Readiness(ready: checks.allSatisfy(\.ok), checks: checks)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(body)) ?? Data()
            return Response(
                status: body.ready ? .ok : .serviceUnavailable,
                headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: data))
            )
        }
        router.get("metrics") { request, context -> Response in
            guard isLocal(request, remote: context.remoteAddress) else {
                return Response(
                    status: .notFound,
                    headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "Not found\n"))
                )
            }
            await collect()
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: ProcessMetrics.registry.emitToBuffer()))
            )
        }
    }

    /// A caller on this machine, not forwarded by a proxy (which would say so in `Forwarded` or `X-Forwarded-For`).
    public static func isLocal(_ request: Request, remote: SocketAddress?) -> Bool {
        for name in ["Forwarded", "X-Forwarded-For"] where request.headers[HTTPField.Name(name)!] != nil { return false }
        switch remote {
        case .unixDomainSocket: return true
        case .v4(let address): return SocketAddress.v4(address).ipAddress?.hasPrefix("127.") == true
        case .v6(let address):
            let ip = SocketAddress.v6(address).ipAddress ?? ""
            return ip == "::1" || ip.hasPrefix("::ffff:127.")
        case nil: return false
        }
    }

    struct Readiness: Codable {
        var ready: Bool
        var checks: [ReadinessCheck]
    }
}
