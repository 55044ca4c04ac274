import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle

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

    static let openAPI: Data = {
        Bundle.module.url(forResource: "openapi", withExtension: "json").flatMap { try? Data(contentsOf: $0) } ?? Data()
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
