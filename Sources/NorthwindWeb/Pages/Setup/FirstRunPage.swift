import Foundation
import HTTPTypes
import Hummingbird
import Northwind
import NorthwindStore
import ServerOperations
import Synchronization

/// What the first-run page needs from outside the web layer, which knows neither the demo data nor sync.
public struct FirstRunSupport: Sendable {
    /// Fills the (empty) store with the demo data.
    public var loadDemo: @Sendable (Backoffice) async throws -> Void
    /// Joins a company's sync server with an enrolment token (and head office's certificate authority's fingerprint,
    /// or ""), then downloads what the company shares. Its error's description is shown to the person.
    public var joinCompany: @Sendable (Backoffice, _ server: String, _ token: String, _ fingerprint: String) async throws -> Void
    /// Head office, once its first run is done: joins the company's sync server when this machine has one set
    /// up (`sync.server` and `sync.enrolmentToken`), and says how shops join it; nil when none is set up.
    public var joinAsHeadOffice: @Sendable (Backoffice) async throws -> String?
    /// This boot's id (Linux's `boot_id`): the page answers the LAN only during the boot that made the store (or reopened it).
    public var bootID: @Sendable () -> String?
    /// Told once the first run is done (the appliance's console banner follows it).
    public var onDone: @Sendable () -> Void

    public init(
        loadDemo: @escaping @Sendable (Backoffice) async throws -> Void,
        joinCompany: @escaping @Sendable (Backoffice, String, String, String) async throws -> Void,
        joinAsHeadOffice: @escaping @Sendable (Backoffice) async throws -> String? = { _ in nil },
        bootID: @escaping @Sendable () -> String? = { nil },
        onDone: @escaping @Sendable () -> Void = {}
    ) {
        self.loadDemo = loadDemo
        self.joinCompany = joinCompany
        self.joinAsHeadOffice = joinAsHeadOffice
        self.bootID = bootID
        self.onDone = onDone
    }
}

/// Whether the first run is still to do: read once at start, cleared when it is done.
final class FirstRunFlag: Sendable {
    private let pending: Atomic<Bool>
    init(_ pending: Bool) { self.pending = Atomic(pending) }
    var isPending: Bool { pending.load(ordering: .acquiring) }
    func done() { pending.store(false, ordering: .releasing) }
}

/// One first run at a time: two people submitting at once would each join a company, or make a manager.
final class FirstRunBusy: Sendable {
    private let busy = Atomic(false)
    /// Takes the first run for this request; false when another request has it.
    func take() -> Bool { busy.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }
    func release() { busy.store(false, ordering: .releasing) }
}

/// Until the first run is done, every page leads to `/setup` and the API answers 503 saying why. Static files
/// and the operators' probes pass.
struct FirstRunGate: RouterMiddleware {
    typealias Context = WebContext
    let pending: FirstRunFlag

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        guard pending.isPending else { return try await next(request, context) }
        let path = request.uri.path
        if path == "/setup" || path.hasPrefix("/static/") || ["/healthz", "/readyz", "/metrics"].contains(path) {
            return try await next(request, context)
        }
        if path.hasPrefix("/api/") {
            return Problem(
                status: .serviceUnavailable,
                title: "First run pending",
                detail: "This Northwind has no manager yet: finish the first run at /setup in a browser."
            ).response()
        }
        return Response.redirect(to: "/setup", type: .found)
    }
}

/// The form and what it says back.
struct FirstRunModel: PageModel {
    var csrf: String
    var firstName = ""
    var lastName = ""
    var login = ""
    var siteName = ""
    var siteCode = ""
    var server = ""
    var fingerprint = ""
    var headOffice = false
    var shop = false
    var demo = false
    var errors: [NorthwindError.FieldError] = []
    /// Set by `form` (Mustache reads stored properties only).
    var hasFieldErrors = false
    var error: String?
    var me: PageUser?
}

/// Head office's page after its first run: how shops join it.
struct FirstRunDone: PageModel {
    var notes: String
    var me: PageUser?
}

/// The page a new installation greets its owner with (`setup.firstRun`): the first manager, the site's name and
/// code, and what this machine is. It replaces the printed demo sign-in.
struct FirstRunPage {
    let env: WebEnvironment
    var backoffice: Backoffice { env.backoffice }

