import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// API requests without a session or token get 401, never a redirect.
struct RequireAPISignIn: RouterMiddleware {
    typealias Context = WebContext
    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        guard context.identity != nil else { throw WebError.unauthorized() }
        return try await next(request, context)
    }
}
