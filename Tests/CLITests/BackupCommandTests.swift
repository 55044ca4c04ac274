import Foundation
import GRDB
import Northwind
import NorthwindLoading
import NorthwindStore
import Testing

@testable import NorthwindTestSupport

@Suite("Backups on the command line", .serialized)
struct BackupCommandTests {
    /// A closed demo store with one large picture, a backup folder, and the environment that points there.
    struct Fixture {
        let place = BackupPlace()
        let store: StoreFiles
        let site: String
        var environment: [String: String] {
            [
                "NORTHWIND_BACKUP_DIRECTORY": place.folder.url.path,
                "NORTHWIND_SETTINGS": place.directory.appendingPathComponent("none.json").path,
            ]
        }

        init(pictureSeed: UInt64 = 1) async throws {
            store = place.fresh("store")
            let backoffice = try Backoffice.open(StoreConfiguration(path: store.path), seedIfCreated: true)
            try await backoffice.catalogue.setPicture(categoryID: 1, largePicture(seed: pictureSeed))
            site = try await backoffice.sync.siteCode()
            try backoffice.store.close()
        }

        func run(_ arguments: [String], extra: [String: String] = [:]) async throws -> CLI.Result {
            try await CLI.run(arguments + ["--store", store.path], environment: environment.merging(extra) { $1 })
        }

        /// The site code and category picture of the store, opened as the next program would open it.
        func contents() async throws -> (site: String, picture: BinaryContent?) {
            let backoffice = try Backoffice.open(StoreConfiguration(path: store.path), seedIfCreated: false)
            defer { try? backoffice.store.close() }
            return (try await backoffice.sync.siteCode(), try await backoffice.catalogue.picture(categoryID: 1))
        }
    }

