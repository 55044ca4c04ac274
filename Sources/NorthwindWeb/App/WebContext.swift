import Foundation
import Hummingbird
import HummingbirdAuth
import NIOCore
import Northwind
import NorthwindStore

/// The per-request context: who is signed in, if anyone, and from where the request came.
public struct WebContext: AuthRequestContext, RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: SignedIn?
    /// The caller's address, for `/metrics`, which answers only on this machine.
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        coreContext = .init(source: source)
        identity = nil
        remoteAddress = source.channel.remoteAddress
    }

    /// Forms may carry a product photo or a long description, but nothing larger than this.
    public var maxUploadSize: Int { 4 * 1024 * 1024 }
}

/// A refusal the web layer raises itself: permissions, CSRF and malformed input. Domain failures stay
/// `NorthwindError`; both become problem details (API) or an error page (browser).
struct WebError: Error, Sendable {
    var status: HTTPResponse.Status
    var title: String
    var detail: String
    /// The `Allow` header of a 405.
    var allow: String?

    static func unauthorized() -> WebError {
        WebError(
            status: .unauthorized,
            title: "Sign-in required",
            detail: "Sign in, or send an API token as 'Authorization: Bearer TOKEN' (see `northwind employees token`)."
        )
    }
    static func forbidden(_ detail: String) -> WebError {
        WebError(status: .forbidden, title: "Not allowed", detail: detail)
    }
    static func badRequest(_ detail: String) -> WebError {
        WebError(status: .badRequest, title: "Bad request", detail: detail)
    }
    static func notFound(_ detail: String) -> WebError {
        WebError(status: .notFound, title: "Not found", detail: detail)
    }
    static func methodNotAllowed(_ allowed: [HTTPRequest.Method]) -> WebError {
        let names = allowed.map(\.rawValue).joined(separator: ", ")
        return WebError(
            status: .methodNotAllowed,
            title: "Method not allowed",
            detail: "This address takes \(names).",
            allow: names
        )
    }
}

extension WebContext {
    func requireSignIn() throws(WebError) -> SignedIn {
        guard let identity else { throw .unauthorized() }
        return identity
    }

    /// Managers alone may change the catalogue (products, categories, suppliers).
    func requireManager(_ policy: AccessPolicy, to action: String) throws(WebError) -> SignedIn {
        let signedIn = try requireSignIn()
        guard policy.isManager(signedIn.employee) else {
            let titles = policy.managerTitles.sorted().joined(separator: " or ")
            throw .forbidden(
                "Only managers (\(titles)) may \(action); you are signed in as "
                    + "\(signedIn.displayName) (\(signedIn.employee.title ?? "no title"))."
            )
        }
        return signedIn
    }
}

extension WebContext {
    /// The `:id` in the path. Anything but a whole number names no record, so it is a 404, not a 400.
    func pathID() throws(WebError) -> Int64 {
        guard let text = parameters.get("id"), let id = Int64(text) else {
            throw .notFound("That address names no record: ids are whole numbers.")
        }
        return id
    }

    func pathString(_ name: String) throws(WebError) -> String {
        guard let value = parameters.get(name) else { throw .notFound("That address names no record.") }
        return value
    }
}
