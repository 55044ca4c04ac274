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
        Cookie(
            name: name,
            value: token,
            maxAge: Int(Backoffice.sessionLifetime),
            path: "/",
            secure: secure,
            httpOnly: true,
            sameSite: .lax
        )
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
/// `X-CSRF-Token` header (scripts, and any upload) or the `_csrf` field of a url-encoded form. One middleware on the
/// pages and the API checks every request that is not GET, HEAD or OPTIONS, before any handler runs, so no route
/// can forget it, whatever decodes its body. Bearer tokens are not sent by browsers on their own, so API clients
/// need none.
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

extension HTTPField.Name {
    static let csrfToken = HTTPField.Name("X-CSRF-Token")!
}

/// The sign-in form has no session to carry a CSRF token yet, so it uses a double submit: the page sets a random
/// token in a strict cookie and in a hidden field, and a sign-in counts only when the two agree. Another site can
/// make a browser post the form, but cannot read or set the cookie, so it cannot sign anyone in to its own account.
enum SignInToken {
    static let cookieName = "northwind_signin"

    static func make() -> String { Backoffice.randomToken(byteCount: 24) }

    static func cookie(_ token: String, secure: Bool) -> Cookie {
        Cookie(
            name: cookieName,
            value: token,
            maxAge: token.isEmpty ? 0 : 3600,
            path: "/signin",
            secure: secure,
            httpOnly: true,
            sameSite: .strict
        )
    }

    static func matches(form: String?, cookie: String?) -> Bool {
        guard let form, let cookie, !form.isEmpty else { return false }
        return form == cookie
    }
}

/// Slows down password guessing: after `limit` wrong passwords for one login within `window`, that login is refused
/// until the oldest failure leaves the window. A right password clears its record.
final class SignInThrottle: Sendable {
    let limit: Int
    let window: Duration
    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])

    init(limit: Int = 5, window: Duration = .seconds(15 * 60)) {
        self.limit = limit
        self.window = window
    }

    /// How long `login` must wait before trying again, or nil when it may try now.
    func wait(for login: String, now: ContinuousClock.Instant = .now) -> Duration? {
        failures.withLock { failures in
            let key = login.lowercased()
            let recent = (failures[key] ?? []).filter { now - $0 < window }
            failures[key] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return window - (now - oldest)
        }
    }

    func failed(_ login: String, now: ContinuousClock.Instant = .now) {
        failures.withLock { failures in
            var recent = (failures[login.lowercased()] ?? []).filter { now - $0 < window }
            recent.append(now)
            // Bound memory however many logins are tried: keep only what the limit needs.
            failures[login.lowercased()] = Array(recent.suffix(limit))
            if failures.count > 10_000 { failures = failures.filter { now - ($0.value.last ?? now) < window } }
        }
    }

    func succeeded(_ login: String) {
        failures.withLock { _ = $0.removeValue(forKey: login.lowercased()) }
    }
}
