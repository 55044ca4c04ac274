import Foundation
import Hummingbird
import Logging
import Northwind
import NorthwindStore

/// Turns every error under /api into problem-details JSON, so bad input never surfaces as a bare 500.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = WebContext

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let problem = Problem.from(error, logging: request, context)
            return problem.response()
        }
    }
}
