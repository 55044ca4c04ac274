import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import Northwind
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SyncAPI
import SyncProtocol
import Synchronization

/// Why a sync could not be done, in words a person can act on.
public struct ShopSyncError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The server could not be reached; the store keeps working and syncs later.
        case offline
        /// The server refused the request (the reason says why).
        case refused(ServerErrorCode)
        /// The server asked to wait this many seconds.
        case busy(retryAfter: Int)
        /// This store has not joined a sync server, or the request makes no sense for it.
        case notJoined
        /// This computer's clock is ahead of the server's (positive) or behind it by more than the merge rules allow,
        /// or the server's time is unknown (0).
        case clockOff(seconds: Int)
        /// A batch names a picture the server lacks and this store no longer has: the batch is built afresh.
        case missingAsset(String)
        /// The server's certificate is not one this store trusts, or a certificate fingerprint given to join is
        /// not one or does not match.
        case untrusted
    }

    public var kind: Kind
    public var message: String
    public var description: String { message }

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Enrolment refused because the company has given this site code to another installation already.
    public var isSiteCodeTaken: Bool { kind == .refused(.exists) }

    static func from(_ error: SyncError, doing what: String) -> ShopSyncError {
        switch error.serverErrorCode {
        case .throttled, .tryAgainLater:
            ShopSyncError(.busy(retryAfter: error.retryAfter ?? 5), "The sync server is busy (\(what)): \(error.reason)")
        default:
            ShopSyncError(.refused(error.serverErrorCode), "The sync server refused to \(what): \(error.reason)")
        }
    }
}

/// The sync server's protocol, through the client generated from its contract (`openapi.yaml`).
struct SyncClient: Sendable {
    let server: URL
    let container: String
    private let client: Client
    /// The server's clock, from the `Date` of its last answer.
    let serverTime = ServerTime()

    /// Head office's own certificate authority, pinned when this store joined (`PinnedAuthority`): trusted alone.
    let authority: String?

