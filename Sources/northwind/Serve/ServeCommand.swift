import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import NorthwindWeb
import ServerOperations
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the shop-floor web application and the JSON API.",
        discussion: """
            On a store where nobody can sign in yet, prints a one-time demo password for a manager and for a sales \
            representative. A store that has joined a sync server (`northwind sync join`) syncs while it serves: \
            after every change, on every notice from the server, and every --sync-interval seconds. Stops gracefully \
            on Ctrl-C (SIGINT) or SIGTERM.

            The guide to how Northwind is built, layer by layer, with code you can run: docs/guide/README.md in \
            Northwind's source.
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var settingsOptions: SettingsOptions
    // No defaults here: a default would always win over the settings below the command line (docs/settings.md).
    @Option(help: "The address to listen on (server.host; default 127.0.0.1).") var host: String?
    @Option(help: "The port to listen on, 0 picks a free one (server.port; default 8080).") var port: Int?
    @Option(
        name: .customLong("manager-title"),
        help:
            "A job title whose holders may change the catalogue; repeat for several (session.managerTitles; default \"Vice President, Sales\" and \"Sales Manager\")."
    )
    var managerTitles: [String] = []
    @Flag(help: "Send the session cookie over plain HTTP too, for a LAN without TLS (server.secureCookies=false; loopback needs no flag).")
    var insecureCookies = false
    @Option(help: "Seconds between syncs when nothing prompts one, a joined store only (sync.interval; default 60).") var syncInterval: Int?

    /// This command's own options, as the command-line layer of the settings.
    private var commandLine: [String: String] {
        var values: [String: String] = [:]
        if let host { values["server.host"] = host }
        if let port { values["server.port"] = String(port) }
        if !managerTitles.isEmpty { values["session.managerTitles"] = managerTitles.joined(separator: "; ") }
        if insecureCookies { values["server.secureCookies"] = "false" }
        if let syncInterval { values["sync.interval"] = String(syncInterval) }
        return values
    }

    func run() async throws {
        let sources = try settingsOptions.sources(commandLine: commandLine)
        // The first-run page decides what a new store holds, so the store is not seeded when it is on.
        let firstRun = try await storeOptions.locate(sources).1.value("setup.firstRun").value == "true"
        let (store, settings) = try await storeOptions.open(sources, seedIfCreated: !firstRun)
        var opened = store
        // A value on the command line that breaks a rule is an error here, not a warning: the operator is at the terminal.
        if let problem = settings.problems(in: .commandLine).first { throw ValidationError(problem + ".") }
        let level = LiveLogLevel(Logger.Level(rawValue: try settings.value("log.level").value) ?? .info)
        LoggingSystem.bootstrap { LiveLevelLogHandler(label: $0, level: level) }
        // Empty: the address the store joined with.
        let syncServer = try settings.value("sync.server").value
        // A store waiting for its first run joins there (head office), once its site code is chosen.
        let firstRunPending = firstRun ? try await opened.setup.state().pending : false
        if firstRun && !firstRunPending { FirstRunMachine.markDone(store: opened.store.configuration.path) }
        // A demo never joins the company this machine's sync server was readied for.
        if !firstRunPending, try await opened.setup.machineRole() != .demo {
            try await joinIfAsked(opened, settings: settings, server: syncServer)
        }
        let membership = try await opened.sync.membership()
        if membership != nil { opened.refreshBeforeEdit = ShopSyncEngine.refresher(for: opened, server: syncServer) }
        let backoffice = opened
        // A store waiting for its first run has nobody to hold a title yet: the first run makes the manager.
        if !firstRunPending { try await checkManagerTitles(backoffice, settings) }
        let policy = AccessPolicy(managerTitles: AccessPolicy.titles(try settings.value("session.managerTitles").value))
        let demo = firstRunPending ? [] : try await backoffice.accounts.provisionDemoCredentials(policy: policy)
        let host = try settings.value("server.host").value
        let port = Int(try settings.value("server.port").value) ?? 8080
        let insecureCookies = try settings.value("server.secureCookies").value == "false"
        var services: [any Service] = [
            LogLevelService(level: level, settings: settings),
            BackupScheduleService(backoffice: backoffice, settings: settings, logger: Logger(label: "northwind.backup")),
            // `systemctl reload`: the settings file is read at once (it is also looked at every second).
            HangupReload(logger: Logger(label: "northwind")) { await settings.reloadFile() },
        ]
        // Read every second while waiting: a change to sync.interval applies at once.
        let interval: @Sendable () -> Duration = { .seconds(Int((try? settings.value("sync.interval").value) ?? "") ?? 60) }
        let shopSync = ShopSyncService(
            backoffice: backoffice,
            interval: interval,
            server: syncServer.isEmpty ? nil : syncServer,
            logger: Logger(label: "northwind.sync")
        )
        if membership != nil {
            services.append(shopSync)
        } else if firstRunPending {
            // A shop joins on the first-run page: it starts syncing then, without a restart.
            services.append(FirstRunMachine.SyncOnceJoined(backoffice: backoffice, sync: shopSync))
        }
        let syncing = membership.map { "Syncing with \(syncServer.isEmpty ? $0.server : syncServer) as \($0.siteCode)." }
        let app = try await WebApp.build(
            backoffice: backoffice,
            options: WebOptions(
                host: host,
                port: port,
                secureCookies: !insecureCookies,
                firstRun: firstRun
                    ? FirstRunMachine.support(
                        syncServer: syncServer,
                        headOffice: FirstRunMachine.headOfficeSync(
                            server: syncServer,
                            token: try settings.secret("sync.enrolmentToken")
                        ),
                        store: backoffice.store.configuration.path
                    ) : nil
            ),
            settings: settings,
            logger: Logger(label: "northwind.web"),
            services: services,
            onServerRunning: Self.announce(
                path: backoffice.store.configuration.path,
                host: host,
                syncing: syncing,
                firstRunPending: firstRunPending,
                demo: demo
            )
        )
        try await app.runService()
    }
}

extension ServeCommand {
    /// A title that no employee holds is a mistake: from the command line an error, from a file or the environment
    /// a warning.
    func checkManagerTitles(_ backoffice: Backoffice, _ settings: Settings) async throws {
        let titles = try settings.value("session.managerTitles")
        do {
            try await backoffice.settings.check(titles.key, titles.value)
        } catch {
            // From the command line the operator can fix it now; from a file or the environment, say so and go on.
            if titles.origin == .commandLine { throw ValidationError("\(error).") }
            FileHandle.standardError.write(Data("warning: \(error) (set in the \(titles.origin.rawValue))\n".utf8))
        }
    }

    /// What the server says once it listens: where, whether it syncs, the first run, the demo sign-ins.
    static func announce(
        path: String,
        host: String,
        syncing: String?,
        firstRunPending: Bool,
        demo: [DemoCredential]
    ) -> @Sendable (Int) async -> Void {
        { port in
            // Unbuffered, so a script waiting for this line sees it at once.
            var lines = ["Northwind is serving \(path) at http://\(host):\(port)/"]
            if let syncing { lines.append(syncing) }
            if firstRunPending { lines.append("First run: open http://\(host):\(port)/setup to make the first manager and set this machine up.") }
            for credential in demo {
                lines.append(
                    "Demo sign-in (shown once): login \(credential.login), password \(credential.password)"
                        + " — \(credential.employeeName), \(credential.title ?? "no title")"
                )
            }
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            SystemdNotify.ready(status: "Serving on \(host):\(port).")
        }
    }
}

extension ServeCommand {
    /// An unattended first start: a store that has not joined joins with `sync.enrolmentToken` at `sync.server`. A
    /// failure is said and the server serves without sync, so that a shop can still sell.
    func joinIfAsked(_ backoffice: Backoffice, settings: Settings, server: String) async throws {
        let token = try settings.secret("sync.enrolmentToken")
        guard !token.isEmpty, try await backoffice.sync.membership() == nil else { return }
        let say = { (line: String) in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        guard !server.isEmpty else {
            return say("warning: sync.enrolmentToken is set but sync.server is not: set the sync server's address to join it.")
        }
        do {
            let membership = try await ShopSyncEngine.join(backoffice, server: server, token: token)
            say("Joined container \(membership.container) at \(server) as \(membership.siteCode).")
        } catch {
            say("warning: could not join the sync server at \(server): \(error). Serving without sync; mend the setting and restart.")
        }
    }
}
