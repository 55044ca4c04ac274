import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind
import NorthwindStore
import Synchronization

/// The sign-in form has no session to carry a CSRF token yet, so it uses a double submit: the page sets a random
/// token in a strict cookie and in a hidden field, and a sign-in counts only when the two agree. Another site can
/// make a browser post the form, but cannot read or set the cookie, so it cannot sign anyone in to its own account.
enum SignInToken {
    static let cookieName = "northwind_signin"

    static func make() -> String { Accounts.randomToken(byteCount: 24) }

    /// `path`: the form's own (`/signin`, or `/setup` for the first run, which has no session either).
    static func cookie(_ token: String, secure: Bool, path: String = "/signin") -> Cookie {
        Cookie(
            name: cookieName,
            value: token,
            maxAge: token.isEmpty ? 0 : 3600,
            path: path,
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
