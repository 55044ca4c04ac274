import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServerOperations
import SyncProtocol
import SyncServer

@main
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "northwind-sync-server",
        abstract: "The sync server Northwind installations share: a self-hosted CloudKit, on one SQLite file by default.",
        subcommands: [Serve.self, Enroll.self, Tokens.self, Shops.self, Purge.self, Backup.self]
    )

    /// A release build refuses the fault tests' switches before anything else (`TestSwitches`).
    static func main() async {
        TestSwitches.refuseUnlessCompiledIn()
        await main(nil)
    }
}

/// Where the server keeps its data.
struct DatabaseOption: ParsableArguments {
    @Option(
        help: """
            A SQLite file, or a postgres://user:password@host:5432/database URL that several instances share \
            (default: $NORTHWIND_SYNC_DATABASE, else the settings file's "database" (for the administration \
            commands: $NORTHWIND_SYNC_SETTINGS, else /etc/northwind/sync-server.json when installed), else \
            $XDG_DATA_HOME/northwind-sync/sync.sqlite).
            """
    )
    var database: String?

    /// For `serve`, whose settings file (if any) has been read already.
    var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let database, !database.isEmpty { return database }
        if let path = environment["NORTHWIND_SYNC_DATABASE"], !path.isEmpty { return path }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/share")
        return dataHome + "/northwind-sync/sync.sqlite"
    }

    /// For the administration commands: as `path`, but before the default, the database the settings file names
    /// (`$NORTHWIND_SYNC_SETTINGS`, else the installed package's), so that a bare `northwind-sync-server enroll` on
    /// that machine works on the service's database. A settings file that cannot be read, or a database it names
    /// that does not exist, is an error: an administrator's token must not go into a new, empty database.
    func administeredPath() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let database, !database.isEmpty { return database }
        if let path = environment["NORTHWIND_SYNC_DATABASE"], !path.isEmpty { return path }
        let settings =
            ServerSettingsFile.path(nil)
            ?? (FileManager.default.fileExists(atPath: ServerSettingsFile.installed) ? ServerSettingsFile.installed : nil)
        if let settings, let named = try ServerSettingsFile.load(settings).database, !named.isEmpty {
            if !named.contains("://"), !FileManager.default.fileExists(atPath: named) {
                throw ValidationError(
                    "\(settings) names the database \(named), which does not exist: start the sync server once, or give --database."
                )
            }
            return named
        }
        return path
    }

    func open() async throws -> SyncService {
        try await Self.open(administeredPath())
    }

    func openForServing() async throws -> SyncService {
        try await Self.open(path)
    }

    private static func open(_ path: String) async throws -> SyncService {
        do {
            return try await SyncService.open(database: path)
        } catch {
            throw ValidationError(error.reason)
        }
    }
}

