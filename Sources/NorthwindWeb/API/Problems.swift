import Foundation
import Hummingbird
import Logging
import Northwind
import NorthwindStore
import OpenAPIRuntime

/// An RFC 9457 problem-details body.
struct Problem: Codable, Sendable {
    var type: String
    var title: String
    var status: Int
    var detail: String
    /// Field-by-field validation messages (422).
    var errors: [NorthwindError.FieldError]?
    /// Lines that stock cannot cover (409 on execute).
    var shortages: [ShortageBody]?

    struct ShortageBody: Codable, Sendable {
        var productID: Int64
        var productName: String
        var ordered: Int
        var inStock: Int
        var short: Int
    }

    init(status: HTTPResponse.Status, title: String, detail: String, type: String = "about:blank") {
        self.type = type
        self.title = title
        self.status = Int(status.code)
        self.detail = detail
    }

    /// Every error a handler can raise, as the status and body a client can act on. Nothing unexpected leaks:
    /// unknown errors become a 500 with a generic message (and are logged by the caller).
    static func from(_ error: any Error) -> Problem {
        switch error {
        case let error as NorthwindError:
            return from(error)
        case let error as ServerError:
            return from(error)
        case let error as WebError:
            return Problem(status: error.status, title: error.title, detail: error.detail)
        case let error as DecodingError:
            return Problem(status: .badRequest, title: "Malformed request body", detail: describe(error))
        case let error as any HTTPResponseError:
            let status = error.status
            let detail = (error as? HTTPError)?.body ?? status.reasonPhrase
            return Problem(status: status, title: status.reasonPhrase, detail: detail)
        default:
            return Problem(
                status: .internalServerError,
                title: "Internal error",
                detail: "The server failed unexpectedly; the store was left as it was."
            )
        }
    }

    /// An error from the generated API code: ours, thrown through it, or its own reading of the request.
    static func from(_ error: ServerError) -> Problem {
        let cause = error.underlyingError
        switch cause {
        case is NorthwindError, is WebError, is any HTTPResponseError, is ServerError:
            return from(cause)
        case let decoding as DecodingError:
            // A query parameter the generator could not read as the document's type is a field to name (422);
            // anything else it could not read is the body.
            let names = Set((error.request.path?.split(separator: "?").dropFirst().first ?? "").split(separator: "&").map { $0.prefix { $0 != "=" } })
            if let key = decodingPath(decoding).first?.stringValue, names.contains(Substring(key)) {
                return from(NorthwindError.invalid(key, "is not a value this parameter takes; /api/openapi.json lists them"))
            }
            return Problem(status: .badRequest, title: "Malformed request body", detail: describe(decoding))
        case let convertible as any HTTPResponseConvertible where convertible.httpStatus.code < 500:
            let status = convertible.httpStatus
            return Problem(status: status, title: status.reasonPhrase, detail: error.causeDescription)
        default:
            return from(cause)
        }
    }

    static func decodingPath(_ error: DecodingError) -> [any CodingKey] {
        switch error {
        case let .keyNotFound(_, context), let .typeMismatch(_, context), let .valueNotFound(_, context), let .dataCorrupted(context):
            return context.codingPath
        @unknown default:
            return []
        }
    }

    static func from(_ error: NorthwindError) -> Problem {
        let base = "https://northwind.example/problems/"
        switch error {
        case .notFound:
            return Problem(status: .notFound, title: "Not found", detail: error.description, type: base + "not-found")
        case let .invalid(fields):
            var problem = Problem(
                status: .unprocessableContent,
                title: "Invalid input",
                detail: error.description,
                type: base + "invalid"
            )
            problem.errors = fields
            return problem
        case .conflict:
            return Problem(status: .conflict, title: "Edit conflict", detail: error.description, type: base + "conflict")
        case .inUse:
            return Problem(status: .conflict, title: "Still in use", detail: error.description, type: base + "in-use")
        case let .insufficientStock(_, shortages):
            var problem = Problem(
                status: .conflict,
                title: "Not enough stock",
                detail: error.description,
                type: base + "insufficient-stock"
            )
            problem.shortages = shortages.map {
                ShortageBody(
                    productID: $0.productID,
                    productName: $0.productName,
                    ordered: $0.ordered,
                    inStock: $0.inStock,
                    short: $0.short
                )
            }
            return problem
        case .invalidState:
            return Problem(
                status: .conflict,
                title: "Not possible now",
                detail: error.description,
                type: base + "invalid-state"
            )
        case .storeUnavailable:
            return Problem(
                status: .serviceUnavailable,
                title: "Store unavailable",
                detail: error.description,
                type: base + "store-unavailable"
            )
        case .importFailed:
            return Problem(
                status: .badRequest,
                title: "Import failed",
                detail: error.description,
                type: base + "import-failed"
            )
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "the body" : keys.joined(separator: ".")
        }
        switch error {
        case let .keyNotFound(key, context):
            return "\(path(context)) is missing the field '\(key.stringValue)'."
        case let .typeMismatch(_, context), let .valueNotFound(_, context), let .dataCorrupted(context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "The body is not valid JSON for this request."
        }
    }

    var httpStatus: HTTPResponse.Status { HTTPResponse.Status(code: status) }

    func response() -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        return Response(status: httpStatus, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension Problem {
    /// The problem for `error`; one the server caused (5xx) is logged with the error's details, which the answer
    /// does not show.
    static func from(_ error: any Error, logging request: Request, _ context: WebContext) -> Problem {
        let problem = from(error)
        if problem.status >= 500 {
            context.logger.error("\(request.method) \(request.uri.path) failed: \(String(reflecting: error))")
        }
        return problem
    }
}
