import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind
import NorthwindStore
import Synchronization

enum SessionCookie {
    static let name = "northwind_session"

    /// HTTP-only so scripts cannot read it, SameSite=Lax so other sites cannot post with it, and Secure unless the
    /// server was told it runs behind plain HTTP on a LAN (browsers treat loopback as secure).
    static func make(token: String, secure: Bool, lifetimeHours: Int) -> Cookie {
        Cookie(
            name: name,
            value: token,
            maxAge: lifetimeHours * 3600,
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
