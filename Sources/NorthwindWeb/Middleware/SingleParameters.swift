import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Every API parameter is one value: given twice, which one counts would be a guess, so neither does.
struct SingleParameters: RouterMiddleware {
    typealias Context = WebContext
    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var seen = Set<Substring>()
        let repeated = request.uri.queryParameters.filter { !seen.insert($0.key).inserted }.map { String($0.key) }
        guard repeated.isEmpty else {
            throw NorthwindError.invalid(Set(repeated).sorted().map { .init($0, "must be given once") })
        }
        return try await next(request, context)
    }
}
