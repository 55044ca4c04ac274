import Foundation
import GRDB
import NorthwindStore

/// What a restore would do, said before it does it (`backup restore --dry-run` prints only this).
public struct RestorePlan: Sendable {
    public var file: URL
    public var backup: BackupManifest
    public var target: String
    public var targetExists: Bool
    /// Business rows in the store the restore would replace.
    public var targetRows: Int
    /// Migrations this build would apply to the backup's store, which comes from an older Northwind.
    public var migrationsToApply: [String]
    /// Migrations in the backup that this build does not know: restoring is refused.
    public var newerMigrations: [String]
    /// Changes in the current store that the restore would lose for good, by table: made after the backup and, on a
    /// store that syncs, never sent to the sync server (sent ones come back from it).
    public var lostChanges: [String: Int]
    public var syncSite: String?
    /// The site code of the store here; the restore replaces it with the backup's.
    public var targetSite: String?
    /// Whether the store here is the one the backup was taken of.
    public var sameStore: Bool { targetSite == nil || targetSite == backup.store.siteCode }

    public var holdsData: Bool { targetRows > 0 }
    public var lostTotal: Int { lostChanges.values.reduce(0, +) }

    /// The plan in plain sentences.
    public var lines: [String] {
        var lines = [
            "Backup: \(file.lastPathComponent), taken \(backup.createdAt) by Northwind \(backup.app.version) (\(backup.kind.rawValue)) of store \(backup.store.siteCode).",
            "It holds \(counted(backup.counts["products"] ?? 0, "product")), \(counted(backup.counts["orders"] ?? 0, "order")), \(counted(backup.counts["customers"] ?? 0, "customer")) and \(counted(backup.pictures.count, "picture file")).",
        ]
        if !newerMigrations.isEmpty {
            lines.append("It comes from a newer Northwind (it has \(newerMigrations.joined(separator: ", "))): upgrade Northwind to restore it.")
        } else if !migrationsToApply.isEmpty {
            lines.append(
                "It comes from an older Northwind: \(counted(migrationsToApply.count, "migration")) bring it up to date after it is unpacked."
            )
        }
        if !targetExists {
            lines.append("Target: \(target), which does not exist yet: the backup becomes the store.")
        } else if holdsData {
            lines.append("Target: \(target), which holds \(counted(targetRows, "row")): the restore replaces it, after backing it up (pre-restore).")
        } else {
            lines.append("Target: \(target), which holds no data: the backup replaces it.")
        }
        if targetExists && !sameStore {
            lines.append(
                "The store here (\(targetSite ?? "")) is not the one backed up (\(backup.store.siteCode)): everything in it is replaced, and it takes the backup's site code."
            )
        } else if lostTotal > 0 {
            let tables = lostChanges.sorted { $0.key < $1.key }.map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
            let why = syncSite == nil ? "made after the backup" : "made after the backup and never sent to the sync server"
            lines.append("Lost for good: \(counted(lostTotal, "change")) \(why) (\(tables)). The pre-restore backup keeps them.")
        } else if targetExists && holdsData {
            lines.append("No change made here after the backup is lost\(syncSite == nil ? "" : " that the sync server does not have").")
        }
        if let site = syncSite ?? backup.sync.site {
            lines.append(
                "Sync: site \(site) starts a new epoch: it fetches everything the sync server has again, and sends the backup's \(counted(backup.sync.pendingChanges, "unsent change"))."
            )
        }
        return lines
    }
}

/// What a restore did.
public struct RestoreOutcome: Sendable {
    public var plan: RestorePlan
    /// The backup of the replaced store, when it held data.
    public var preRestoreBackup: URL?
}

/// `backup restore`: replaces a store with a backup's, never merging. See `StoreFiles` for how the swap survives a
/// crash at any point.
public enum Restore {
    /// What restoring `file` over the store at `target` would do. Reads the store without taking it over.
    public static func plan(_ file: URL, over target: StoreFiles) async throws(NorthwindError) -> RestorePlan {
        try await Backups.offThread { () throws(NorthwindError) in
            try makePlan(BackupReader(file: file), over: target)
        }
    }

    /// Restores `file` over `target`. Refused while another program has the store open, when the backup comes from
    /// a newer Northwind, when it fails its checks, and (without `force`) when the store holds data; a store that
    /// holds data is backed up into `folder` first. Every refusal leaves the store as it was.
    public static func perform(
        _ file: URL,
        over target: StoreFiles,
        folder: BackupFolder,
        force: Bool
    ) async throws(NorthwindError) -> RestoreOutcome {
        try await Backups.offThread { () throws(NorthwindError) in
            let lock = try target.lockExclusively()
            defer { withExtendedLifetime(lock) {} }
            try target.recover()
            let reader = try BackupReader(file: file)
            let plan = try makePlan(reader, over: target)
            guard plan.newerMigrations.isEmpty else {
                throw .invalidState(
                    "\(file.lastPathComponent) was made by a newer Northwind (\(reader.manifest.app.version)); this is \(NorthwindVersion.current). Upgrade Northwind to restore it."
                )
            }
            guard !plan.holdsData || force else {
                throw .invalidState(
                    "The store at \(target.path) holds \(counted(plan.targetRows, "row")). A restore replaces them all: add --force to go on (the store is backed up first)."
                )
            }
            var outcome = RestoreOutcome(plan: plan)
            if plan.holdsData {
                let current = try open(target.path, readonly: false)
                outcome.preRestoreBackup = try BackupWriter.write(
                    from: current,
                    pictures: target.external,
                    storePath: target.path,
                    to: folder,
                    kind: .preRestore
                ).file
                try? current.close()
            }
            CrashPoint.reach("restore-backed-up")
            try target.prepareStaging()
            do throws(NorthwindError) {
                try stage(reader, into: target.staging)
            } catch {
                target.discardStaging()
                throw error
            }
            CrashPoint.reach("restore-staged")
            try target.swapInStaged()
            return outcome
        }
    }

