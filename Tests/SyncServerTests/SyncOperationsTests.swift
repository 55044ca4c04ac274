import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

#if canImport(Glibc)
import Glibc
#endif

/// The sync server's operator side: `/healthz`, `/readyz`, `/metrics`, its settings file, and reload on SIGHUP.
@Suite struct SyncOperationsTests {
    static func get(_ url: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 4 << 20)))
    }

    /// A fresh SQLite database in its own folder, with a settings file beside it.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func healthReadinessAndMetricsNeedNoCredential() async throws {
        try await SyncHarness.with(.sqlite) { harness in
            // Given a running server, and a caller with no credential
            let base = harness.baseURL.absoluteString
            // When an operator's probes call
            let health = try await Self.get(base + "/healthz")
            let ready = try await Self.get(base + "/readyz")
            let metrics = try await Self.get(base + "/metrics")
            // Then each answers: alive, ready with its database, and the figures (the requests just made among them)
            #expect(health.status == 200 && health.body == "ok\n")
            #expect(ready.status == 200 && ready.body.contains(#""ready":true"#), "\(ready.body)")
            #expect(metrics.status == 200)
            #expect(
                metrics.body.contains(#"hb_requests{http_route="/readyz",http_request_method="GET",http_response_status_code="200"} 1"#),
                "\(metrics.body)"
            )
            #expect(metrics.body.contains("northwind_sync_database_size_bytes "))
        }
    }

    @Test func metricsAreHiddenFromAForwardedRequest() async throws {
        try await SyncHarness.with(.sqlite) { harness in
            // Given a server behind a proxy
            // When the proxy forwards a request for /metrics from elsewhere
            let forwarded = try await Self.get(harness.baseURL.absoluteString + "/metrics", headers: [("X-Forwarded-For", "10.0.0.9")])
            // Then there is no such page
            #expect(forwarded.status == 404)
        }
    }

    @Test func theSettingsFileSetsThePortAndTheCommandLineWins() async throws {
        // Given a settings file naming a port and a host
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sync-server.json")
        try Data(#"{"host": "127.0.0.1", "port": 1, "rate": 50}"#.utf8).write(to: file)
        // When the server starts with the file, and --port 0 on its command line
        let server = try ServerProcess.start(
            ["serve", "--database", folder.appendingPathComponent("sync.sqlite").path, "--port", "0"],
            environment: ["NORTHWIND_SYNC_SETTINGS": file.path]
        )
        defer { server.stop() }
        // Then it listens where the command line says (port 1 would need root), and answers
        #expect(server.port != 1)
        #expect(try await Self.get("http://127.0.0.1:\(server.port)/healthz").status == 200)
    }

    @Test func aSettingsFileWithAnUnknownKeyIsRefusedWithItsName() async throws {
        // Given a settings file with a misspelt key
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sync-server.json")
        try Data(#"{"prot": 8444}"#.utf8).write(to: file)
        // When the server is started with it
        let result = try await CLI.run(
            ["serve", "--database", folder.appendingPathComponent("sync.sqlite").path, "--settings-file", file.path],
            program: "northwind-sync-server"
        )
        // Then it does not start, and names the key and the ones it takes
        #expect(result.status != 0)
        #expect(result.stderr.contains("names no setting 'prot'") && result.stderr.contains("port"), "\(result.stderr)")
    }

    @Test func aHangupAppliesANewRateLimitFromTheSettingsFile() async throws {
        // Given a server whose settings file allows a generous rate, and an enrolled installation
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sync-server.json")
        try Data(#"{"rate": 10000, "burst": 20000}"#.utf8).write(to: file)
        let database = folder.appendingPathComponent("sync.sqlite").path
        let server = try ServerProcess.start(["serve", "--database", database, "--port", "0"], environment: ["NORTHWIND_SYNC_SETTINGS": file.path])
        defer { server.stop() }
        let service = try await SyncService.open(database: database)
        let harness = SyncHarness(service: service, port: server.port, database: database)
        let credential = try await harness.enrolCredential("HQ", role: .hq)
        let list = { try await harness.raw("/sync/v1/acme/shared/zones/list", body: Data("{}".utf8), credential: credential).0 }
        let before = [try await list(), try await list(), try await list()]
        // When the file is edited to one request at a time, and the operator reloads (SIGHUP)
        try Data(#"{"rate": 0.02, "burst": 1}"#.utf8).write(to: file)
        server.process.signal(SIGHUP)
        var after: [Int] = []
        for _ in 0..<50 where !after.contains(429) {
            after.append(try await list())
            try await Task.sleep(for: .milliseconds(100))
        }
        await service.close()
        // Then nothing was throttled before, and the same process throttles after
        #expect(before == [200, 200, 200])
        #expect(after.contains(429), "\(after)")
        #expect(server.process.isRunning)
    }
}
