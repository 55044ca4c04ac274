import Foundation
import HTTPTypes
import OpenAPIRuntime
import SyncAPI
import Synchronization

/// The bodies of `records/modify` and `changes/zone`, written and read by the protocol's own JSON code
/// (`ClientBodies.swift` in SyncAPI) rather than by the generated client's `JSONEncoder` and `JSONDecoder`. A call
/// sets the bytes to send and a place for the answer around one request; `Middleware` swaps them in, and hands the
/// generated code a small valid body in place of a successful answer. Error answers pass through untouched.
enum DirectBodies {
    @TaskLocal static var outgoing: Data?
    @TaskLocal static var incoming: Answer?

    /// Where `Middleware` leaves a successful answer's bytes.
    final class Answer: Sendable {
        private let bytes = Mutex<Data?>(nil)

        func keep(_ data: Data) { bytes.withLock { $0 = data } }

        var data: Data? { bytes.withLock { $0 } }
    }

    /// What the generated code decodes instead of the answer, by operation.
    static let placeholders: [String: String] = [
        Operations.ModifyRecords.id: #"{"records":[],"replayed":false}"#,
        Operations.ZoneChanges.id: #"{"zones":[]}"#,
    ]

    struct Middleware: ClientMiddleware {
        func intercept(
            _ request: HTTPRequest,
            body: HTTPBody?,
            baseURL: URL,
            operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            guard let placeholder = placeholders[operationID] else { return try await next(request, body, baseURL) }
            var request = request
            // The generated code measured the body it was given; the length sent is the one swapped in.
            if let outgoing { request.headerFields[.contentLength] = String(outgoing.count) }
            let (response, answer) = try await next(request, outgoing.map { HTTPBody($0) } ?? body, baseURL)
            guard response.status == .ok, let incoming, let answer else { return (response, answer) }
            incoming.keep(Data(try await ArraySlice<UInt8>(collecting: answer, upTo: .max)))
            return (response, HTTPBody(placeholder))
        }
    }

    /// Runs one request with `body` sent as it is, and answers the successful answer's bytes (nil for an error).
    static func exchange<T>(sending body: Data?, _ request: () async throws -> T) async throws -> (output: T, answer: Data?) {
        let answer = Answer()
        let output = try await $outgoing.withValue(body) { try await $incoming.withValue(answer) { try await request() } }
        return (output, answer.data)
    }
}