    /// `timeout` bounds each request, connecting included (AsyncHTTPClient retries a refused connection until
    /// then): a person waiting on a form is given a shorter one.
    init(
        server: URL,
        container: String,
        credential: String?,
        authority: String? = nil,
        timeout: Duration = .seconds(60)
    ) throws(ShopSyncError) {
        // "https://hq.example/" is how people write an address; the generated client would then ask for "//sync/v1/…".
        var server = server
        while server.path.hasSuffix("/"), let shorter = URL(string: String(server.absoluteString.dropLast())) { server = shorter }
        if authority != nil, server.scheme != "https" {
            throw ShopSyncError(
                .untrusted,
                "This store pinned head office's certificate authority when it joined: its sync server's address must be "
                    + "https://, not \(server.absoluteString)."
            )
        }
        self.server = server
        self.container = container
        self.authority = authority
        let http = try authority.map { pem throws(ShopSyncError) in try PinnedAuthority.client(trusting: pem) } ?? Self.http
        client = Client(
            serverURL: server,
            transport: AsyncHTTPClientTransport(
                configuration: .init(client: http, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000))
            ),
            middlewares: [Credentials(credential: credential), ServerClock(time: serverTime), DirectBodies.Middleware()]
        )
    }

    /// The shared client's settings with more connections to one server than its eight: each store's sync service
    /// holds one for good with its event stream, and in a process running several stores' sync (the company
    /// benchmark's shops) the streams held all eight while every other request waited out its deadline.
    static let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration())

    static func configuration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
        return configuration
    }

    /// Runs a call; a failure to reach the server becomes `offline`.
    private func call<T>(_ what: String, _ body: () async throws -> T) async throws(ShopSyncError) -> T {
        do {
            return try await body()
        } catch let error as ShopSyncError {
            throw error
        } catch let error as MissingAsset {
            throw ShopSyncError(.missingAsset(error.sha256), "Picture \(error.sha256) is no longer in this store.")
        } catch {
            // The generated client's error describes the whole request; the cause is what a person needs.
            let underlying = (error as? ClientError)?.underlyingError ?? error
            let cause = String(describing: underlying)
            // Only a certificate that does not verify is a matter of trust (not a TLS error of another kind, such as
            // https:// sent to a plain-HTTP port).
            if cause.contains("CERTIFICATE_VERIFY_FAILED") || cause.localizedCaseInsensitiveContains("certificate verify failed") {
                throw ShopSyncError(
                    .untrusted,
                    "The sync server at \(server.absoluteString) answered with a certificate this machine does not trust (\(what)): \(cause). "
                        + (authority == nil
                            ? "A head office with a certificate authority of its own (a Northwind appliance) is joined with that "
                                + "authority's SHA-256 fingerprint, shown on its console: `northwind sync join URL TOKEN --fingerprint FP`, "
                                + "or the first-run page's fingerprint field."
                            : "It is not signed by the certificate authority this store pinned when it joined: if head office "
                                + "was reinstalled, join again with `northwind sync join URL TOKEN --again --fingerprint FP`.")
                )
            }
            throw ShopSyncError(.offline, "Cannot reach the sync server at \(server.absoluteString) (\(what)): \(cause)")
        }
    }

    func enroll(token: String, siteCode: String) async throws(ShopSyncError) -> Components.Schemas.EnrollResponse {
        try await call("enrol") {
            switch try await client.enroll(body: .json(.init(token: token, siteCode: siteCode))) {
            case .ok(let ok): return try ok.body.json
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "enrol this store")
            }
        }
    }

    /// What a token would enrol, without spending it.
    func checkEnrollment(token: String) async throws(ShopSyncError) -> Components.Schemas.EnrollCheckResponse {
        try await call("check the enrolment token") {
            switch try await client.checkEnrollment(body: .json(.init(token: token))) {
            case .ok(let ok): return try ok.body.json
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "check the enrolment token")
            }
        }
    }

    /// A new credential for this installation; the one this client calls with stays valid until the new one is used.
    func rotateCredential() async throws(ShopSyncError) -> Components.Schemas.CredentialResponse {
        try await call("rotate the credential") {
            switch try await client.rotateCredential(path: .init(container: container)) {
            case .ok(let ok): return try ok.body.json
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "rotate this store's credential")
            }
        }
    }

    /// The shared database's zones, and the server's epoch.
    /// The shared database's zones; `caughtUpEpoch` tells the server this installation has sent again, in that
    /// epoch, what the server's restore lost.
    func zones(caughtUpEpoch: String? = nil) async throws(ShopSyncError) -> Components.Schemas.ZonesResponse {
        try await call("list zones") {
            switch try await client.listZones(
                path: .init(container: container, database: .shared),
                body: .json(.init(caughtUpEpoch: caughtUpEpoch))
            ) {
            case .ok(let ok): return try ok.body.json
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "list zones")
            }
        }
    }

    /// Creates zones that do not exist yet (in `user`'s private database, when given); a zone that exists already
    /// is fine.
    func createZones(_ names: [String], user: String? = nil) async throws(ShopSyncError) {
        try await call("create zones") {
            let body = Components.Schemas.ZonesModifyRequest(operations: names.map { .init(operationType: .create, zoneID: ZoneID($0)) })
            switch try await client.modifyZones(
                path: .init(container: container, database: Self.database(user)),
                headers: .init(syncUser: user),
                body: .json(body)
            ) {
            case .ok(let ok):
                for result in try ok.body.json.zones {
                    if let error = result.error, error.serverErrorCode != .exists {
                        throw ShopSyncError.from(error, doing: "create zone \(result.zoneID.zoneName)")
                    }
                }
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "create zones")
            }
        }
    }

    /// Sends one batch: atomic to the shared database, or each operation alone to `user`'s private one.
    func modify(
        clientID: String,
        batchID: String,
        operations: [(String, SyncRecord)],
        user: String? = nil,
        lineage: SyncLineage? = nil
    ) async throws(ShopSyncError) -> Components.Schemas.ModifyResponse {
        try await call("send changes") {
            let body = Components.Schemas.ModifyRequest(
                clientID: clientID,
                batchID: batchID,
                atomic: user == nil,
                operations: operations.enumerated().map { index, operation in
                    .init(opID: String(index), operationType: .init(rawValue: operation.0) ?? .update, record: operation.1)
                },
                sequence: lineage?.sequence,
                takeOver: lineage?.takeOver == true ? true : nil
            )
            // The generated code encodes the batch without its operations; `DirectBodies` sends `body.json`.
            var empty = body
            empty.operations = []
            let (output, answer) = try await DirectBodies.exchange(sending: body.json) {
                try await client.modifyRecords(
                    path: .init(container: container, database: Self.database(user)),
                    headers: .init(syncUser: user),
                    body: .json(empty)
                )
            }
            switch output {
            case .ok(let ok): return try answer.map(Components.Schemas.ModifyResponse.decode) ?? ok.body.json
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "take this store's changes")
            }
        }
    }

    /// Declares the container's schema (head office only).
    func declareSchema(_ types: [DeclaredRecordType]) async throws(ShopSyncError) {
        try await call("declare the container's schema") {
            let schema = Components.Schemas.ContainerSchema(
                recordTypes: types.map { type in
                    .init(
                        name: type.name,
                        appendOnly: type.appendOnly,
                        clocked: type.clocked,
                        fields: type.fields.map { field in
                            .init(
                                name: field.name,
                                _type: field.type.flatMap(Components.Schemas.FieldSchema._TypePayload.init(rawValue:)),
                                required: field.required,
                                referenceType: field.referenceType,
                                ownerBound: field.ownerBound
                            )
                        }
                    )
                }
            )
            switch try await client.putSchema(path: .init(container: container), body: .json(schema)) {
            case .ok: return
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "declare the container's schema")
            }
        }
    }

    /// Uploads the assets the server lacks (it says which; the same bytes are stored once).
    func uploadAssets(_ assets: [AssetReference], bytes: [String: Data]) async throws(ShopSyncError) {
        guard !assets.isEmpty else { return }
        try await call("upload pictures") {
            let request = Components.Schemas.AssetUploadRequest(assets: assets.map { .init(sha256: $0.sha256, size: $0.size) })
            switch try await client.requestAssetUploads(path: .init(container: container), body: .json(request)) {
            case .ok(let ok):
                for answer in try ok.body.json.assets where !answer.present {
                    guard let data = bytes[answer.sha256] else { throw MissingAsset(sha256: answer.sha256) }
                    switch try await client.uploadAsset(path: .init(container: container, sha256: answer.sha256), body: .binary(HTTPBody(data))) {
                    case .ok: break
                    case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "store picture \(answer.sha256)")
                    }
                }
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "take pictures")
            }
        }
    }

    /// An asset's bytes (the store checks them against their SHA-256 before writing them).
    func downloadAsset(_ asset: AssetReference) async throws(ShopSyncError) -> Data {
        try await call("download a picture") {
            switch try await client.downloadAsset(path: .init(container: container, sha256: asset.sha256)) {
            case .ok(let ok): return try await Data(collecting: ok.body.binary, upTo: SyncLimits.bytesPerAsset)
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "send picture \(asset.sha256)")
            }
        }
    }

    /// Asks the server to notify this installation of every change in the shared database (saving it again is
    /// harmless).
    func subscribeToEverything(id: String) async throws(ShopSyncError) {
        try await call("subscribe") {
            let subscription = Components.Schemas.Subscription(subscriptionID: id, subscriptionType: .database)
            let body = Components.Schemas.SubscriptionsModifyRequest(operations: [.init(operationType: .save, subscription: subscription)])
            switch try await client.modifySubscriptions(path: .init(container: container, database: .shared), body: .json(body)) {
            case .ok(let ok):
                if let error = try ok.body.json.subscriptions.first?.error { throw ShopSyncError.from(error, doing: "subscribe") }
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "subscribe")
            }
        }
    }

    /// The server's event stream: the id of each `change` notice, as it comes; `ping`s are passed over.
    /// A change the server announces: its event id (the resume point) and the zone that changed.
    struct ChangeNotice: Sendable {
        var id: String
        var zone: String?
    }

    func changeNotices(
        after lastEventID: String?
    ) async throws(ShopSyncError) -> AsyncCompactMapSequence<
        ServerSentEventsDeserializationSequence<ServerSentEventsLineDeserializationSequence<HTTPBody>>, ChangeNotice
    > {
        try await call("listen for changes") {
            switch try await client.events(path: .init(container: container, database: .shared), headers: .init(lastEventID: lastEventID)) {
            case .ok(let ok):
                return try ok.body.textEventStream.asDecodedServerSentEvents().compactMap { event in
                    guard event.event == "change" else { return nil }
                    let notice = event.data.flatMap { try? JSONDecoder().decode(Components.Schemas.Notice.self, from: Data($0.utf8)) }
                    return ChangeNotice(id: event.id ?? "", zone: notice?.zoneID.zoneName)
                }
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "stream its changes")
            }
        }
    }

    func changes(zone: String, token: String?, user: String? = nil) async throws(ShopSyncError) -> Components.Schemas.ZoneChanges {
        try await call("fetch changes") {
            let body = Components.Schemas.ZoneChangesRequest(zones: [.init(zoneID: ZoneID(zone), syncToken: token)])
            let (output, answer) = try await DirectBodies.exchange(sending: nil) {
                try await client.zoneChanges(
                    path: .init(container: container, database: Self.database(user)),
                    headers: .init(syncUser: user),
                    body: .json(body)
                )
            }
            switch output {
            case .ok(let ok):
                let zones = try answer.map(Components.Schemas.ZoneChangesResponse.decode)?.zones ?? ok.body.json.zones
                guard let page = zones.first else {
                    throw ShopSyncError(.refused(.internalError), "The sync server answered with no page of zone \(zone); sync again.")
                }
                return page
            case .default(_, let failure): throw ShopSyncError.from(try failure.body.json, doing: "send the changes of zone \(zone)")
            }
        }
    }
}

