import ArgumentParser
import Foundation
import Northwind
import NorthwindStore
import NorthwindSync

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Share this store's data with the company's other shops through a sync server.",
        discussion: """
            An administrator runs `northwind-sync-server enroll --container NAME --role hq|shop` for each \
            installation. Head office joins first with its data; every other shop joins with an empty store \
            (`--store NEW-FILE --empty`) and downloads everything.
            """,
        subcommands: [Join.self, Now.self, Status.self, Conflicts.self, Resolve.self, Resume.self, RotateCredential.self]
    )

    struct Join: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enrol this store with a one-time token and join its company.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The sync server, e.g. http://127.0.0.1:8444") var url: String
        @Argument(help: "The one-time token from `northwind-sync-server enroll`.") var token: String
        @Flag(help: "Join again as the same site, with a token that replaces its credential (enroll --site CODE --replace).")
        var again = false
        @Option(
            help: ArgumentHelp(
                "The SHA-256 fingerprint of head office's own certificate authority, for an https:// server this machine does not trust.",
                discussion:
                    "A Northwind appliance shows it on its console. The authority is fetched from the server's /ca.crt, kept only if it has this fingerprint, and from then on trusted alone for this store's sync.",
                valueName: "FP"
            )
        )
        var fingerprint: String?

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let membership = try await ShopSyncEngine.join(backoffice, server: url, token: token, fingerprint: fingerprint, again: again)
            print("Joined \(membership.container) on \(membership.server) as \(membership.siteCode) (\(membership.role)).")
            if membership.authority != nil { print("Head office's certificate authority is pinned: this store trusts it alone for sync.") }
            print("Run `northwind sync now` to sync, or `northwind serve` to sync continuously.")
        }
    }

    struct Now: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Push this store's changes, then pull everyone else's, once.",
            discussion: "Exits 0 only when nothing is left to send."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let (backoffice, settings) = try await storeOptions.open(SettingsOptions.sources(), seedIfCreated: false)
            // sync.server, when set, replaces the address the store joined with.
            let report = try await ShopSyncEngine(backoffice: backoffice, server: try settings.value("sync.server").value).syncNow()
            if output.json {
                try printJSON(report)
            } else {
                print("Sent \(report.uploaded), received \(report.downloaded), merged \(report.merged).")
                if report.loadedFromSnapshot > 0 {
                    print("This store's first download: \(report.loadedFromSnapshot) records loaded at once, checked against the server's checksums.")
                }
                if report.discarded > 0 { print("\(report.discarded) values were discarded by merges: see `northwind sync status`.") }
                if report.sentAgainAfterServerRestore > 0 {
                    print(
                        "The sync server's data was restored from a backup: \(report.sentAgainAfterServerRestore) records it may have lost went up again from this store."
                    )
                }
                if report.waiting > 0 {
                    print("\(report.waiting) received records wait for a record not here yet (see `northwind sync status`).")
                }
                if report.userSettingsUploaded + report.userSettingsDownloaded > 0 {
                    print("Users' own settings: sent \(report.userSettingsUploaded), received \(report.userSettingsDownloaded).")
                }
                for login in report.usersOverQuota {
                    print("\(login)'s settings were not sent: their private database on the sync server is full (1,024 keys, 1 MB).")
                }
                if report.credentialRotated { print("The sync credential was rotated (it neared its expiry).") }
                for zone in report.zonesDiffering {
                    print("Zone \(zone) still differs from the server's after fetching it again: see `northwind sync status`.")
                }
                if report.pending > 0 {
                    print("\(report.pending) changes still pending.")
                } else if report.zonesDiffering.isEmpty {
                    print("Nothing pending.")
                }
            }
            if report.pending > 0 || !report.zonesDiffering.isEmpty { throw ExitCode(1) }
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make this copy of the store its site's again, after the server said it is behind.",
            discussion: """
                The sync server refuses a store that is behind what it took from the site (STORE_DIVERGED): the store \
                was put back to an older copy of its file, or another copy of it syncs as the same site. If this is \
                the copy to keep, `resume` makes it the site's again: the next sync fetches everything from scratch \
                (bringing back what the server took since this copy's state) and sends what this copy holds. Any \
                other copy is refused from then on: stop using it.
                """
        )
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            let backoffice = try await storeOptions.open(seedIfCreated: false)
            try await backoffice.sync.resumeAsThisCopy()
            print("This copy is its site's again from its next sync (northwind sync now); any other copy is refused from then on.")
        }
    }

    struct RotateCredential: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give this store a new sync credential now; the old one stops working once the new one is used.",
            discussion: """
                Syncs rotate the credential by themselves when a third of its life is left. Rotate by hand when a copy of \
                the credential may have leaked. It is kept in a file beside the store (STORE.sync-credential, mode 0600), \
                never in the store or its backups.
                """
        )
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            let (backoffice, settings) = try await storeOptions.open(SettingsOptions.sources(), seedIfCreated: false)
            let engine = ShopSyncEngine(backoffice: backoffice, server: try settings.value("sync.server").value)
            let expires = try await engine.rotateCredential()
            print(
                "This store has a new sync credential\(expires.map { ", good until \($0.formatted(.iso8601))" } ?? ""); the old one no longer works."
            )
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The sync server, the last successful sync, pending changes, the last error and open conflicts."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let status = try await storeOptions.open(seedIfCreated: false).sync.status()
            if output.json { return try printJSON(status) }
            guard let server = status.server, let container = status.container else {
                print("Not joined to a sync server (site code \(status.siteCode)). Join with `northwind sync join URL TOKEN`.")
                return
            }
            print("Server:        \(server) (company \(container), this store is \(status.siteCode), \(status.role ?? ""))")
            print("Last sync:     \(status.lastSuccess ?? "never")")
            print("Pending:       \(status.pending) changes")
            if let offline = status.offlineSince { print("Offline since: \(offline)") }
            print("Last error:    \(status.lastError ?? "none")")
            print("Conflicts:     \(status.openConflicts) open")
            print("Last refusal:  \(status.lastRefusal ?? "none")")
            if let restore = status.lastServerRestore { print("Server restore: \(restore)") }
            if let expires = status.credentialExpires, !status.credentialMissing {
                print("Credential:    expires \(expires); rotated before, at a sync")
            }
            if status.credentialMissing {
                print("Credential:    missing (a store restored or copied onto another machine has none): join again with a replacing token")
            }
            for zone in status.zonesDiffering { print("Differs:       \(zone)") }
            if status.waitingForDeletedRecords > 0 {
                print(
                    "Orphans:       \(status.waitingForDeletedRecords) received records refer to records deleted at another site; "
                        + "they are in the conflict inbox (northwind sync conflicts)"
                )
            }
            if !status.awaitingSites.isEmpty {
                print(
                    "Awaiting:      site \(status.awaitingSites.joined(separator: ", ")) to send again what the server's restore lost; "
                        + "its records here keep their newer versions until then"
                )
            }
            if status.offersWaiting > 0 {
                print(
                    "Offered:       \(status.offersWaiting) versions of other sites' records that the site and the server both lost; "
                        + "each is kept here until its site takes it back or refuses it"
                )
            }
            if status.heldForNewerVersion > 0 {
                print("Held:          \(status.heldForNewerVersion) received records of types this version does not know; upgrade to apply them")
            }
            if let restored = status.restoredUntilFullSync {
                print(
                    "Orders:        restored from a backup (\(restored)): none is taken, executed or cancelled, and no quote written, until a full sync completes"
                )
            }
        }
    }

    struct Conflicts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The conflict inbox: every value a merge discarded, and every change the server refused."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Flag(help: "Include resolved conflicts.") var all = false
        @Option(help: "At most this many, newest first (1 to 1,000).") var limit = 50
        @Option(help: "Skip this many, to page through a long inbox.") var offset = 0

        func run() async throws {
            let page = try await storeOptions.open(seedIfCreated: false).sync.conflictPage(all: all, limit: limit, offset: offset)
            let conflicts = page.items
            if output.json { return try printJSON(conflicts) }
            guard !conflicts.isEmpty else {
                return print(page.total == 0 ? (all ? "No conflicts." : "No open conflicts.") : "No conflicts past \(offset) (\(page.total) in all).")
            }
            var table = TextTable("ID", "Record", "Field", "Kept", "Discarded", "Why")
            for conflict in conflicts {
                table.add(
                    String(conflict.id),
                    "\(conflict.table) \(conflict.recordID)",
                    conflict.field,
                    [conflict.kept.map(Self.shortened), conflict.keptSite.map { "(\($0))" }].compactMap { $0 }.joined(separator: " "),
                    [conflict.lost.map(Self.shortened), conflict.lostSite.map { "(\($0))" }].compactMap { $0 }.joined(separator: " "),
                    conflict.reason + (conflict.resolvedAt.map { "; resolved \($0)" } ?? "")
                )
            }
            print(table.render())
            if offset + conflicts.count < page.total {
                print("\(offset + 1)–\(offset + conflicts.count) of \(page.total); the next ones: --offset \(offset + conflicts.count)")
            }
            print("Keep a value with `northwind sync resolve ID --keep mine` (this store's) or `--keep theirs`.")
        }

        /// A value as the table shows it: a record of megabytes would fill the terminal; --json has it whole.
        static func shortened(_ value: String) -> String {
            value.count <= 80 ? value : value.prefix(77) + "… (\(value.count) characters)"
        }
    }

    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Settle a conflict: keep this store's value (mine) or the other site's (theirs).",
            discussion: "Restoring a discarded value is a new edit: it syncs, and wins everywhere."
        )
        enum Side: String, ExpressibleByArgument, CaseIterable { case mine, theirs }

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The conflict's id, from `northwind sync conflicts`.") var id: Int64
        @Option(help: "mine or theirs.") var keep: Side

        func run() async throws {
            try await storeOptions.open(seedIfCreated: false).sync.resolveConflict(id: id, keepMine: keep == .mine)
            print("Conflict #\(id) resolved, keeping \(keep == .mine ? "this store's value" : "the other site's value").")
        }
    }
}
