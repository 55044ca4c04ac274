import ArgumentParser
import Foundation
import Northwind
import NorthwindStore

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back the store up, list and check backups, and restore one.",
        discussion: """
            A backup (.nwbackup) is one file: the database as of one instant, every picture kept beside it, and a \
            manifest with row counts and checksums. Backups go to backup.directory, else \
            $XDG_DATA_HOME/northwind/backups: outside the store and the program, so that losing either loses no \
            backup. `northwind serve` backs up every hour (backup.every) and keeps what backup.keepHourly, \
            keepDaily, keepWeekly and keepMonthly say. docs/backup.md has the format and the restore rules.
            """,
        subcommands: [Create.self, List.self, Verify.self, Restore.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Back the store up now, while it goes on serving.",
            discussion:
                "The backup is checked as it is written: SQLite's integrity and foreign-key checks, then every entry read back against its checksum."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @Option(name: .shortAndLong, help: "Write the backup to this file instead of the backup folder.") var output: String?

        func run() async throws {
            let (backoffice, settings) = try await settingsOptions.open(storeOptions)
            let target = output.map { URL(fileURLWithPath: $0) }
            if let target, FileManager.default.fileExists(atPath: target.path) {
                throw ValidationError("\(target.path) exists already; name a new file.")
            }
            let folder = try target.map { BackupFolder(url: $0.deletingLastPathComponent()) } ?? settings.backupFolder()
            var made = try await backoffice.backups.create(in: folder, kind: .manual)
            if let target {
                made = try made.moved(to: target)
            }
            let manifest = made.manifest
            print("Backed up to \(made.file.path)")
            print(
                "\(made.sizeText); \(counted(manifest?.counts["products"] ?? 0, "product")), \(counted(manifest?.counts["orders"] ?? 0, "order")), \(counted(manifest?.pictures.count ?? 0, "picture file")); checked."
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The backups in the backup folder, newest first.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let (_, settings) = try await storeOptions.locate(settingsOptions.sources())
            let folder = try settings.backupFolder()
            let backups = folder.list()
            if output.json {
                return try printJSON(
                    backups.map {
                        BackupRow(
                            file: $0.file.path,
                            createdAt: $0.manifest?.createdAt,
                            kind: $0.manifest?.kind.rawValue,
                            site: $0.manifest?.store.siteCode,
                            size: $0.size,
                            verified: $0.isVerified,
                            problem: $0.problem ?? $0.check?.problems.first
                        )
                    }
                )
            }
            guard !backups.isEmpty else {
                print("No backups in \(folder.url.path) yet: `northwind backup create` makes one.")
                return
            }
            print("In \(folder.url.path):")
            for backup in backups {
                // A damaged backup shouts in a terminal list, where nothing else marks it.
                let state = backup.state == .damaged ? "DAMAGED" : backup.state.rawValue
                print(
                    [
                        backup.name, backup.manifest?.createdAt ?? "", backup.manifest?.kind.rawValue ?? "", backup.sizeText, state,
                    ].joined(separator: "  ")
                )
            }
        }

        struct BackupRow: Encodable {
            var file: String
            var createdAt: String?
            var kind: String?
            var site: String?
            var size: Int64
            var verified: Bool
            var problem: String?
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a backup: every checksum, SQLite's integrity and foreign-key checks, every picture present.",
            discussion: "Exits with status 1 when the backup is damaged. FILE may be a path or the name of a backup in the backup folder."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @Argument(help: "The backup file.") var file: String

        func run() async throws {
            let (_, settings) = try await storeOptions.locate(settingsOptions.sources())
            let url = try BackupCommand.find(file, in: settings.backupFolder())
            let result = try await BackupFolder.verify(url)
            let manifest = result.manifest
            print("\(url.lastPathComponent): taken \(manifest.createdAt) by Northwind \(manifest.app.version) of store \(manifest.store.siteCode).")
            if !result.newerMigrations.isEmpty {
                print(
                    "It comes from a newer Northwind (\(result.newerMigrations.joined(separator: ", "))): only that version or a later one can restore it."
                )
            }
            guard result.problems.isEmpty else {
                for problem in result.problems { print("problem: \(problem)") }
                throw ExitCode(1)
            }
            print(
                "Verified: \(manifest.entries.count == 1 ? "the one file matches its checksum" : "\(counted(manifest.entries.count, "file")) match their checksums"); the database passes SQLite's checks; every picture is there."
            )
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the store with a backup's.",
            discussion: """
                A restore replaces; it never merges. It is refused while `northwind serve` (or any command) has the \
                store open, for a backup from a newer Northwind, and for a damaged one. A store that holds data is \
                replaced only with --force, and is backed up first. A backup from an older Northwind is migrated \
                forward. The new store is swapped in whole: a crash at any point leaves the old store or the new one. \
                On a store that syncs, the restore says first which changes would be lost, then starts a new sync \
                epoch: the next sync fetches everything the server has and sends the backup's unsent changes.
                """
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @Argument(help: "The backup file: a path, or a name in the backup folder.") var file: String
        @Flag(help: "Replace a store that holds data (it is backed up first).") var force = false
        @Flag(help: "Restore only if there is no store yet (first start on a new machine); otherwise do nothing.") var ifNoStore = false
        @Flag(help: "Say what would happen, and change nothing.") var dryRun = false

        func run() async throws {
            let (configuration, settings) = try await storeOptions.locate(settingsOptions.sources())
            let target = StoreFiles(path: configuration.path)
            if ifNoStore && target.exists {
                print("A store exists at \(target.path): nothing restored (--if-no-store).")
                return
            }
            let url = try BackupCommand.find(file, in: settings.backupFolder())
            let plan = try await Northwind.Restore.plan(url, over: target)
            for line in plan.lines { print(line) }
            if dryRun {
                print(plan.holdsData && !force ? "Dry run: nothing changed. A real restore needs --force." : "Dry run: nothing changed.")
                return
            }
            let outcome = try await Northwind.Restore.perform(url, over: target, folder: try settings.backupFolder(), force: force)
            if let saved = outcome.preRestoreBackup { print("The replaced store is backed up in \(saved.path).") }
            print("Restored \(target.path) from \(url.lastPathComponent).")
            if outcome.plan.syncSite ?? outcome.plan.backup.sync.site != nil {
                print("The next sync (`northwind sync now`, or `northwind serve`) fetches everything from the sync server again.")
            }
        }
    }

    /// A path, or the name of a backup in `folder`.
    static func find(_ file: String, in folder: BackupFolder) throws -> URL {
        if FileManager.default.fileExists(atPath: file) { return URL(fileURLWithPath: file) }
        let named = folder.url.appendingPathComponent(file)
        if !file.contains("/"), FileManager.default.fileExists(atPath: named.path) { return named }
        throw ValidationError("No backup \(file): give its path, or a name `northwind backup list` shows.")
    }
}
