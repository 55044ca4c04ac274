import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime
import SyncAPI
import SyncProtocol

/// Before the generated code: the protocol version, the body's size, the caller's credential and rate; after it,
/// every error as the protocol's error body with its status. Nothing a client sends yields a 5xx.
struct SyncGate: RouterMiddleware {
    typealias Context = SyncRequestContext
    let service: SyncService
    let throttle: Throttle

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Health, readiness and metrics are for the machine's operators, not installations: no credential.
        if SyncOperations.paths.contains(request.uri.path) { return try await next(request, context) }
        var request = request
        if let allowed = Self.allowedMethods(request.uri.path), !allowed.contains(request.method), request.method != .head {
            return Self.methodNotAllowed(allowed)
        }
        do {
            try checkVersion(request)
            let body = try await collect(&request)
            var caller: Installation? = nil
            if request.uri.path != "/sync/v1/enroll" && request.uri.path != "/sync/v1/enroll/check" {
                caller = try await authenticate(request)
            }
            let user = try Self.user(request)
            return try await SyncRequest.$caller.withValue(caller) {
                try await SyncRequest.$user.withValue(user) {
                    try await SyncRequest.$bodySize.withValue(body?.readableBytes ?? 0) { try await next(request, context) }
                }
            }
        } catch {
            return Self.response(for: Self.syncError(error, logger: context.logger))
        }
    }

    /// The user a `Sync-User` header names: 1 to 64 lowercase letters, digits, '.', '_', '@' or '-'.
    static func user(_ request: Request) throws(SyncError) -> String? {
        guard let name = HTTPField.Name(SyncLimits.userHeader), let user = request.headers[name] else { return nil }
        guard user.wholeMatch(of: /[a-z0-9][a-z0-9._@-]{0,63}/) != nil else {
            throw SyncError(.badRequest, "\(SyncLimits.userHeader) names a user in 1 to 64 lowercase letters, digits, '.', '_', '@' or '-'")
        }
        return user
    }

    /// The methods a protocol path takes, or nil when the path is none of the protocol's. Before the router, so by
    /// the path's shape; `SyncContractTests` hold it to openapi.yaml's paths.
    static func allowedMethods(_ path: String) -> [HTTPRequest.Method]? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].isEmpty, parts[1] == "sync", parts[2] == "v1" else { return nil }
        switch parts.count {
        case 4 where parts[3] == "enroll": return [.post]
        case 5 where parts[3] == "enroll" && parts[4] == "check": return [.post]
        case 5 where parts[4] == "schema": return [.get, .put]
        case 5 where parts[4] == "credential": return [.post]
        case 6 where parts[4] == "assets": return parts[5] == "upload" ? [.post] : [.get, .put]
        case 6 where ["shared", "private"].contains(parts[4]) && parts[5] == "events": return [.get]
        case 7 where ["shared", "private"].contains(parts[4]): return [.post]
        default: return nil
        }
    }

    static func methodNotAllowed(_ allowed: [HTTPRequest.Method]) -> Response {
        let methods = allowed.map(\.rawValue).joined(separator: ", ")
        var response = response(for: SyncError(.badRequest, "this endpoint takes \(methods)"))
        response.status = .methodNotAllowed
        response.headers[.allow] = methods
        return response
    }

    private func checkVersion(_ request: Request) throws(SyncError) {
        guard let name = HTTPField.Name(SyncProtocolVersion.header), let text = request.headers[name] else { return }
        guard let version = Int(text), version == SyncProtocolVersion.current else {
            throw SyncError(
                .incompatibleVersion,
                "this server speaks sync protocol \(SyncProtocolVersion.current), and the client sent \(text); update the client"
            )
        }
    }

    /// Reads the body whole, up to the request limit (an asset's, for an asset upload), so its size is known
    /// before decoding; nil for a POST without one, which reads as `{}`.
    private func collect(_ request: inout Request) async throws -> ByteBuffer? {
        let limit = request.method == .put ? SyncLimits.bytesPerAsset : SyncLimits.bytesPerRequest
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw SyncError(.limitExceeded, "the request body has \(length) bytes. " + SyncLimits.summary)
        }
        do {
            let body = try await request.collectBody(upTo: limit)
            // A POST with no body at all (curl -X POST) means "no options", as `{}` does.
            if body.readableBytes == 0 && request.method == .post && request.headers[.contentType] == nil {
                var head = request.head
                head.headerFields[.contentType] = "application/json"
                request = Request(head: head, body: .init(buffer: ByteBuffer(string: "{}")))
                return nil
            }
            return body
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw SyncError(.limitExceeded, "the request body is over \(limit) bytes. " + SyncLimits.summary)
        } catch is NIOTooManyBytesError {
            // A chunked body (no Content-Length) past the limit.
            throw SyncError(.limitExceeded, "the request body is over \(limit) bytes. " + SyncLimits.summary)
        }
    }

    private func authenticate(_ request: Request) async throws(SyncError) -> Installation {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw SyncError(.authenticationFailed, "send Authorization: Bearer CREDENTIAL, the credential enrolment gave this installation")
        }
        let installation = try await service.authenticate(credential: String(header.dropFirst(7)))
        if let wait = throttle.take(installation.siteCode + "@" + installation.container) {
            throw SyncError(.throttled, "too many requests from \(installation.siteCode); wait \(wait) s", retryAfter: wait)
        }
        return installation
    }

    /// Whatever failed, as the protocol's error.
    static func syncError(_ error: any Error, logger: Logger) -> SyncError {
        switch error {
        case let error as SyncError:
            return error
        case let error as ServerError:
            if let inner = error.underlyingError as? SyncError { return inner }
            if let decoding = error.underlyingError as? DecodingError { return SyncError(.badRequest, describe(decoding)) }
            if let http = error.underlyingError as? any HTTPResponseError, http.status.code < 500 {
                return SyncError(.badRequest, "the request is not one this server understands: \(error.causeDescription)")
            }
            if error.underlyingError is any HTTPResponseConvertible {
                return SyncError(.badRequest, "the request is not one this server understands: \(error.causeDescription)")
            }
            logger.error("sync request failed: \(String(describing: error))")
            return SyncError(.internalError, "the sync server failed unexpectedly; nothing was changed")
        case let error as DecodingError:
            return SyncError(.badRequest, describe(error))
        case let error as HTTPError where error.status.code < 500:
            return error.status == .notFound
                ? SyncError(.notFound, "no such endpoint; docs/sync.md lists them")
                : SyncError(.badRequest, error.body ?? error.status.reasonPhrase)
        default:
            logger.error("sync request failed: \(String(describing: error))")
            return SyncError(.internalError, "the sync server failed unexpectedly; nothing was changed")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "the body" : keys.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)) is missing the field '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "the body is not valid JSON for this request"
        }
    }

    static func response(for error: SyncError) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if let wait = error.retryAfter { headers[.retryAfter] = String(wait) }
        let data = (try? encoder.encode(error)) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: error.httpStatus),
            headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