    init(_ env: WebEnvironment) { self.env = env }

    func register(on router: Router<WebContext>) {
        guard let support = env.options.firstRun else { return }
        router.get("setup") { request, context in try await show(request, context: context, support: support) }
        router.post("setup") { request, context in try await submit(request, context: context, support: support) }
    }

    /// Whether the first run is still to do, read again from the store (someone may have set a password with the
    /// CLI meanwhile); once it is not, every page is released.
    func stillPending() async throws -> Bool {
        guard env.firstRunPending.isPending else { return false }
        if try await backoffice.setup.state().pending { return true }
        env.firstRunPending.done()
        return false
    }

    func show(_ request: Request, context: WebContext, support: FirstRunSupport) async throws -> Response {
        guard try await stillPending() else { return Response.redirect(to: "/signin", type: .found) }
        if let refusal = try await refusedFromTheLAN(request, context: context, support: support) { return refusal }
        return form(FirstRunModel(csrf: ""), status: .ok, context: context)
    }

    func submit(_ request: Request, context: WebContext, support: FirstRunSupport) async throws -> Response {
        guard try await stillPending() else { return Response.redirect(to: "/signin", type: .found) }
        if let refusal = try await refusedFromTheLAN(request, context: context, support: support) { return refusal }
        var request = request
        let fields = FormData(String(buffer: try await request.collectBody(upTo: 64 * 1024)))
        let firstRun = FirstRunForm(
            firstName: fields["firstName"] ?? "",
            lastName: fields["lastName"] ?? "",
            login: (fields["login"] ?? "").trimmingCharacters(in: .whitespaces),
            password: fields["password"] ?? "",
            siteName: fields["siteName"] ?? "",
            siteCode: (fields["siteCode"] ?? "").trimmingCharacters(in: .whitespaces).uppercased(),
            role: fields["role"].flatMap(MachineRole.init(rawValue:)),
            server: (fields["server"] ?? "").trimmingCharacters(in: .whitespaces),
            token: (fields["token"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines),
            fingerprint: (fields["fingerprint"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        )
        var model = FirstRunModel(
            csrf: "",
            firstName: firstRun.firstName,
            lastName: firstRun.lastName,
            login: firstRun.login,
            siteName: firstRun.siteName,
            siteCode: firstRun.siteCode,
            server: firstRun.server,
            fingerprint: firstRun.fingerprint,
            headOffice: firstRun.role == .headOffice,
            shop: firstRun.role == .shop,
            demo: firstRun.role == .demo
        )
        guard SignInToken.matches(form: fields["_csrf"], cookie: request.cookies[SignInToken.cookieName]?.value) else {
            model.error = "This form had expired. Please fill it in again."
            return form(model, status: .forbidden, context: context)
        }
        if fields["password"] != fields["passwordAgain"] {
            model.errors = [.init("passwordAgain", "The two passwords differ.")]
            return form(model, status: .unprocessableContent, context: context)
        }
        let notes: String?
        guard env.firstRunBusy.take() else {
            model.error = "Someone is finishing the first run right now. Wait a moment, then reload this page."
            return form(model, status: .conflict, context: context)
        }
        defer { env.firstRunBusy.release() }
        do {
            try Setup.validate(firstRun)
            notes = try await carryOut(firstRun, support: support)
        } catch let error as NorthwindError {
            if case .invalid(let errors) = error { model.errors = errors } else { model.error = error.description }
            return form(model, status: .unprocessableContent, context: context)
        } catch {
            // Joining: a wrong token, an unreachable server, a company that refuses this store. Nothing was changed.
            model.errors = [.init(firstRun.role == .shop ? "token" : "role", "\(error)")]
            return form(model, status: .unprocessableContent, context: context)
        }
        env.firstRunPending.done()
        support.onDone()
        let hours = Int(env.setting("session.lifetimeHours")) ?? 168
        let (token, _) = try await backoffice.accounts.signIn(login: firstRun.login, password: firstRun.password, lifetimeHours: hours)
        var response =
            notes.map { PageRoutes(env).render("setupdone", FirstRunDone(notes: $0), context: context) } ?? Response.redirect(to: "/", type: .found)
        response.setCookie(SessionCookie.make(token: token, secure: env.options.secureCookies, lifetimeHours: hours))
        response.setCookie(SignInToken.cookie("", secure: env.options.secureCookies, path: "/setup"))
        return response
    }

    /// Does what the form asks, in an order a power cut cannot leave half done: the store is emptied of an earlier
    /// attempt's leftovers first, and the first manager (which ends the first run) is made last, in one transaction.
    /// Returns what head office's owner should read next (how shops join), if anything.
    func carryOut(_ form: FirstRunForm, support: FirstRunSupport) async throws -> String? {
        let title = Self.managerTitle(env.policy)
        switch form.role {
        case .demo:
            try await backoffice.setup.beginAttempt()
            // Before the demo's orders are numbered with it.
            try await backoffice.setup.setSiteCode(form.siteCode)
            try await support.loadDemo(backoffice)
            _ = try await backoffice.setup.complete(form, title: title, keepData: true)
            return nil
        case .shop:
            if let joined = try await backoffice.sync.membership() {
                // An attempt cut short after joining: the same company carries on; another is refused.
                guard URL(string: joined.server)?.host == URL(string: form.server)?.host else {
                    throw NorthwindError.invalid(
                        "server",
                        "This machine has joined \(joined.server) already: give that address, or start over with an empty store (docs/operations.md, \"Starting the first run over\")."
                    )
                }
            } else {
                try await backoffice.setup.beginAttempt()
                try await backoffice.setup.setSiteCode(form.siteCode)
                try await support.joinCompany(backoffice, form.server, form.token, form.fingerprint)
            }
            _ = try await backoffice.setup.complete(form, title: title)
            return nil
        case .headOffice, nil:
            _ = try await backoffice.setup.complete(form, title: title)
            // Head office is set up whether or not its sync server answers now: `serve` joins at its next start.
            do {
                return try await support.joinAsHeadOffice(backoffice)
            } catch {
                return "Head office is set up, but could not join this machine's sync server (\(error)). Join it from the "
                    + "console once it answers: runuser -u northwind -- northwind sync join http://127.0.0.1:8444 TOKEN, with "
                    + "the token in /etc/northwind/head-office.env."
            }
        }
    }

    /// The title the first manager gets: "Sales Manager" when it makes a manager, else the first title that does.
    static func managerTitle(_ policy: AccessPolicy) -> String {
        policy.managerTitles.contains("Sales Manager") ? "Sales Manager" : policy.managerTitles.sorted().first ?? "Sales Manager"
    }

    /// The page answers the LAN (a caller not on this machine, or one a proxy forwarded) only during the boot that
    /// made the store: whoever finishes the first run becomes the manager, so a machine left waiting is not left
    /// open. `northwind setup reopen` on the console opens it again for the current boot.
    func refusedFromTheLAN(_ request: Request, context: WebContext, support: FirstRunSupport) async throws -> Response? {
        guard !OperationsRoutes.isLocal(request, remote: context.remoteAddress) else { return nil }
        // Closed unless this boot is known to be the one that opened it: an unknown boot never opens it.
        let state = try await backoffice.setup.state()
        if let boot = support.bootID(), let open = state.openBoot, open == boot { return nil }
        let page = ErrorPage(
            title: "First run closed to the network",
            detail: "This machine's first run was not finished during the boot that made its store, so it no longer answers "
                + "the network. On its console, as root, run `runuser -u northwind -- northwind setup reopen`, then reload "
                + "this page without restarting the machine (docs/operations.md, \"The first run\")."
        )
        return PageRoutes(env).render("error", page, status: .forbidden, context: context)
    }

    func form(_ model: FirstRunModel, status: HTTPResponse.Status, context: WebContext) -> Response {
        var model = model
        let token = SignInToken.make()
        model.csrf = token
        model.hasFieldErrors = !model.errors.isEmpty
        var response = PageRoutes(env).render("setup", model, status: status, context: context)
        response.setCookie(SignInToken.cookie(token, secure: env.options.secureCookies, path: "/setup"))
        return response
    }
}
