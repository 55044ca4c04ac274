import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// The sign-in form.
struct SignInPage: PageModel {
    var next: String
    var login: String
    var signinToken: String
    var error: String?
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func signInPage(_ request: Request, context: WebContext) async throws -> Response {
        signInForm(next: Self.safeNext(request.query("next")), login: "", error: nil, status: .ok, context: context)
    }

    /// The sign-in form with a fresh double-submit token (see `SignInToken`).
    func signInForm(next: String, login: String, error: String?, status: HTTPResponse.Status, context: WebContext) -> Response {
        let token = SignInToken.make()
        let model = SignInPage(next: next, login: login, signinToken: token, error: error)
        var response = render("signin", model, status: status, context: context)
        response.setCookie(SignInToken.cookie(token, secure: env.options.secureCookies))
        return response
    }

    @Sendable func signIn(_ request: Request, context: WebContext) async throws -> Response {
        var request = request
        let form = FormData(String(buffer: try await request.collectBody(upTo: 64 * 1024)))
        let next = Self.safeNext(form["next"])
        let login = form["login"] ?? ""
        guard SignInToken.matches(form: form["_csrf"], cookie: request.cookies[SignInToken.cookieName]?.value) else {
            return signInForm(
                next: next,
                login: login,
                error: "This sign-in form had expired. Please sign in again.",
                status: .forbidden,
                context: context
            )
        }
        if let wait = env.throttle.wait(for: login) {
            let minutes = max(1, Int((wait.components.seconds + 59) / 60))
            return signInForm(
                next: next,
                login: login,
                error: "Too many wrong passwords for \(login). "
                    + "Try again in \(minutes) minute\(minutes == 1 ? "" : "s").",
                status: .tooManyRequests,
                context: context
            )
        }
        do {
            let hours = Int(env.setting("session.lifetimeHours")) ?? 168
            let (token, signedIn) = try await backoffice.accounts.signIn(login: login, password: form["password"] ?? "", lifetimeHours: hours)
            env.throttle.succeeded(login)
            // Nowhere in particular to go back to: the page this person chose to start on.
            let start =
                next == "/"
                ? Self.startPage(env.setting("display.startPage", user: signedIn.login), isManager: env.policy.isManager(signedIn.employee)) : next
            var response = Response.redirect(to: start, type: .found)
            response.setCookie(SessionCookie.make(token: token, secure: env.options.secureCookies, lifetimeHours: hours))
            response.setCookie(SignInToken.cookie("", secure: env.options.secureCookies))
            return response
        } catch {
            env.throttle.failed(login)
            return signInForm(next: next, login: login, error: error.description, status: .unauthorized, context: context)
        }
    }

    @Sendable func signOut(_ request: Request, context: WebContext) async throws -> Response {
        if let token = request.cookies[SessionCookie.name]?.value {
            try await backoffice.accounts.signOut(token: token)
        }
        var response = Response.redirect(to: "/signin", type: .found)
        response.setCookie(SessionCookie.cleared(secure: env.options.secureCookies))
        return response
    }

    /// Where `display.startPage` lands; reports only for a manager, who may read them.
    static func startPage(_ choice: String, isManager: Bool) -> String {
        switch choice {
        case "products": "/products"
        case "orders": "/orders"
        case "customers": "/customers"
        case "reports" where isManager: "/reports"
        default: "/"
        }
    }

    /// Only a path on this site, so a crafted link cannot bounce a user elsewhere after signing in: one leading
    /// slash, then printable ASCII without a backslash. Browsers drop tabs and line breaks from a URL and read "\\" as
    /// "/", which is how "/\t/evil.example" became "//evil.example", another origin.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"),
            next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" })
        else { return "/" }
        return next
    }
}
