import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle

public enum WebApp {
    /// The Hummingbird application serving pages, `/api/v1`, `/api/openapi.json`, `/events` and `/static`, with
    /// `services` running beside it (shop sync). Running it (`runService()`) stops gracefully on SIGINT and SIGTERM.
    /// `settings` are kept current while it runs; without them, the app reads the store's settings with
    /// `options.policy` as the command line's manager titles.
    public static func build(
        backoffice: Backoffice,
        options: WebOptions,
        settings: Settings? = nil,
        logger: Logger? = nil,
        services: [any Service] = [],
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        async throws -> some ApplicationProtocol
    {
        let environment = try await environment(backoffice: backoffice, options: options, settings: settings)
        let router = try buildRouter(environment)
        var log = logger ?? Logger(label: "northwind.web")
        if logger == nil { log.logLevel = .info }
        return Application(
            router: router,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "Northwind"),
            services: [FeedService(feed: environment.feed), SettingsService(settings: environment.settings, feed: environment.feed)] + services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? options.port) },
            logger: log
        )
    }

    /// What every route shares: the templates, the change feed, the response cache and the sign-in throttle.
    static func environment(backoffice: Backoffice, options: WebOptions, settings: Settings? = nil) async throws -> WebEnvironment {
        let feed = try ChangeFeed(store: backoffice.store, pollInterval: options.pollInterval)
        let commandLine =
            options.policy.managerTitles == AccessPolicy.defaultManagerTitles
            ? [:] : ["session.managerTitles": options.policy.managerTitles.sorted().joined(separator: "; ")]
        let resolved: Settings
        if let settings {
            resolved = settings
        } else {
            resolved = try await Settings(sources: SettingsSources(commandLine: commandLine), backoffice: backoffice)
        }
        return WebEnvironment(
            backoffice: backoffice,
            options: options,
            templates: try await loadTemplates(),
            feed: feed,
            cache: ResponseCache(feed: feed),
            throttle: SignInThrottle(),
            settings: resolved,
            firstRunPending: FirstRunFlag(options.firstRun == nil ? false : try await backoffice.setup.state().pending)
        )
    }

    // guide: begin build-router
    static func buildRouter(_ environment: WebEnvironment) throws -> Router<WebContext> {
        // HEAD answers wherever GET does, with GET's headers and no body.
        let router = Router(context: WebContext.self, options: .autoGenerateHeadEndpoints)
        // Requests by route and status, and their latency, for /metrics.
        router.add(middleware: MetricsMiddleware())
        // Pages never load anything from elsewhere, nor post anywhere else, so the policy can say so.
        router.add(
            middleware: ContentSecurityMiddleware(contentSecurityPolicy: [
                .defaultSrc(.self), .imgSrc(.self, .scheme(.init(rawValue: "data:"))), .formAction(.self), .frameAncestors(.none),
            ])
        )
        // Every request at debug level: raising `log.level` to debug shows them at once.
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: ErrorResponses(env: environment))
        router.add(middleware: TokenAuthenticator(backoffice: environment.backoffice))
        // Until the first run is done, every page leads to it.
        router.add(middleware: FirstRunGate(pending: environment.firstRunPending))
        StaticFiles.register(on: router)
        ShopOperations(environment).register(on: router)
        FirstRunPage(environment).register(on: router)
        try APIHandler(environment).register(on: router)
        PageRoutes(environment).register(on: router)
        MethodNotAllowed.register(on: router)
        return router
    }
    // guide: end build-router

    static func loadTemplates() async throws -> MustacheLibrary {
        guard let directory = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw NorthwindError.storeUnavailable("The web templates are missing from the installation.")
        }
        return try await MustacheLibrary(directory: directory.path)
    }
}
