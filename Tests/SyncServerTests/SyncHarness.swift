import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SyncAPI
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// A real `northwind-sync-server` process on loopback, on a fresh SQLite file or PostgreSQL database, with enrolled
/// installations to call it as. Administration (enrolment tokens, revocation) goes through the same database, as the
/// CLI's would.
struct SyncHarness: Sendable {
    let service: SyncService
    let port: Int
    let container = "acme"
    /// The `--database` the server was started with.
    let database: String

    /// Runs `body` against a fresh server on `engine`; stops it afterwards.
    static func with(
        _ engine: SyncEngine,
        requestsPerSecond: Double = 10_000,
        burst: Double = 20_000,
        ping: Int = 15,
        arguments: [String] = [],
        _ body: @Sendable (SyncHarness) async throws -> Void
    ) async throws {
        let database = try await freshDatabase(engine)
        defer { removeDatabase(database) }
        let service = try await SyncService.open(database: database)
        let server = try ServerProcess.start(
            [
                "serve", "--database", database, "--port", "0", "--rate", String(requestsPerSecond), "--burst", String(burst),
                "--ping-seconds", String(ping),
            ] + arguments
        )
        defer { server.stop() }
        do {
            try await body(SyncHarness(service: service, port: server.port, database: database))
        } catch {
            await service.close()
            throw error
        }
        await service.close()
    }

    /// A new, empty database for `engine`: a SQLite path in a temporary folder, or a PostgreSQL URL.
    static func freshDatabase(_ engine: SyncEngine) async throws -> String {
        switch engine {
        case .sqlite:
            FileManager.default.temporaryDirectory.appendingPathComponent("sync-\(UUID().uuidString)/sync.sqlite").path
        case .postgres:
            try await PostgresCluster.shared.newDatabase()
        }
    }

    /// Deletes a SQLite database's folder; PostgreSQL databases go with the throwaway cluster.
    static func removeDatabase(_ database: String) {
        guard database.hasPrefix("/") else { return }
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: database).deletingLastPathComponent())
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A client with no credential (for enrolment, and to check refusals).
    var anonymous: Client { client(credential: nil) }

    func client(credential: String?, protocolVersion: String? = nil) -> Client {
        Self.client(port: port, credential: credential, protocolVersion: protocolVersion)
    }

    static func client(port: Int, credential: String?, protocolVersion: String? = nil) -> Client {
        Client(
            serverURL: URL(string: "http://127.0.0.1:\(port)")!,
            transport: AsyncHTTPClientTransport(),
            middlewares: [Credentials(credential: credential, protocolVersion: protocolVersion)]
        )
    }

    /// Enrols a site and returns a client that calls as it.
    func enrol(_ siteCode: String, role: Role) async throws -> Client {
        client(credential: try await enrolCredential(siteCode, role: role))
    }

    /// Enrols a site and returns its credential.
    func enrolCredential(_ siteCode: String, role: Role) async throws -> String {
        let token = try await service.createEnrollment(container: container, role: role)
        return try await anonymous.enroll(body: .json(.init(token: token, siteCode: siteCode))).ok.body.json.credential
    }

    /// Head office and a shop, with the shared zones `catalog` (written by all) and `prices` (head office only),
    /// and the shop's own zone.
    func company() async throws -> (hq: Client, shop: Client) {
        let hq = try await enrol("HQ", role: .hq)
        let shop = try await enrol("OXF", role: .shop)
        _ = try await hq.createZones(["catalog"], writers: .all)
        _ = try await hq.createZones(["prices"], writers: .hq)
        _ = try await shop.createZones(["site-OXF"])
        return (hq, shop)
    }

    /// The raw HTTP answer to a request, for what the generated client cannot send (bad JSON, huge bodies).
    func raw(
        _ path: String,
        body: Data,
        credential: String? = nil,
        headers: [String: String] = [:],
        contentType: String? = "application/json"
    ) async throws -> (Int, [String: String], SyncError?) {
        var request = HTTPClientRequest(url: baseURL.absoluteString + path)
        request.method = .POST
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let credential { request.headers.add(name: "Authorization", value: "Bearer \(credential)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(body)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 10 * 1024 * 1024)
        let error = try? JSONDecoder().decode(SyncError.self, from: Data(data.readableBytesView))
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        return (Int(response.status.code), fields, error)
    }
}

/// Adds the credential and protocol version to every request.
struct Credentials: ClientMiddleware {
    let credential: String?
    let protocolVersion: String?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let credential { request.headerFields[.authorization] = "Bearer \(credential)" }
        request.headerFields[HTTPField.Name(SyncProtocolVersion.header)!] = protocolVersion ?? String(SyncProtocolVersion.current)
        return try await next(request, body, baseURL)
    }
}

extension Client {
    func createZones(
        _ names: [String],
        writers: Components.Schemas.ZoneOperation.WritersPayload? = nil,
        database: Components.Parameters.Database = .shared
    )
        async throws -> [Components.Schemas.ZoneResult]
    {
        try await modifyZones(
            path: .init(container: "acme", database: database),
            body: .json(.init(operations: names.map { .init(operationType: .create, zoneID: ZoneID($0), writers: writers) }))
        ).ok.body.json.zones
    }

    /// Sends one batch; returns the answer, or the error the whole request got.
    func modify(
        _ operations: [(Components.Schemas.RecordOperation.OperationTypePayload, SyncRecord)],
        batchID: String = UUID().uuidString,
        atomic: Bool? = nil,
        database: Components.Parameters.Database = .shared,
        clientID: String = "test",
        sequence: Int64? = nil,
        takeOver: Bool? = nil
    ) async throws -> Result<Components.Schemas.ModifyResponse, SyncError> {
        let body = Components.Schemas.ModifyRequest(
            clientID: clientID,
            batchID: batchID,
            atomic: atomic,
            operations: operations.enumerated().map { .init(opID: "op\($0.offset)", operationType: $0.element.0, record: $0.element.1) },
            sequence: sequence,
            takeOver: takeOver
        )
        switch try await modifyRecords(path: .init(container: "acme", database: database), body: .json(body)) {
        case .ok(let ok): return .success(try ok.body.json)
        case .default(_, let failure): return .failure(try failure.body.json)
        }
    }

    /// Every change of a zone after `token`, following `moreComing`, page by page.
    func changes(
        _ zone: String,
        after token: String? = nil,
        limit: Int? = nil
    ) async throws -> (pages: [Components.Schemas.ZoneChanges], error: SyncError?) {
        var pages: [Components.Schemas.ZoneChanges] = []
        var token = token
        while true {
            let answer = try await zoneChanges(
                path: .init(container: "acme", database: .shared),
                body: .json(.init(zones: [.init(zoneID: ZoneID(zone), syncToken: token, resultsLimit: limit)]))
            )
            switch answer {
            case .ok(let ok):
                let page = try ok.body.json.zones[0]
                pages.append(page)
                token = page.syncToken
                if !page.moreComing { return (pages, nil) }
            case .default(_, let failure): return (pages, try failure.body.json)
            }
        }
    }
}

/// A record in `zone` with string fields.
func record(
    _ name: String,
    type: String = "Product",
    zone: String = "catalog",
    tag: String? = nil,
    _ fields: [String: FieldValue] = [:]
) -> SyncRecord {
    SyncRecord(recordName: name, recordType: type, zoneID: ZoneID(zone), recordChangeTag: tag, fields: fields)
}

extension Result {
    var value: Success? { try? get() }
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
