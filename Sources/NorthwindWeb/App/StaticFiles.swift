import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle
import Yams

/// The stylesheet, the script and the OpenAPI document, from the module's resources, cached in memory.
enum StaticFiles {
    static let files: [String: (type: String, data: Data)] = {
        var files: [String: (String, Data)] = [:]
        for (name, type) in [
            ("app.css", "text/css; charset=utf-8"), ("app.js", "text/javascript; charset=utf-8"),
            ("favicon.svg", "image/svg+xml"),
        ] {
            if let url = Bundle.module.url(forResource: "Static/" + name, withExtension: nil),
                let data = try? Data(contentsOf: url)
            {
                files[name] = (type, data)
            }
        }
        return files
    }()

    /// `openapi.yaml`, the API's contract and its one source, as JSON. Read once; a document that does not parse
    /// is served empty and fails the contract test.
    static let openAPI: Data = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8),
            let document = try? YAMLDecoder().decode(JSONValue.self, from: text)
        else { return Data() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)) ?? Data()
    }()

    static func register(on router: Router<WebContext>) {
        router.get("static/:name") { _, context -> Response in
            guard let name = context.parameters.get("name"), let file = files[name] else {
                throw WebError.notFound("No such file.")
            }
            var headers = HTTPFields()
            headers[.contentType] = file.type
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.data)))
        }
        router.get("api/openapi.json") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
    }
}

/// Any JSON value, typed: how the YAML document becomes JSON without untyped dictionaries.
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .integer(value): try container.encode(value)
        case let .number(value): try container.encode(value)
        case let .string(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }
}
