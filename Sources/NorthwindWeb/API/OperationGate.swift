import Foundation
import HTTPTypes
import Hummingbird
import Northwind
import NorthwindStore
import OpenAPIRuntime

/// The Hummingbird request context of the API call being handled, for the generated handlers, which see only the
/// OpenAPI input.
enum APIRequest {
    @TaskLocal static var context: WebContext?
    /// The path with its query, as sent: what the answer cache keys on.
    @TaskLocal static var path: String?

    static func signedIn() throws(WebError) -> SignedIn {
        guard let context else { throw .unauthorized() }
        return try context.requireSignIn()
    }

    /// Binds the context for the rest of the request.
    struct Binding: RouterMiddleware {
        typealias Context = WebContext
        func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
            try await APIRequest.$context.withValue(context) { try await next(request, context) }
        }
    }
}

/// What happens to an API call before the generated code reads it, so that a client learns the most useful thing
/// first: who may do it (403 before any 400), whether the address names a record (an id that is no number is a
/// 404), and whether the body is strict JSON of a size we take (415, 413, 400). Every rule here comes from the
/// contract or holds for every operation. One shortcut: a plain product search is answered by its handler's own
/// function (`APIHandler.searchAnswer`) before the generated code parses it.
struct OperationGate: ServerMiddleware {
    /// Who is a manager as `session.managerTitles` says now: asked at each request, so a change applies at once.
    let policy: @Sendable () -> AccessPolicy
    /// The product search's answer for `q`, `limit` and the path as sent.
    let searchShortcut: @Sendable (String, Int?, String) throws -> ByteBuffer

    /// Operations for managers only, and what the refusal says they tried to do: `x-managers-only` in openapi.yaml.
    static var managersOnly: [String: String] { get throws { try Contract.document.get().managersOnly } }

    /// Operations whose body is JSON: those with a `requestBody` in openapi.yaml, so that a new operation is strict
    /// the day it is written.
    static var takesBody: Set<String> { get throws { try Contract.document.get().takesBody } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let context = APIRequest.context else { throw WebError.unauthorized() }
        if let action = try Self.managersOnly[operationID] { _ = try context.requireManager(policy(), to: action) }
        if let id = metadata.pathParameters["id"], Int64(id) == nil {
            throw WebError.notFound("That address names no record: ids are whole numbers.")
        }
        // Every answer is JSON (a report's CSV is asked for with format=csv), whatever Accept says.
        var request = request
        request.headerFields[.accept] = nil
        if try Self.takesBody.contains(operationID) {
            let bytes = try await Self.strictJSON(request, body, upTo: context.maxUploadSize)
            return try await next(request, HTTPBody(bytes), metadata)
        }
        if operationID == Operations.SearchProducts.id, let path = request.path, let search = ProductSearchJSON.parameters(path) {
            let head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json; charset=utf-8"])
            return (head, HTTPBody(try searchShortcut(search.text, search.limit, path).readableBytesView))
        }
        do {
            return try await APIRequest.$path.withValue(request.path) { try await next(request, body, metadata) }
        } catch let error as ServerError where error.operationInput == nil {
            // The generated code could not read a parameter as the document says: a field to name, as a 422.
            let missing = "Missing required query parameter named: "
            if error.causeDescription.hasPrefix(missing) {
                throw NorthwindError.invalid(String(error.causeDescription.dropFirst(missing.count)), "is required")
            }
            guard case let decoding as DecodingError = error.underlyingError else { throw error }
            throw NorthwindError.invalid(Self.suspects(decoding, in: request, operationID: operationID))
        }
    }

