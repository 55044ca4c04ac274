import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle

/// How the server runs.
public struct WebOptions: Sendable {
    public var host: String
    public var port: Int
    /// The manager titles for an app built without settings (tests); with settings, `session.managerTitles` decides.
    public var policy: AccessPolicy
    /// Mark the session cookie Secure. Browsers accept Secure cookies over plain HTTP on loopback only, so a server
    /// reached over plain HTTP on a LAN needs this off (behind TLS, leave it on).
    public var secureCookies: Bool
    /// How often the change feed looks for writes made by other processes.
    public var pollInterval: Duration
    /// The first-run page (`setup.firstRun`): what it needs from outside the web layer. Nil: no first-run page.
    public var firstRun: FirstRunSupport?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        policy: AccessPolicy = AccessPolicy(),
        secureCookies: Bool = true,
        pollInterval: Duration = .milliseconds(250),
        firstRun: FirstRunSupport? = nil
    ) {
        self.host = host
        self.port = port
        self.policy = policy
        self.secureCookies = secureCookies
        self.pollInterval = pollInterval
        self.firstRun = firstRun
    }
}

/// Everything a route handler needs, shared by the pages and the API.
struct WebEnvironment: Sendable {
    let backoffice: Backoffice
    let options: WebOptions
    let templates: MustacheLibrary
    let feed: ChangeFeed
    let cache: ResponseCache
    let throttle: SignInThrottle
    let settings: Settings
    /// Whether the first run is still to do; set once, when it is done.
    let firstRunPending: FirstRunFlag
    let firstRunBusy = FirstRunBusy()

    /// Who is a manager, as `session.managerTitles` says now.
    var policy: AccessPolicy { AccessPolicy(managerTitles: AccessPolicy.titles(setting("session.managerTitles"))) }
    /// Rows per page in the lists, as `pages.pageSize` says now.
    var pageSize: Int { Int(setting("pages.pageSize")) ?? 25 }

    /// The value that stands for a key of the catalogue, for `login` when it is a user key.
    func setting(_ key: String, user login: String? = nil) -> String {
        (try? settings.value(key, user: login).value) ?? Setting.byKey[key]?.defaultValue ?? ""
    }
}
