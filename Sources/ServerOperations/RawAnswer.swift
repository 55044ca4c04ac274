import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// An answer whose JSON its handler wrote itself, for the few operations whose answers carry hundreds of items:
/// Foundation's `JSONEncoder`, which the generated code uses for every JSON body, costs several times what writing
/// them directly does (measured with `northwind-sync-bench` and `scripts/search-scaling.sh`). The handler returns its
/// typed answer with an empty stand-in and hands its bytes to `send`; `Middleware` sends them in the stand-in's
/// place. The status, the content type and the route stay the generated code's, so each operation has one handler.
/// A header value the generated code would percent-encode (a download's file name) is handed over the same way.
public enum RawAnswer {
    /// One request's slot for its bytes and headers.
    public final class Exchange: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
        let headers = Mutex(HTTPFields())
        init() {}
    }

    @TaskLocal static var exchange: Exchange?

    /// Returns `standIn` for the generated code to serialise, and keeps `bytes` to be sent instead. Throws when no
    /// `Middleware` serves this request: an empty stand-in must never reach a client.
    public static func send<T>(_ bytes: [UInt8], standIn: T) throws -> T {
        guard let exchange else { throw RawAnswerError() }
        exchange.bytes.withLock { $0 = bytes }
        return standIn
    }

    /// Sends `value` as it is, where the generated code would percent-encode it. Throws as `send` does.
    public static func setHeader(_ name: HTTPField.Name, _ value: String) throws {
        guard let exchange else { throw RawAnswerError() }
        exchange.headers.withLock { $0[name] = value }
    }

    /// Installed among the generated server's middlewares: binds a slot, and gives a successful answer the headers
    /// and the body its handler kept there.
    public struct Middleware: ServerMiddleware {
        public init() {}

        public func intercept(
            _ request: HTTPRequest,
            body: HTTPBody?,
            metadata: ServerRequestMetadata,
            operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            let exchange = Exchange()
            var (response, answer) = try await RawAnswer.$exchange.withValue(exchange) { try await next(request, body, metadata) }
            guard response.status.kind == .successful else { return (response, answer) }
            for field in exchange.headers.withLock({ $0 }) { response.headerFields[field.name] = field.value }
            guard let bytes = exchange.bytes.withLock({ $0 }) else { return (response, answer) }
            // The generated code gave the stand-in's length.
            response.headerFields[HTTPField.Name.contentLength] = String(bytes.count)
            return (response, HTTPBody(bytes))
        }
    }
}

/// A handler asked to send raw bytes without `RawAnswer.Middleware` in place: a server built wrongly.
public struct RawAnswerError: Error, CustomStringConvertible {
    public var description: String { "RawAnswer.send was called outside RawAnswer.Middleware: this server is built wrongly" }
}
