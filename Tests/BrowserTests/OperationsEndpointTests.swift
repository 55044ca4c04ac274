import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `/healthz`, `/readyz`, `/metrics`, readiness for systemd and reload on SIGHUP, against the real `northwind serve`.
@Suite(.serialized) struct OperationsEndpointTests {
    static func get(_ url: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    @Test func healthAndReadinessAnswerWithoutSignIn() async throws {
        // Given a fresh server, nobody signed in
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        // When an operator's probe asks whether it is alive and ready
        let health = try await Self.get(server.url("/healthz"))
        let ready = try await Self.get(server.url("/readyz"))
        // Then it is, and readiness names the store, the migrations and sync (not needed: not joined)
        #expect(health.status == 200 && health.body == "ok\n")
        #expect(ready.status == 200, "\(ready.body)")
        let checks = try JSONDecoder().decode(ReadyAnswer.self, from: Data(ready.body.utf8))
        #expect(checks.ready)
        #expect(checks.checks.map(\.name) == ["store", "migrations", "sync"])
        #expect(checks.checks.allSatisfy { $0.ok })
        #expect(checks.checks.last?.detail.contains("Not needed") == true)
    }

    @Test func metricsCountOrdersTakenAndExecutedAndRequestsByRoute() async throws {
        // Given a server and a manager's API token
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        let office = try server.backoffice()
        let managerID = try #require(try await office.accounts.logins().first { $0.value == server.manager.login }?.key)
        let token = try await office.accounts.issueAPIToken(employeeID: managerID, label: "metrics test")
        let customer = try #require(try await office.records.list(Customer.self, limit: 1).items.first)
        let product = try #require(
            try await office.catalogue.list().items.first { !$0.product.discontinued && $0.product.unitsInStock >= 1 }?.product
        )
        // When an order is taken and executed through the JSON API
        var create = HTTPClientRequest(url: server.url("/api/v1/orders"))
        create.method = .POST
        create.headers.add(name: "Authorization", value: "Bearer \(token)")
        create.headers.add(name: "Content-Type", value: "application/json")
        create.body = .bytes(ByteBuffer(string: #"{"customerCode": "\#(customer.code)", "lines": [{"productID": \#(product.id!), "quantity": 1}]}"#))
        let created = try await HTTPClient.shared.execute(create, timeout: .seconds(30))
        let order = try JSONDecoder().decode(Number.self, from: Data(try await created.body.collect(upTo: 1 << 20).readableBytesView))
        var execute = HTTPClientRequest(url: server.url("/api/v1/orders/\(order.number)/execute"))
        execute.method = .POST
        execute.headers.add(name: "Authorization", value: "Bearer \(token)")
        let executed = try await HTTPClient.shared.execute(execute, timeout: .seconds(30))
        _ = try await executed.body.collect(upTo: 1 << 20)
        let metrics = try await Self.get(server.url("/metrics"))
        // Then /metrics counts one of each, and the requests by route and status
        #expect(created.status.code == 201 && executed.status.code == 200)
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("northwind_orders_taken_total 1"), "\(metrics.body)")
        #expect(metrics.body.contains("northwind_orders_executed_total 1"), "\(metrics.body)")
        #expect(metrics.body.contains(#"hb_requests{http_route="/api/v1/orders",http_request_method="POST",http_response_status_code="201"} 1"#))
        #expect(metrics.body.contains("http_server_request_duration_bucket"))
        #expect(metrics.body.contains("northwind_store_size_bytes "))
        #expect(metrics.body.contains("northwind_sync_outbox_depth 0"))
    }

    @Test func metricsAreNotShownToARequestAProxyForwarded() async throws {
        // Given a server behind a reverse proxy, which says whom it forwards for
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        // When the proxy passes on a request for /metrics from the LAN
        let forwarded = try await Self.get(server.url("/metrics"), headers: [("X-Forwarded-For", "192.168.1.20")])
        let standard = try await Self.get(server.url("/metrics"), headers: [("Forwarded", "for=192.168.1.20")])
        // Then there is no such page for it
        #expect(forwarded.status == 404 && !forwarded.body.contains("northwind_"))
        #expect(standard.status == 404)
    }

    @Test func aHangupReadsTheSettingsFileAndTheServerGoesOn() async throws {
        // Given a server whose settings file sets the log level to info
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-hup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("settings.json")
        try Data(#"{"log": {"level": "info"}}"#.utf8).write(to: file)
        let server = try await LiveServer(environment: ["NORTHWIND_SETTINGS": file.path])
        defer { Task { await server.stop() } }
        // When the file now asks for debug, and the operator runs `systemctl reload` (SIGHUP)
        try Data(#"{"log": {"level": "debug"}}"#.utf8).write(to: file)
        server.process.signal(SIGHUP)
        try await waitFor("the reload to be logged", timeout: .seconds(20)) { server.log.contains("Reloaded on SIGHUP") }
        let after = try await Self.get(server.url("/healthz"))
        // Then the server still serves, says the file is in force, and logs requests at debug level
        #expect(after.status == 200)
        #expect(server.log.contains("the settings file \(file.path) is in force"), "\(server.log)")
        try await waitFor("a request logged at debug level", timeout: .seconds(20)) { server.log.contains("/healthz") }
    }

    @Test func systemdIsToldTheServerIsReadyOnceItListens() async throws {
        // Given a notification socket, as systemd gives a Type=notify service
        let socketPath = FileManager.default.temporaryDirectory.appendingPathComponent("nw-notify-\(UUID().uuidString.prefix(8))").path
        let listener = try NotifySocket(path: socketPath)
        defer { listener.close() }
        // When the server starts with NOTIFY_SOCKET pointing at it
        let server = try await LiveServer(environment: ["NOTIFY_SOCKET": socketPath])
        defer { Task { await server.stop() } }
        let message = listener.receive(within: .seconds(30))
        // Then it said READY=1, and by then it answered requests
        #expect(message?.contains("READY=1") == true, "\(message ?? "nothing")")
        #expect(try await Self.get(server.url("/healthz")).status == 200)
    }

    struct ReadyAnswer: Decodable {
        struct Check: Decodable {
            var name: String
            var ok: Bool
            var detail: String
        }
        var ready: Bool
        var checks: [Check]
    }

    struct Number: Decodable { var number: String }
}

/// A Unix datagram socket bound at `path`, as systemd's `NOTIFY_SOCKET` is.
final class NotifySocket: Sendable {
    let descriptor: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else { throw CLIError(description: "cannot bind a notify socket at \(path): errno \(errno)") }
    }

    /// The first datagram, or nil if none comes in time.
    func receive(within timeout: Duration) -> String? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000)
        guard poll(&poller, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }

    func close() {
        Glibc.close(descriptor)
        unlink(path)
    }
}
