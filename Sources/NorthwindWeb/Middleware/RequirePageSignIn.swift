import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind
import NorthwindStore
import Synchronization

/// Pages need a signed-in employee: anyone else is sent to the sign-in page and brought back afterwards.
struct RequirePageSignIn: RouterMiddleware {
    typealias Context = WebContext

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        guard context.identity != nil else {
            let target = request.method == .get ? request.uri.description : "/"
            let query = "next=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")
            return Response.redirect(to: "/signin?" + query, type: .found)
        }
        return try await next(request, context)
    }
}
