import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle

/// A method that a path does not take gets 405 with the methods it does take (RFC 9110), not a 404 that says the
/// path is not there. Registered last, from the routes the router already has, so no path needs it written twice.
enum MethodNotAllowed {
    static let methods: [HTTPRequest.Method] = [
        .get, .head, .post, .put, .patch, .delete, .options, .trace,
        HTTPRequest.Method("QUERY")!,
    ]

    static func register(on router: Router<WebContext>) {
        for routes in Dictionary(grouping: router.routes, by: \.path.description).values {
            var taken = Set(routes.map(\.method))
            if taken.contains(.get) { taken.insert(.head) }
            let allow = methods.filter(taken.contains)
            for method in methods where !taken.contains(method) {
                router.on(routes[0].path, method: method) { _, _ -> Response in throw WebError.methodNotAllowed(allow) }
            }
        }
    }
}