extension SyncClient {
    /// The shared database, or a user's private one.
    static func database(_ user: String?) -> Components.Parameters.Database { user == nil ? .shared : ._private }
}

/// A picture the server lacks and this store no longer holds (it changed since the batch naming it was built).
struct MissingAsset: Error {
    var sha256: String
}

/// Adds the credential and the protocol version to every request.
struct Credentials: ClientMiddleware {
    let credential: String?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let credential { request.headerFields[.authorization] = "Bearer \(credential)" }
        if let name = HTTPField.Name(SyncProtocolVersion.header) { request.headerFields[name] = String(SyncProtocolVersion.current) }
        return try await next(request, body, baseURL)
    }
}

/// The server's clock as its answers tell it (HTTP `Date`, to the second).
final class ServerTime: Sendable {
    private let latest = Mutex<Date?>(nil)
    var now: Date? { latest.withLock { $0 } }
    func record(_ date: Date) { latest.withLock { $0 = date } }
}

/// Reads the `Date` of every answer into `ServerTime`.
struct ServerClock: ClientMiddleware {
    let time: ServerTime

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, body) = try await next(request, body, baseURL)
        if let text = response.headerFields[.date], let date = Self.date(text) { time.record(date) }
        return (response, body)
    }

    /// An HTTP date, "Tue, 24 Nov 2026 02:40:00 GMT".
    static func date(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
