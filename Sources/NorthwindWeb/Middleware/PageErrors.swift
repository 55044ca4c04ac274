import Foundation
import Hummingbird
import Logging
import Mustache
import Northwind
import NorthwindStore

/// Errors on pages become an error page with the right status; a missing session goes to sign-in.
struct PageErrors: RouterMiddleware {
    typealias Context = WebContext
    let env: WebEnvironment

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let problem = Problem.from(error, logging: request, context)
            return PageRoutes(env).render(
                "error",
                ErrorPage(title: problem.title, detail: problem.detail),
                status: problem.httpStatus,
                context: context
            )
        }
    }
}