    /// The generated code does not say which parameter it could not read, so the document's types find it.
    static func suspects(_ error: DecodingError, in request: HTTPRequest, operationID: String) -> [NorthwindError.FieldError] {
        let query = request.path?.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        let items = query.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (name: String(parts[0]), value: parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "" : "")
        }
        let types = (try? Contract.document.get().queryParameters[operationID]) ?? [:]
        let found = items.compactMap { item in types[item.name]?.refuses(item.value).map { NorthwindError.FieldError(item.name, $0) } }
        return found.isEmpty ? [.init("query", "is not what the document gives: \(error)")] : found
    }

    /// The body, checked to be strict JSON (see `StrictJSON`) and sent as such.
    static func strictJSON(_ request: HTTPRequest, _ body: HTTPBody?, upTo limit: Int) async throws -> [UInt8] {
        guard request.headerFields[.contentType].map({ $0.lowercased().hasPrefix("application/json") }) == true else {
            throw WebError(
                status: .unsupportedMediaType,
                title: "Unsupported media type",
                detail: "Send the body as JSON, with 'Content-Type: application/json'."
            )
        }
        let bytes = try await collect(body, upTo: limit)
        try StrictJSON.validate(bytes)
        return bytes
    }

    /// All of `body`, refused with a 413 past `limit` bytes, before they are all read.
    static func collect(_ body: HTTPBody?, upTo limit: Int) async throws -> [UInt8] {
        guard let body else { return [] }
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard bytes.count + chunk.count <= limit else { throw HTTPError(.contentTooLarge) }
            bytes += chunk
        }
        return bytes
    }
}

/// What the gate reads from openapi.yaml, by operation: the query parameters' types (to name the one the generated
/// code could not read), which operations take a body, and which are managers' only.
struct Contract: Decodable {
    struct Schema: Decodable {
        var type: String?
        var `enum`: [String]?

        /// Why `text` is not a value of this schema, or nil when it is.
        func refuses(_ text: String) -> String? {
            if let options = self.enum { return options.contains(text) ? nil : "must be one of \(options.joined(separator: ", "))" }
            switch type {
            case "integer": return Int(text) == nil ? "must be a whole number" : nil
            case "boolean": return text == "true" || text == "false" ? nil : "must be true or false"
            default: return nil
            }
        }
    }
    struct Parameter: Decodable {
        var name: String
        var `in`: String
        var schema: Schema
    }
    struct RequestBody: Decodable {}
    struct Operation: Decodable {
        var operationId: String?
        var parameters: [Parameter]?
        var requestBody: RequestBody?
        var managersOnly: String?
        enum CodingKeys: String, CodingKey {
            case operationId, parameters, requestBody
            case managersOnly = "x-managers-only"
        }
    }
    struct PathItem: Decodable {
        var operations: [Operation] = []
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            for key in container.allKeys where key.stringValue != "parameters" {
                operations.append(try container.decode(Operation.self, forKey: key))
            }
        }
    }
    var paths: [String: PathItem]

    struct Table: Sendable {
        var queryParameters: [String: [String: Schema]] = [:]
        var takesBody: Set<String> = []
        var managersOnly: [String: String] = [:]
    }

    /// Read once. A document that does not parse, or names no managers' operation, is an error: every API request
    /// fails, and `APIHandler.register` stops the server at its start. An empty table would let every signed-in
    /// user do what only managers may.
    static let document: Result<Table, NorthwindError> = {
        guard let parsed = try? JSONDecoder().decode(Contract.self, from: StaticFiles.openAPI) else {
            return .failure(.invalidState("The API's contract (openapi.yaml) is missing or does not parse: this build is broken."))
        }
        var table = Table()
        for operation in parsed.paths.values.flatMap(\.operations) {
            guard let id = operation.operationId else { continue }
            for parameter in operation.parameters ?? [] where parameter.in == "query" {
                table.queryParameters[id, default: [:]][parameter.name] = parameter.schema
            }
            if operation.requestBody != nil { table.takesBody.insert(id) }
            if let action = operation.managersOnly { table.managersOnly[id] = action }
        }
        guard !table.managersOnly.isEmpty else {
            return .failure(.invalidState("The API's contract (openapi.yaml) names no managers' operation (x-managers-only): this build is broken."))
        }
        return .success(table)
    }()
}

extension Contract.Schema: Sendable {}
