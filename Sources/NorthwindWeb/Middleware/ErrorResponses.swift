import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle

/// Every response carries the security headers, errors included: Hummingbird's `ContentSecurityMiddleware`, outside
/// this one, adds them only to a response. So an error that no route's own middleware turned into a response (the
/// router's 404, a 405, a static file, an oversized body) becomes one here: problem details under /api, the error
/// page elsewhere. It also sets the one header that middleware does not, the referrer policy.
struct ErrorResponses: RouterMiddleware {
    typealias Context = WebContext
    let env: WebEnvironment

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let problem = Problem.from(error, logging: request, context)
            response =
                request.uri.path.hasPrefix("/api/")
                ? problem.response()
                : PageRoutes(env).render(
                    "error",
                    ErrorPage(title: problem.title, detail: problem.detail),
                    status: problem.httpStatus,
                    context: context
                )
            if let allow = (error as? WebError)?.allow { response.headers[.allow] = allow }
        }
        response.headers[.referrerPolicy] = "same-origin"
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
