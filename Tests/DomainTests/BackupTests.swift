import Crypto
import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// Each synced table's rows, hashed in rowid order: equal checksums, equal tables.
func tableChecksums(_ reader: some DatabaseReader, tables: [String] = Store.syncedTables) throws -> [String: String] {
    try reader.read { db in
        var sums: [String: String] = [:]
        for table in tables {
            var hash = SHA256()
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid") { hash.update(data: Data(row.description.utf8)) }
            sums[table] = hash.finalize().map { String(format: "%02x", $0) }.joined()
        }
        return sums
    }
}

@Suite("Backups")
struct BackupTests {
    static let demo = DemoData.Options(scale: 1, seed: 3, endDate: LocalDate("2026-06-30") ?? .today)

    @Test func theDrillRestoresEveryRowAndPictureAsOfTheBackupWhileWritesGoOn() async throws {
        // Given a demo store with two pictures large enough to be files, and a stream of stock receipts
        let source = try TemporaryStore(seed: Self.demo)
        let place = BackupPlace()
        let b = source.backoffice
        try await b.catalogue.setPicture(categoryID: 1, largePicture(seed: 1))
        try await b.people.setPhoto(employeeID: 2, largePicture(seed: 2))
        #expect(try FileManager.default.contentsOfDirectory(atPath: source.store.binaries.directory.path).count == 2)
        let productID: Int64 = 1
        let before = try b.catalogue.product(id: productID).product.unitsInStock
        let receipts = Task {
            for _ in 0..<200 { _ = try await b.stock.receive(productID: productID, quantity: 1) }
        }
        // When it is backed up while the receipts go on, then restored into a folder of its own
        let backup = try await b.backups.create(in: place.folder, kind: .manual)
        try await receipts.value
        let target = place.fresh()
        _ = try await Restore.perform(backup.file, over: target, folder: place.folder, force: false)

        // Then the restored store has the backup's rows, its untouched tables equal the source's, its pictures are
        // the same bytes, and its stock agrees with its own movements: one instant, not a mix
        let restored = try Backoffice.open(StoreConfiguration(path: target.path), seedIfCreated: false)
        let manifest = try #require(backup.manifest)
        for (table, count) in manifest.counts {
            #expect(try await restored.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") } == count, "\(table)")
        }
        let untouched = Store.syncedTables.filter { !["products", "stock_movements"].contains($0) }
        #expect(try tableChecksums(restored.store.pool, tables: untouched) == tableChecksums(source.store.pool, tables: untouched))
        #expect(try await restored.catalogue.picture(categoryID: 1) == largePicture(seed: 1))
        #expect(try await restored.people.photo(employeeID: 2) == largePicture(seed: 2))
        let (units, received) = try await restored.store.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT unitsInStock FROM products WHERE id = ?", arguments: [productID]) ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM stock_movements WHERE productID = ? AND reason = 'received'", arguments: [productID])
                    ?? 0
            )
        }
        #expect(units == before + received)
    }

    @Test func aBackupListsItselfAsVerifiedAndVerifyChecksItAgain() async throws {
        // Given a backup just made
        let source = try TemporaryStore(seed: Self.demo)
        let place = BackupPlace()
        let made = try await source.backoffice.backups.create(in: place.folder, kind: .manual)
        // When the folder is listed and the backup verified
        let listed = place.folder.list()
        let verification = try await BackupFolder.verify(made.file)
        // Then it is there, verified, with the store's counts, and verifying again finds nothing wrong
        #expect(listed.map(\.name) == [made.name])
        #expect(listed.first?.isVerified == true)
        #expect(listed.first?.manifest?.counts["orders"] == 830)
        #expect(verification.problems.isEmpty)
        #expect(verification.newerMigrations.isEmpty)
    }

    @Test func aBackupWithAChangedByteFailsVerifyAndIsNotRestored() async throws {
        // Given a backup whose picture bytes were changed after it was written (the CRC fixed up, as bit rot on a
        // copy that re-zipped it would)
        let source = try TemporaryStore(seed: Self.demo)
        try await source.backoffice.catalogue.setPicture(categoryID: 1, largePicture(seed: 1))
        let place = BackupPlace()
        let made = try await source.backoffice.backups.create(in: place.folder, kind: .manual)
        let tampered = try rewrite(made.file, in: place) { path, data in
            path.hasPrefix("pictures/") ? largePicture(seed: 9).bytes : data
        }
        // When it is verified, and restored
        let verification = try await BackupFolder.verify(tampered)
        let target = place.fresh()
        let error = await northwindError { _ = try await Restore.perform(tampered, over: target, folder: place.folder, force: false) }
        // Then verify names the picture, and the restore refuses and leaves no store
        #expect(verification.problems.contains { $0.contains("pictures/") && $0.contains("checksum") })
        #expect(error?.description.contains("damaged") == true)
        #expect(!target.exists)
    }

    @Test func aRestoreOverAStoreWithDataNeedsForceAndBacksItUpFirst() async throws {
        // Given a backup of one store, and another store that holds data and is closed
        let place = BackupPlace()
        let made = try await TemporaryStore(seed: Self.demo).backoffice.backups.create(in: place.folder, kind: .manual)
        let target = place.fresh("existing")
        let existing = try Backoffice.open(StoreConfiguration(path: target.path), seedIfCreated: true)
        let existingSite = try await existing.sync.siteCode()
        try existing.store.close()
        // When it is restored without --force, then with it
        let refused = await northwindError { _ = try await Restore.perform(made.file, over: target, folder: place.folder, force: false) }
        #expect(try siteCode(at: target) == existingSite)
        let outcome = try await Restore.perform(made.file, over: target, folder: place.folder, force: true)
        // Then the first is refused and says --force; the second backs the old store up (pre-restore), then
        // replaces it
        #expect(refused?.description.contains("--force") == true)
        let saved = try #require(outcome.preRestoreBackup)
        #expect(try BackupFolder.manifest(of: saved).kind == .preRestore)
        #expect(try BackupFolder.manifest(of: saved).store.siteCode == existingSite)
        #expect(try siteCode(at: target) == made.manifest?.store.siteCode)
    }

    @Test func aRestoreIsRefusedWhileTheStoreIsOpen() async throws {
        // Given a store that is open (as a running server has it) and a backup
        let place = BackupPlace()
        let open = try TemporaryStore(seed: Self.demo)
        let made = try await open.backoffice.backups.create(in: place.folder, kind: .manual)
        // When the backup is restored over it
        let error = await northwindError {
            _ = try await Restore.perform(made.file, over: StoreFiles(path: open.path), folder: place.folder, force: true)
        }
        // Then it is refused, saying why, and the store is untouched
        #expect(error?.description.contains("open in another program") == true)
        #expect(try open.count("SELECT count(*) FROM orders") == 830)
    }

    @Test func aBackupFromANewerNorthwindIsRefusedAndSaysToUpgrade() async throws {
        // Given a backup of a store that a newer Northwind has migrated
        let place = BackupPlace()
        let source = try TemporaryStore(seed: Self.demo)
        try source.store.close()
        let queue = try DatabaseQueue(path: source.path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')") }
        let made = try BackupWriter.write(
            from: queue,
            pictures: StoreFiles(path: source.path).external,
            storePath: source.path,
            to: place.folder,
            kind: .manual
        )
        try queue.close()
        // When it is planned and restored
        let target = place.fresh()
        let plan = try await Restore.plan(made.file, over: target)
        let error = await northwindError { _ = try await Restore.perform(made.file, over: target, folder: place.folder, force: false) }
        // Then the plan says it, and the restore refuses, asks for an upgrade, and creates no store
        #expect(plan.newerMigrations == ["v99: from the future"])
        #expect(plan.lines.contains { $0.contains("upgrade Northwind") })
        #expect(error?.description.contains("Upgrade Northwind") == true)
        #expect(!target.exists)
    }

    @Test func aBackupFromAnOlderNorthwindIsMigratedForward() async throws {
        // Given a backup of a store that an older Northwind left, before settings existed
        let place = BackupPlace()
        let old = try OldStoreFile(upTo: "v13: sync refetch progress") { db in
            try db.execute(sql: "INSERT INTO categories (recordID, name) VALUES ('c1', 'Beverages')")
        }
        let queue = try DatabaseQueue(path: old.path)
        let made = try BackupWriter.write(
            from: queue,
            pictures: StoreFiles(path: old.path).external,
            storePath: old.path,
            to: place.folder,
            kind: .manual
        )
        try queue.close()
        // When it is restored
        let target = place.fresh()
        let outcome = try await Restore.perform(made.file, over: target, folder: place.folder, force: false)
        // Then the plan named the migrations to apply, and the store opens with every migration and its row
        #expect(outcome.plan.migrationsToApply.contains("v14: settings"))
        let restored = try Backoffice.open(StoreConfiguration(path: target.path), seedIfCreated: false)
        let applied = try await restored.store.pool.read { db in try Schema.migrator.hasCompletedMigrations(db) }
        #expect(applied)
        #expect(try await restored.store.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM categories") } == ["Beverages"])
    }

    @Test func aRestoredStoreStartsANewSyncEpoch() async throws {
        // Given a backup of a store that has joined sync and fetched a zone
        let place = BackupPlace()
        let source = try TemporaryStore(seed: Self.demo)
        try await source.backoffice.syncEngine.join(ShopSyncTests.membership("HQ", role: "hq"), containerHasData: false)
        try await source.store.pool.write { db in try ShopSync.setState(db, "token:catalog", "t42") }
        let made = try await source.backoffice.backups.create(in: place.folder, kind: .manual)
        // When it is restored
        let target = place.fresh()
        _ = try await Restore.perform(made.file, over: target, folder: place.folder, force: false)
        // Then the zone's token is gone and it is fetched again from scratch, orders wait for a full sync, and its
        // next batch's ID is not made from its change-log positions (which repeat the old store's)
        let restored = try Backoffice.open(StoreConfiguration(path: target.path), seedIfCreated: false)
        #expect(try await restored.syncEngine.token(zone: "catalog") == nil)
        let refetching = try await restored.store.pool.read { db in try ShopSync.state(db, "refetching:catalog") }
        #expect(refetching == "1")
        #expect(try await restored.sync.awaitsFullSyncAfterRestore())
        let batch = try #require(try await restored.syncEngine.nextOutboxBatch())
        #expect(batch.batchID.wholeMatch(of: /HQ-[0-9a-f-]{36}/) != nil, "\(batch.batchID)")
    }

    @Test func thePlanNamesTheChangesARestoreWouldLose() async throws {
        // Given a backup, then two products renamed in the store afterwards (which does not sync), and the store closed
        let place = BackupPlace()
        let source = try TemporaryStore(seed: Self.demo)
        let made = try await source.backoffice.backups.create(in: place.folder, kind: .manual)
        for id: Int64 in [1, 2] {
            var product = try source.backoffice.catalogue.product(id: id).product
            product.name += " (renamed)"
            _ = try await source.backoffice.catalogue.update(product)
        }
        // When a restore is planned over it
        let plan = try await Restore.plan(made.file, over: StoreFiles(path: source.path))
        // Then it says that those two changes would be lost
        #expect(plan.lostChanges == ["products": 2])
        #expect(plan.lines.contains { $0.hasPrefix("Lost for good: 2 changes made after the backup") })
    }

    @Test func aSweepLeavesTheStagingFolderOfABackupStillRunning() async throws {
        // Given a staging folder whose writer holds its lock, made a while ago
        let place = BackupPlace()
        let store = try TemporaryStore(seed: Self.demo)
        let running = place.folder.url.appendingPathComponent(".staging-running", isDirectory: true)
        try FileManager.default.createDirectory(at: running, withIntermediateDirectories: true)
        let lock = try #require(StoreLock.exclusive(running.appendingPathComponent(".writer.lock")))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: running.path)
        // When another backup runs
        _ = try await store.backoffice.backups.create(in: place.folder, kind: .manual)
        // Then the running backup's folder is still there
        #expect(FileManager.default.fileExists(atPath: running.path))
        lock.release()
    }

    @Test func retentionKeepsTheNewestOfEachHourDayWeekAndMonthAndTheNewestVerified() throws {
        // Given a scheduled backup every hour for 40 days, the newest unchecked, and a manual one long ago
        let now = Timestamp(LocalDate("2026-11-25") ?? .today, hour: 12)
        var listings = (0..<(40 * 24)).map { hoursAgo in
            Self.listing("s\(hoursAgo)", at: now.adding(seconds: -Int64(hoursAgo) * 3600), kind: .scheduled, verified: hoursAgo > 0)
        }
        listings.append(Self.listing("manual", at: now.adding(seconds: -400 * 86400), kind: .manual, verified: true))
        // When a policy of 3 hourly, 2 daily, 2 weekly and 2 monthly is applied
        let pruned = Set(BackupRetention(hourly: 3, daily: 2, weekly: 2, monthly: 2).prunable(listings).map(\.name))
        let kept = Set(listings.map(\.name)).subtracting(pruned)
        // Then the newest of the last 3 hours, of the last 2 days (today's is the newest), of the last 2 weeks (from
        // Monday 23 November and Monday 16 November), and of the last 2 months stay, with the newest verified one
        // and the manual one
        let nov22 = 12 + 24 * 2 + 1  // Sunday 22 November 23:00, the newest of the week before this one
        let oct31 = 12 + 24 * 24 + 1  // 31 October 23:00, the newest of October
        #expect(kept == ["s0", "s1", "s2", "s13", "s\(nov22)", "s\(oct31)", "manual"])
    }

    static func listing(_ name: String, at time: Timestamp, kind: BackupKind, verified: Bool) -> BackupListing {
        let manifest = BackupManifest(
            createdAt: time.description,
            kind: kind,
            app: .init(version: NorthwindVersion.current),
            store: .init(siteCode: "HQ", path: "/tmp/x"),
            sqlite: .init(version: "3", pageSize: 4096, pageCount: 1),
            migrations: [],
            counts: [:],
            pictures: .init(count: 0, bytes: 0),
            sync: .init(site: nil, uploadedThrough: 0, lastChange: 0, pendingChanges: 0),
            entries: []
        )
        return BackupListing(
            file: URL(fileURLWithPath: "/tmp/\(name)"),
            size: 1,
            manifest: manifest,
            check: verified ? BackupCheck(checkedAt: time.description, problems: []) : nil
        )
    }

    /// A copy of `file` with each entry's bytes passed through `change`, written as a fresh archive (mimetype first).
    func rewrite(_ file: URL, in place: BackupPlace, _ change: (String, Data) -> Data) throws -> URL {
        let reader = try BackupReader(file: file)
        let copy = place.directory.appendingPathComponent("tampered.nwbackup")
        let writer = try ArchiveWriter(creating: copy, mediaType: BackupManifest.mediaType)
        for path in reader.archive.paths where path != "mimetype" {
            try writer.add(path, change(path, try reader.archive.read(path, limit: 1 << 30)), compress: false)
        }
        return copy
    }

    func siteCode(at files: StoreFiles) throws -> String {
        let queue = try DatabaseQueue(path: files.path)
        defer { try? queue.close() }
        return try queue.read { db in try StoreMetadata.siteCode(db) }
    }
}
