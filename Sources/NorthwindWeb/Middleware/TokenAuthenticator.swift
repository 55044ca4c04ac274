import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind
import NorthwindStore
import Synchronization

/// Recognises a browser session cookie or an API bearer token and puts the employee in the context.
struct TokenAuthenticator: AuthenticatorMiddleware {
    typealias Context = WebContext
    let backoffice: Backoffice

    func authenticate(request: Request, context: WebContext) async throws -> SignedIn? {
        if let bearer = request.headers.bearer {
            return try backoffice.accounts.authenticate(token: bearer.token, kind: .api)
        }
        if let cookie = request.cookies[SessionCookie.name] {
            return try backoffice.accounts.authenticate(token: cookie.value, kind: .session)
        }
        return nil
    }
}
