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
    public var policy: AccessPolicy
    /// Mark the session cookie Secure. Browsers accept Secure cookies over plain HTTP on loopback only, so a server
    /// reached over plain HTTP on a LAN needs this off (behind TLS, leave it on).
    public var secureCookies: Bool
    /// How often the change feed looks for writes made by other processes.
    public var pollInterval: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        policy: AccessPolicy = AccessPolicy(),
        secureCookies: Bool = true,
        pollInterval: Duration = .milliseconds(250)
    ) {
        self.host = host
        self.port = port
        self.policy = policy
        self.secureCookies = secureCookies
        self.pollInterval = pollInterval
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
}

public enum WebApp {
    /// The Hummingbird application serving pages, `/api/v1`, `/api/openapi.json`, `/events` and `/static`.
    /// Running it (`runService()`) stops gracefully on SIGINT and SIGTERM.
    public static func build(
        backoffice: Backoffice,
        options: WebOptions,
        logger: Logger? = nil,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        async throws -> some ApplicationProtocol
    {
        let environment = try await environment(backoffice: backoffice, options: options)
        let router = buildRouter(environment)
        var log = logger ?? Logger(label: "northwind.web")
        if logger == nil { log.logLevel = .info }
        return Application(
            router: router,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "Northwind"),
            services: [FeedService(feed: environment.feed)],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? options.port) },
            logger: log
        )
    }

    /// What every route shares: the templates, the change feed, the response cache and the sign-in throttle.
    static func environment(backoffice: Backoffice, options: WebOptions) async throws -> WebEnvironment {
        let feed = try ChangeFeed(store: backoffice.store, pollInterval: options.pollInterval)
        return WebEnvironment(
            backoffice: backoffice,
            options: options,
            templates: try await loadTemplates(),
            feed: feed,
            cache: ResponseCache(feed: feed),
            throttle: SignInThrottle()
        )
    }

    static func buildRouter(_ environment: WebEnvironment) -> Router<WebContext> {
        // HEAD answers wherever GET does, with GET's headers and no body.
        let router = Router(context: WebContext.self, options: .autoGenerateHeadEndpoints)
        // Pages never load anything from elsewhere, nor post anywhere else, so the policy can say so.
        router.add(
            middleware: ContentSecurityMiddleware(contentSecurityPolicy: [
                .defaultSrc(.self), .imgSrc(.self, .scheme(.init(rawValue: "data:"))), .formAction(.self), .frameAncestors(.none),
            ])
        )
        router.add(middleware: ErrorResponses(env: environment))
        router.add(middleware: TokenAuthenticator(backoffice: environment.backoffice))
        StaticFiles.register(on: router)
        APIRoutes(environment).register(on: router.group("api"))
        PageRoutes(environment).register(on: router)
        MethodNotAllowed.register(on: router)
        return router
    }

    static func loadTemplates() async throws -> MustacheLibrary {
        guard let directory = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw NorthwindError.storeUnavailable("The web templates are missing from the installation.")
        }
        return try await MustacheLibrary(directory: directory.path)
    }
}

/// Ends the change feed's subscriptions when the server shuts down, so open event streams close.
struct FeedService: Service {
    let feed: ChangeFeed
    func run() async throws {
        try? await gracefulShutdown()
        feed.close()
    }
}

/// Every response carries the security headers, errors included: Hummingbird's `ContentSecurityMiddleware`, outside
/// this one, adds them only to a response. So an error that no route's own middleware turned into a response (the
/// router's 404, a 405, a static file, an oversized body) becomes one here: problem details under /api, the error
/// page elsewhere. It also sets the one header that middleware does not, the referrer policy.
struct ErrorResponses: RouterMiddleware {
    typealias Context = WebContext
    let env: WebEnvironment

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let problem = Problem.from(error, logging: request, context)
            response =
                request.uri.path.hasPrefix("/api/")
                ? problem.response()
                : PageRoutes(env).render(
                    "error",
                    ["title": problem.title, "detail": problem.detail],
                    status: problem.httpStatus,
                    context: context
                )
            if let allow = (error as? WebError)?.allow { response.headers[.allow] = allow }
        }
        response.headers[.referrerPolicy] = "same-origin"
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}

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

/// The stylesheet, the script and the OpenAPI document, from the module's resources, cached in memory.
enum StaticFiles {
    static let files: [String: (type: String, data: Data)] = {
        var files: [String: (String, Data)] = [:]
        for (name, type) in [
            ("app.css", "text/css; charset=utf-8"), ("app.js", "text/javascript; charset=utf-8"),
            ("favicon.svg", "image/svg+xml"),
        ] {
            if let url = Bundle.module.url(forResource: "Static/" + name, withExtension: nil),
                let data = try? Data(contentsOf: url)
            {
                files[name] = (type, data)
            }
        }
        return files
    }()

    static let openAPI: Data = {
        Bundle.module.url(forResource: "openapi", withExtension: "json").flatMap { try? Data(contentsOf: $0) } ?? Data()
    }()

    static func register(on router: Router<WebContext>) {
        router.get("static/:name") { _, context -> Response in
            guard let name = context.parameters.get("name"), let file = files[name] else {
                throw WebError.notFound("No such file.")
            }
            var headers = HTTPFields()
            headers[.contentType] = file.type
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.data)))
        }
        router.get("api/openapi.json") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
    }
}
