import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind

/// Recognises a browser session cookie or an API bearer token and puts the employee in the context.
struct TokenAuthenticator: AuthenticatorMiddleware {
    typealias Context = WebContext
    let backoffice: Backoffice

    func authenticate(request: Request, context: WebContext) async throws -> SignedIn? {
        if let bearer = request.headers.bearer {
            return try backoffice.authenticate(token: bearer.token, kind: .api)
        }
        if let cookie = request.cookies[SessionCookie.name] {
            return try backoffice.authenticate(token: cookie.value, kind: .session)
        }
        return nil
    }
}

enum SessionCookie {
    static let name = "northwind_session"

    /// HTTP-only so scripts cannot read it, SameSite=Lax so other sites cannot post with it, and Secure unless the
    /// server was told it runs behind plain HTTP on a LAN (browsers treat loopback as secure).
    static func make(token: String, secure: Bool) -> Cookie {
        Cookie(name: name, value: token, maxAge: Int(Backoffice.sessionLifetime), path: "/", secure: secure,
               httpOnly: true, sameSite: .lax)
    }

    static func cleared(secure: Bool) -> Cookie {
        Cookie(name: name, value: "", maxAge: 0, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }
}

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

/// A browser session must prove each change came from our own page: the session's CSRF token, in the
/// `X-CSRF-Token` header (scripts) or the `_csrf` form field (forms, checked where the form is read).
/// Bearer tokens are not sent by browsers on their own, so API clients need none.
struct CSRFCheck: RouterMiddleware {
    typealias Context = WebContext

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        let safe: Set<HTTPRequest.Method> = [.get, .head, .options]
        if !safe.contains(request.method), let identity = context.identity, identity.kind == .session {
            guard let sent = request.headers[.csrfToken], sent == identity.csrfToken else {
                throw WebError.forbidden("This change did not come with the page's security token. Reload the page and try again.")
            }
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let csrfToken = HTTPField.Name("X-CSRF-Token")!
}
