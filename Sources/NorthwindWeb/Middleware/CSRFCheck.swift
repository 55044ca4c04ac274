import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind
import NorthwindStore
import Synchronization

/// A browser session must prove each change came from our own page: the session's CSRF token, in the
/// `X-CSRF-Token` header (scripts, and any upload) or the `_csrf` field of a url-encoded form. One middleware on the
/// pages and the API checks every request that is not GET, HEAD or OPTIONS, before any handler runs, so no route
/// can forget it, whatever decodes its body. Bearer tokens are not sent by browsers on their own, so API clients
/// need none.
// guide: begin csrf-check
struct CSRFCheck: RouterMiddleware {
    typealias Context = WebContext

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        let safe: Set<HTTPRequest.Method> = [.get, .head, .options]
        guard !safe.contains(request.method), let identity = context.identity, identity.kind == .session else {
            return try await next(request, context)
        }
        var request = request
        var sent = request.headers[.csrfToken]
        if sent == nil, request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
            // Collecting keeps the body on the request, so the handler reads the same form.
            sent = FormData(String(buffer: try await request.collectBody(upTo: context.maxUploadSize)))["_csrf"]
        }
        guard let sent, sent == identity.csrfToken else {
            throw WebError.forbidden("This change did not come with the page's security token. Reload the page and try again.")
        }
        return try await next(request, context)
    }
}
// guide: end csrf-check

extension HTTPField.Name {
    static let csrfToken = HTTPField.Name("X-CSRF-Token")!
}