    @Test func createListAndVerifySayWhatTheyDid() async throws {
        // Given a store
        let fixture = try await Fixture()
        // When it is backed up, the backups listed and the backup verified
        let created = try await fixture.run(["backup", "create"])
        let listed = try await fixture.run(["backup", "list"])
        let name = try #require(fixture.place.folder.list().first?.name)
        let verified = try await fixture.run(["backup", "verify", name])
        // Then each says so plainly
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("Backed up to \(fixture.place.folder.url.path)/northwind-\(fixture.site)-"))
        #expect(created.stdout.contains("77 products, 830 orders, 1 picture file; checked."))
        #expect(listed.stdout.contains(name) && listed.stdout.contains("manual") && listed.stdout.contains("verified"), "\(listed.stdout)")
        #expect(verified.status == 0)
        #expect(verified.stdout.contains("Verified:"))
    }

    @Test func aDryRunSaysWhatWouldHappenAndChangesNothing() async throws {
        // Given a backup of a store, and a product renamed since
        let fixture = try await Fixture()
        let output = fixture.place.directory.appendingPathComponent("before.nwbackup").path
        #expect(try await fixture.run(["backup", "create", "-o", output]).status == 0)
        #expect(try await fixture.run(["products", "edit", "1", "--name", "Renamed since"]).status == 0)
        // When a restore is tried as a dry run
        let dry = try await fixture.run(["backup", "restore", output, "--dry-run"])
        // Then it names the change it would lose and that --force is needed, and the rename stands
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("Lost for good: 1 change made after the backup (1 in products)"), "\(dry.stdout)")
        #expect(dry.stdout.contains("Dry run: nothing changed. A real restore needs --force."))
        #expect(try await fixture.run(["products", "show", "1"]).stdout.contains("Renamed since"))
    }

    @Test func ifNoStoreRestoresOnlyWhereThereIsNone() async throws {
        // Given a backup, and a machine with no store yet
        let fixture = try await Fixture()
        let output = fixture.place.directory.appendingPathComponent("first.nwbackup").path
        #expect(try await fixture.run(["backup", "create", "-o", output]).status == 0)
        let newMachine = fixture.place.fresh("new-machine")
        let environment = fixture.environment
        // When it is restored with --if-no-store there, twice
        let first = try await CLI.run(["backup", "restore", output, "--if-no-store", "--store", newMachine.path], environment: environment)
        let second = try await CLI.run(["backup", "restore", output, "--if-no-store", "--store", newMachine.path], environment: environment)
        // Then the first restores it, and the second leaves the store alone
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Restored \(newMachine.path)"))
        #expect(second.status == 0)
        #expect(second.stdout.contains("nothing restored (--if-no-store)"))
    }

    @Test func aRestoreWithoutForceOverDataIsRefused() async throws {
        // Given a backup of another store
        let fixture = try await Fixture()
        let other = try await Fixture(pictureSeed: 2)
        let output = other.place.directory.appendingPathComponent("other.nwbackup").path
        #expect(try await other.run(["backup", "create", "-o", output]).status == 0)
        // When it is restored over the store without --force
        let result = try await fixture.run(["backup", "restore", output])
        // Then it is refused, and the store is still its own
        #expect(result.status != 0)
        #expect(result.stderr.contains("add --force"), "\(result.stderr)")
        #expect(try await fixture.contents().site == fixture.site)
    }

    /// Every step a restore takes, in order; a kill at those before the journal leaves the old store, at the journal
    /// or after it the new one.
    static let crashPoints = [
        ("restore-backed-up", false), ("restore-staged", false), ("restore-journal", true), ("restore-aside", true),
        ("restore-aside-done", true), ("restore-database-in", true), ("restore-pictures-in", true), ("restore-journal-removed", true),
    ]

    @Test(.enabled(if: FaultSwitches.compiledIn, "crash points are in debug builds only"))
    func aBackupSweepsAwayWhatAKilledBackupLeft() async throws {
        // Given a backup killed with SIGKILL after its snapshot, which left its staging folder, a minute ago
        let fixture = try await Fixture()
        let killed = try await fixture.run(["backup", "create"], extra: ["NORTHWIND_CRASH_AT": "backup-snapshot"])
        #expect(killed.crashed, "the backup was to be killed: \(killed.stderr)")
        let left = try Self.stagingFolders(fixture)
        #expect(left.count == 1)
        for name in left {
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-120)],
                ofItemAtPath: fixture.place.folder.url.appendingPathComponent(name).path
            )
        }
        // When the next backup runs
        #expect(try await fixture.run(["backup", "create"]).status == 0)
        // Then the leftover is gone, and the folder holds the one backup that finished
        #expect(try Self.stagingFolders(fixture).isEmpty)
        #expect(fixture.place.folder.list().count == 1)
    }

    static func stagingFolders(_ fixture: Fixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixture.place.folder.url.path).filter { $0.hasPrefix(".staging-") }
    }

    @Test(.enabled(if: FaultSwitches.compiledIn, "crash points are in debug builds only"), arguments: crashPoints)
    func aRestoreKilledAtAnyStepLeavesTheOldStoreOrTheNewOneWhole(point: String, isNew: Bool) async throws {
        // Given a store with its own picture, and a backup of another with a different one
        let fixture = try await Fixture(pictureSeed: 1)
        let other = try await Fixture(pictureSeed: 2)
        let output = other.place.directory.appendingPathComponent("other.nwbackup").path
        #expect(try await other.run(["backup", "create", "-o", output]).status == 0)
        // When a restore is killed with SIGKILL at this step
        let killed = try await fixture.run(["backup", "restore", output, "--force"], extra: ["NORTHWIND_CRASH_AT": point])
        #expect(killed.crashed, "the restore was to be killed at \(point): \(killed.stderr)")
        // Then the next program to open the store finds one store whole: its site code and picture agree
        let (site, picture) = try await fixture.contents()
        let expected = isNew ? (other.site, largePicture(seed: 2)) : (fixture.site, largePicture(seed: 1))
        #expect(site == expected.0, "killed at \(point)")
        #expect(picture == expected.1, "killed at \(point)")
        #expect(!FileManager.default.fileExists(atPath: fixture.store.path + ".restoring"), "killed at \(point)")
    }
}