/// Runs an administration step: a protocol error becomes a command-line failure in words.
@discardableResult
func administering<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as SyncError {
        throw ValidationError(error.reason)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the sync protocol over HTTP.",
        discussion: """
            Options may also come from a settings file (--settings-file, else $NORTHWIND_SYNC_SETTINGS): a JSON \
            object with the options' names in camel case, such as {"host": "0.0.0.0", "port": 8444, "rate": 100}. \
            The command line wins over the file. SIGHUP (systemctl reload) reads the file again: the rate limit \
            changes at once; other changes are logged as needing a restart. /healthz, /readyz and /metrics \
            (from this machine only) are for operators.
            """
    )
    @OptionGroup var database: DatabaseOption
    // No defaults here: a default would always win over the settings file.
    @Option(help: "The address to listen on (default 127.0.0.1); put a reverse proxy with TLS in front for other machines.")
    var host: String?
    @Option(help: "The port (default 8444).") var port: Int?
    @Option(help: "Requests a second each installation may make, on average (default 200).") var rate: Double?
    @Option(help: "Requests an installation may make at once above its rate (default: twice the rate).") var burst: Double?
    @Option(help: "Days a deletion is kept for clients that have not synced; older tokens must fetch again (default 180).")
    var tombstoneDays: Int?
    @Option(help: "Megabytes of assets one container may hold (default: no limit).") var assetQuotaMb: Int?
    @Option(help: "Seconds between keep-alive pings on event streams, each also polling for missed changes (default 15).")
    var pingSeconds: Int?
    @Option(help: "Days an installation's credential is good for after it is issued (shops rotate theirs before); 0 for ever (default 365).")
    var credentialDays: Int?
    @Option(help: "A JSON settings file (default: $NORTHWIND_SYNC_SETTINGS, else /etc/northwind/sync-server.json when installed).") var settingsFile:
        String?

    /// The command line over the file over the defaults (the database: the command line, the environment, the file).
    func resolved(_ file: ServerSettingsFile) -> ServerSettingsFile {
        ServerSettingsFile(
            host: host ?? file.host ?? "127.0.0.1",
            port: port ?? file.port ?? 8444,
            rate: rate ?? file.rate ?? 200,
            burst: burst ?? file.burst ?? (rate ?? file.rate ?? 200) * 2,
            tombstoneDays: tombstoneDays ?? file.tombstoneDays ?? 180,
            assetQuotaMb: assetQuotaMb ?? file.assetQuotaMb,
            pingSeconds: pingSeconds ?? file.pingSeconds ?? 15,
            credentialDays: credentialDays ?? file.credentialDays ?? 365,
            // The environment (a unit's Environment=) wins over the file, as it does for the shop's settings.
            database: database.database ?? (ProcessInfo.processInfo.environment["NORTHWIND_SYNC_DATABASE"]?.isEmpty == false ? nil : file.database)
        )
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "northwind-sync")
        logger.logLevel = .info
        let settingsPath = ServerSettingsFile.path(settingsFile)
        let settings = resolved(try ServerSettingsFile.load(settingsPath))
        try settings.checkLimits()
        let (host, port) = (settings.host ?? "127.0.0.1", settings.port ?? 8444)
        let tombstoneDays = settings.tombstoneDays ?? 180
        var databaseOption = database
        databaseOption.database = settings.database
        var service = try await databaseOption.openForServing()
        service.assetQuota = settings.assetQuotaMb.map { Int64($0) * 1024 * 1024 }
        let credentialDays = settings.credentialDays ?? 365
        service.credentialLifetime = credentialDays > 0 ? Int64(credentialDays) * 86_400_000 : nil
        let purged = try await service.purgeTombstones(retention: Int64(tombstoneDays) * 86_400)
        if purged > 0 { logger.info("purged \(purged) deletions older than \(tombstoneDays) days") }
        let path = databaseOption.path
        let throttle = Throttle(rate: settings.rate ?? 200, burst: settings.burst ?? 400)
        let reload = HangupReload(logger: logger) { [self] in
            do {
                let next = resolved(try ServerSettingsFile.load(settingsPath))
                try next.checkLimits()
                throttle.update(rate: next.rate ?? 200, burst: next.burst ?? 400)
                let restart = next.needingRestart(comparedWith: settings)
                var said = "rate \(throttle.rate)/s, burst \(throttle.burst)"
                if !restart.isEmpty { said += "; restart to apply \(restart.joined(separator: ", "))" }
                return said
            } catch {
                return "the settings file was not applied: \(error)"
            }
        }
        let app = try await SyncServerApp.make(
            service: service,
            options: SyncServerOptions(
                host: host,
                port: port,
                requestsPerSecond: throttle.rate,
                burst: throttle.burst,
                ping: .seconds(max(1, settings.pingSeconds ?? 15)),
                databaseFile: path.hasPrefix("postgres") ? nil : path
            ),
            throttle: throttle,
            services: [reload],
            logger: logger
        )
        logger.info("sync server on http://\(host):\(port), data in \(SyncService.redacted(path))")
        try await app.runService()
    }
}

struct Enroll: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a one-time token that enrols one installation (head office or a shop) in a container."
    )
    @OptionGroup var database: DatabaseOption
    @Option(help: "The company's container, such as acme-trading.") var container: String
    @Option(help: "hq for head office, shop for a shop or the warehouse.") var role: String
    @Option(help: "Days the token stays valid.") var days = 7
    @Option(help: "The site code the token enrols (2 to 12 capital letters or digits), chosen here rather than by the installation.")
    var site: String?
    @Flag(help: "Give the enrolled site --site a new credential (after it was revoked, or its credential was lost).")
    var replace = false

    func run() async throws {
        guard let role = Role(rawValue: role) else { throw ValidationError("--role is hq or shop") }
        let service = try await database.open()
        try await administering {
            let token = try await service.createEnrollment(
                container: container,
                role: role,
                validFor: Int64(days) * 86_400,
                site: site,
                replace: replace
            )
            print(token)
        }
    }
}

struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a container's enrolment tokens, or revoke one not yet used.",
        subcommands: [List.self, Revoke.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The container's tokens, newest first: id, role, site, validity, use.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The company's container.") var container: String

        func run() async throws {
            let service = try await database.open()
            try await administering {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                for grant in try await service.enrollments(container: container) {
                    let state = grant.usedBy.map { "used by \($0)" } ?? (grant.expires > now ? "unused" : "expired")
                    let site = grant.siteCode.map { " site \($0)\(grant.replaces ? " (replaces its credential)" : "")" } ?? ""
                    let expires = Date(timeIntervalSince1970: Double(grant.expires) / 1000).formatted(.iso8601)
                    print("\(grant.id)  \(grant.role.rawValue)\(site)  expires \(expires)  \(state)")
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token not yet used, by the id `tokens list` shows.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The company's container.") var container: String
        @Argument(help: "The token's id.") var id: String

        func run() async throws {
            let service = try await database.open()
            try await administering {
                try await service.revokeEnrollment(container: container, id: id)
                print("Revoked token \(id): it enrols nobody now.")
            }
        }
    }
}

struct Shops: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, revoke or retire the installations of a container.",
        subcommands: [List.self, Revoke.self, Retire.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The container's installations.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The container.") var container: String

        func run() async throws {
            let service = try await database.open()
            let installations = try await administering { try await service.installations(container: container) }
            if installations.isEmpty { print("No installation is enrolled in \(container).") }
            for installation in installations {
                let enrolled = Date(timeIntervalSince1970: Double(installation.enrolled) / 1000).formatted(.iso8601)
                let state = installation.revoked == nil ? "active" : "revoked"
                let issued = Date(timeIntervalSince1970: Double(installation.credentialIssued) / 1000).formatted(.iso8601)
                print("\(installation.siteCode)\t\(installation.role.rawValue)\t\(state)\tenrolled \(enrolled)\tcredential issued \(issued)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse an installation's credential from now on, on every instance.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The container.") var container: String
        @Argument(help: "The site code.") var code: String

        func run() async throws {
            let service = try await database.open()
            try await administering { try await service.revoke(container: container, siteCode: code) }
            print("Revoked \(code) in \(container).")
        }
    }

    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Close a site for good: its credential is refused from now on, and its zone, with its orders and stock movements, stays readable."
        )
        @OptionGroup var database: DatabaseOption
        @Option(help: "The container.") var container: String
        @Argument(help: "The site code.") var code: String

        func run() async throws {
            let service = try await database.open()
            try await administering { try await service.revoke(container: container, siteCode: code) }
            print(
                "Retired \(code) in \(container): its credential is refused, and its zone site-\(code) stays readable to every installation "
                    + "(its orders and stock movements remain in the ledger). It can never be deleted."
            )
        }
    }
}

struct Purge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete deletions (tombstones) older than the retention; clients with older tokens must fetch again."
    )
    @OptionGroup var database: DatabaseOption
    @Option(help: "Keep deletions this many days.") var days = 180

    func run() async throws {
        let service = try await database.open()
        try await administering {
            let count = try await service.purgeTombstones(retention: Int64(days) * 86_400)
            print("Purged \(count) deletions.")
        }
    }
}

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up the server's data, check a backup, or restore one (which starts a new epoch).",
        discussion: """
            A backup is a folder: a copy of the SQLite database, taken while the server runs, and its assets. A \
            restore starts a new epoch: every installation then sends again what it had sent since the backup, and \
            fetches everything again, so nothing an installation had acknowledged is lost. PostgreSQL is backed up \
            with pg_dump or point-in-time recovery; after restoring it, run `backup mark-restored`.
            """,
        subcommands: [Create.self, Verify.self, Restore.self, MarkRestored.self]
    )

    static func describe(_ summary: ServerBackup.Summary) -> String {
        "\(summary.records) records in \(summary.zones) zones, \(summary.assets) assets"
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Copy the database and its assets into a new folder, and check the copy.")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The new folder to write the backup to.") var folder: String

        func run() async throws {
            try await administering {
                let summary = try ServerBackup.create(database: try database.administeredPath(), folder: folder)
                print("Backed up to \(folder): \(Backup.describe(summary)); verified.")
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check a backup: SQLite's integrity check, the server's tables, every asset.")
        @Argument(help: "The backup's folder.") var folder: String

        func run() async throws {
            try await administering {
                print("Verified \(folder): \(Backup.describe(try ServerBackup.verify(folder: folder))).")
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the server's data with a backup's, and start a new epoch. Stop the server first."
        )
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The backup's folder.") var folder: String

        func run() async throws {
            try await administering {
                let target = try database.administeredPath()
                let summary = try ServerBackup.restore(folder: folder, over: target)
                print(
                    "Restored \(Backup.describe(summary)) over \(target). A new epoch has started: each installation sends "
                        + "again what the backup lacks on its next sync."
                )
                print(
                    summary.keptAccess
                        ? "Credentials, revocations and enrolment tokens were kept as they were before the restore."
                        : "The database replaced could not be read: credentials, revocations and enrolment tokens are as of the backup. "
                            + "Revoke again any site or token revoked since (shops revoke, tokens revoke)."
                )
            }
        }
    }

    struct MarkRestored: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "After restoring the database with other tools (pg_dump, point-in-time recovery): start a new epoch."
        )
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            try await administering {
                try await ServerBackup.markRestored(database: try database.administeredPath())
                print("A new epoch has started: each installation sends again what the server lacks on its next sync.")
            }
        }
    }
}