    /// Unpacks and checks the backup as a store of its own, brings it up to this build's schema, and starts its new
    /// sync epoch; then closes it, leaving one file with no write-ahead log.
    private static func stage(_ reader: BackupReader, into staging: StoreFiles) throws(NorthwindError) {
        var problems = try reader.verifyEntries(unpackInto: staging)
        // As a new store: only its owner reads it (it holds password hashes); SQLite's -wal and -shm follow.
        chmod(staging.path, 0o600)
        if problems.isEmpty {
            do {
                let facts = try BackupReader.inspect(staging)
                problems = facts.problems
                if !facts.newerMigrations.isEmpty {
                    throw NorthwindError.invalidState(
                        "\(reader.file.lastPathComponent) holds migrations this Northwind does not know (\(facts.newerMigrations.joined(separator: ", "))): upgrade Northwind to restore it."
                    )
                }
            } catch let error as NorthwindError {
                throw error
            } catch {
                problems.append("its database cannot be opened: \(error)")
            }
        }
        guard problems.isEmpty else {
            BackupCheck(checkedAt: Timestamp.now.description, problems: problems).save(for: reader.file)
            throw .importFailed(
                "\(reader.file.lastPathComponent) is damaged, so nothing was restored: \(problems.prefix(5).joined(separator: "; "))."
            )
        }
        let store = try Store(StoreConfiguration(path: staging.path))
        // A backup is written by a Northwind, but its file can be edited: rows that break a field's rule are refused
        // as any other write of them would be.
        let violations: [String]
        do {
            violations = try store.pool.read { db in try RecordRules.violations(db) + ShopSettings.settingsViolations(db) }
        } catch {
            throw .storeUnavailable("The restored store could not be checked: \(error)")
        }
        guard violations.isEmpty else {
            try store.close()
            throw .importFailed(
                "\(reader.file.lastPathComponent) holds values no Northwind writes, so nothing was restored: \(violations.prefix(5).joined(separator: "; "))."
            )
        }
        try Backoffice(store: store).startNewSyncEpoch()
        try store.close()
        do {
            let queue = try open(staging.path, readonly: false)
            try queue.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
            try queue.close()
        } catch {
            throw .storeUnavailable("The restored store could not be closed cleanly: \(error)")
        }
    }

    private static func open(_ path: String, readonly: Bool) throws(NorthwindError) -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.busyMode = .timeout(10)
        do {
            return try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw .storeUnavailable("Cannot open \(path): \(error)")
        }
    }

    private static func makePlan(_ reader: BackupReader, over target: StoreFiles) throws(NorthwindError) -> RestorePlan {
        let manifest = reader.manifest
        let known = Schema.migrator.migrations
        var plan = RestorePlan(
            file: reader.file,
            backup: manifest,
            target: target.path,
            targetExists: target.exists,
            targetRows: 0,
            migrationsToApply: known.filter { !manifest.migrations.contains($0) },
            newerMigrations: manifest.migrations.filter { !known.contains($0) },
            lostChanges: [:]
        )
        guard target.exists else { return plan }
        do {
            let current = try open(target.path, readonly: true)
            defer { try? current.close() }
            try current.read { db in
                // Sign-ins and settings are data too: a store that holds only those is not replaced without --force.
                for table in Store.syncedTables + ["credentials", "settings", "user_settings"] where try db.tableExists(table) {
                    plan.targetRows += try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
                }
                guard try db.tableExists("change_log") else { return }
                let membership = try? ShopSync.membership(db)
                plan.syncSite = membership?.siteCode
                // Changes after the backup: on the same store, those past its last change-log position; a backup
                // of another store replaces everything here.
                plan.targetSite = try StoreMetadata.siteCode(db)
                var after = plan.sameStore ? manifest.sync.lastChange : 0
                if membership != nil { after = max(after, Int64(try ShopSync.state(db, "uploadedThrough") ?? "0") ?? 0) }
                let local = membership != nil ? "AND origin = 'local' AND NOT localOnly" : ""
                for row in try Row.fetchAll(
                    db,
                    sql: "SELECT tableName, count(DISTINCT recordID) FROM change_log WHERE seq > ? \(local) GROUP BY tableName",
                    arguments: [after]
                ) {
                    plan.lostChanges[row[0]] = row[1]
                }
            }
        } catch let error as NorthwindError {
            throw error
        } catch {
            throw .storeUnavailable("Cannot read the store at \(target.path) to plan the restore: \(error)")
        }
        return plan
    }
}

extension Backups {
    /// A store that is an older state of itself (restored, or its file put back): every zone fetched again, the
    /// site taken over (the server has taken batches this state never knew of), and orders neither executed nor
    /// cancelled until that full sync has brought back what shipped since.
    static func startOverAsRestored(_ db: Database) throws {
        try SyncEngineSide.noteLostWindow(db)
        try ShopSync.refetchEverything(db)
        try db.execute(sql: "DELETE FROM user_setting_tokens")
        try ShopSync.takeOverSite(db)
        try ShopSync.setState(db, "restoredUntilFullSync", Timestamp.now.description)
    }
}

extension BackofficeFeature {
    /// After a restore: forget every change token, so that the next sync fetches all the server has (and removes
    /// what it no longer has) while this store's own unsent changes still go up. Batch IDs are random, so the
    /// change-log positions the backup repeats are never taken for batches the old store sent.
    func startNewSyncEpoch() throws(NorthwindError) {
        do {
            try store.pool.write { db in try Backups.startOverAsRestored(db) }
        } catch {
            throw NorthwindError.translating(error)
        }
    }
}
