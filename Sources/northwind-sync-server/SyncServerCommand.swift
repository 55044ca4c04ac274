import ArgumentParser
import Foundation
import Hummingbird
import Logging
import SyncProtocol
import SyncServer

@main
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "northwind-sync-server",
        abstract: "The sync server Northwind installations share: a self-hosted CloudKit, on one SQLite file by default.",
        subcommands: [Serve.self, Enroll.self, Tokens.self, Shops.self, Purge.self, Backup.self]
    )
}

/// Where the server keeps its data.
struct DatabaseOption: ParsableArguments {
    @Option(
        help: """
            A SQLite file, or a postgres://user:password@host:5432/database URL that several instances share \
            (default: $NORTHWIND_SYNC_DATABASE, else $XDG_DATA_HOME/northwind-sync/sync.sqlite).
            """
    )
    var database: String?

    var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let database, !database.isEmpty { return database }
        if let path = environment["NORTHWIND_SYNC_DATABASE"], !path.isEmpty { return path }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/share")
        return dataHome + "/northwind-sync/sync.sqlite"
    }

    func open() async throws -> SyncService {
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
    static let configuration = CommandConfiguration(abstract: "Serve the sync protocol over HTTP.")
    @OptionGroup var database: DatabaseOption
    @Option(help: "The address to listen on; put a reverse proxy with TLS in front for other machines.") var host = "127.0.0.1"
    @Option(help: "The port.") var port = 8444
    @Option(help: "Requests a second each installation may make, on average.") var rate = 200.0
    @Option(help: "Requests an installation may make at once above its rate (default: twice the rate).") var burst: Double?
    @Option(help: "Days a deletion is kept for clients that have not synced; older tokens must fetch again.")
    var tombstoneDays = 180
    @Option(help: "Megabytes of assets one container may hold (default: no limit).") var assetQuotaMb: Int?
    @Option(help: "Seconds between keep-alive pings on event streams (each also polls for missed changes).") var pingSeconds = 15
    @Option(help: "Days an installation's credential is good for after it is issued (shops rotate theirs before); 0 for ever.")
    var credentialDays = 365

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "northwind-sync")
        logger.logLevel = .info
        var service = try await database.open()
        service.assetQuota = assetQuotaMb.map { Int64($0) * 1024 * 1024 }
        service.credentialLifetime = credentialDays > 0 ? Int64(credentialDays) * 86_400_000 : nil
        let purged = try await service.purgeTombstones(retention: Int64(tombstoneDays) * 86_400)
        if purged > 0 { logger.info("purged \(purged) deletions older than \(tombstoneDays) days") }
        let app = try await SyncServerApp.make(
            service: service,
            options: SyncServerOptions(
                host: host,
                port: port,
                requestsPerSecond: rate,
                burst: burst ?? rate * 2,
                ping: .seconds(max(1, pingSeconds))
            ),
            logger: logger
        )
        logger.info("sync server on http://\(host):\(port), data in \(SyncService.redacted(database.path))")
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
                let summary = try ServerBackup.create(database: database.path, folder: folder)
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
                let summary = try ServerBackup.restore(folder: folder, over: database.path)
                print(
                    "Restored \(Backup.describe(summary)) over \(database.path). A new epoch has started: each installation sends "
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
                try await ServerBackup.markRestored(database: database.path)
                print("A new epoch has started: each installation sends again what the server lacks on its next sync.")
            }
        }
    }
}
