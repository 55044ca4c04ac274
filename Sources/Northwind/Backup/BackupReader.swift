import Foundation
import GRDB
import NorthwindStore

/// A `.nwbackup` opened for reading: its table of contents checked (`SafeArchive`) and its manifest read.
struct BackupReader {
    let file: URL
    let archive: SafeArchive
    let manifest: BackupManifest

    /// Generous bounds: a store of a thousand times the classic data is about 1 GiB, and its pictures are files.
    static let limits = ArchiveLimits(entries: 1_000_000, totalBytes: 1 << 40, compressionRatio: 1000)

    init(file: URL) throws(NorthwindError) {
        self.file = file
        archive = try SafeArchive(url: file, mediaType: BackupManifest.mediaType, limits: Self.limits, what: "Northwind backup")
        let data = try archive.read("manifest.json", limit: 64 << 20)
        let manifest: BackupManifest
        do {
            manifest = try JSONDecoder().decode(BackupManifest.self, from: data)
        } catch {
            throw .importFailed("\(file.lastPathComponent) is not a Northwind backup: its manifest cannot be read (\(error)).")
        }
        guard manifest.format == BackupManifest.format else {
            throw .importFailed("\(file.lastPathComponent) is not a Northwind backup: its manifest's format is \(manifest.format).")
        }
        guard manifest.minReaderVersion <= BackupManifest.formatVersion else {
            throw .invalidState(
                "\(file.lastPathComponent) was made by Northwind \(manifest.app.version) in backup format \(manifest.formatVersion), which this Northwind (\(NorthwindVersion.current)) cannot read: upgrade Northwind to restore it."
            )
        }
        self.manifest = manifest
    }

    /// Checks that the archive holds exactly the manifest's entries, each with its size and SHA-256; with
    /// `unpackInto`, writes them there as they are read (the database as `northwind.sqlite`, pictures into
    /// `northwind.sqlite_external/`, the layout of a store). Returns the problems found.
    func verifyEntries(unpackInto store: StoreFiles? = nil) throws(NorthwindError) -> [String] {
        var problems: [String] = []
        let expected = Set(manifest.entries.map(\.path)).union(["mimetype", "manifest.json", BackupManifest.checksumsEntry])
        for path in archive.paths where !expected.contains(path) {
            problems.append("the archive holds \(path), which its manifest does not list")
        }
        for entry in manifest.entries {
            guard archive.contains(entry.path) else {
                problems.append("\(entry.path) is listed in the manifest but missing from the archive")
                continue
            }
            let actual: (sha256: String, size: Int64)
            if let store {
                actual = try archive.extract(entry.path, to: try Self.destination(of: entry.path, in: store), limit: entry.size)
            } else {
                actual = try archive.stream(entry.path, limit: entry.size) { _ in }
            }
            if actual.size != entry.size {
                problems.append("\(entry.path) holds \(actual.size) bytes, not the \(entry.size) its manifest says")
            } else if actual.sha256 != entry.sha256 {
                problems.append("\(entry.path) does not match its checksum")
            }
        }
        if !manifest.entries.contains(where: { $0.path == BackupManifest.databaseEntry }) {
            problems.append("the manifest lists no database")
        }
        return problems
    }

    /// Where an entry goes in a store's layout; refused when it is neither the database nor a picture file.
    private static func destination(of path: String, in store: StoreFiles) throws(NorthwindError) -> URL {
        if path == BackupManifest.databaseEntry { return store.database }
        let name = String(path.dropFirst(BackupManifest.pictureFolder.count))
        guard path.hasPrefix(BackupManifest.pictureFolder), !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw .importFailed("The backup's entry \(path) is neither its database nor a picture.")
        }
        return store.external.appendingPathComponent(name)
    }

    /// Everything `backup verify` checks: the entries against the manifest, then the database unpacked into a
    /// temporary folder (SQLite's `integrity_check` and `foreign_key_check`, every picture it names present, and
    /// whether it comes from a newer Northwind). Records the result beside the file.
    func verify() throws(NorthwindError) -> BackupVerification {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-verify-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = StoreFiles(path: folder.appendingPathComponent("northwind.sqlite").path)
        do {
            try FileManager.default.createDirectory(at: store.external, withIntermediateDirectories: true)
        } catch {
            throw .storeUnavailable("Cannot make a temporary folder to check the backup in: \(error.localizedDescription)")
        }
        var problems = try verifyEntries(unpackInto: store)
        var newer: [String] = []
        if FileManager.default.fileExists(atPath: store.path) {
            do {
                let facts = try Self.inspect(store)
                problems += facts.problems
                newer = facts.newerMigrations
            } catch {
                problems.append("its database cannot be opened: \(error)")
            }
        }
        BackupCheck(checkedAt: Timestamp.now.description, problems: problems).save(for: file)
        return BackupVerification(manifest: manifest, problems: problems, newerMigrations: newer)
    }

    /// SQLite's checks of an unpacked database, the pictures it names that are absent, and the migrations it holds
    /// that this build does not know.
    static func inspect(_ store: StoreFiles) throws -> (problems: [String], newerMigrations: [String]) {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: store.path, configuration: configuration)
        defer { try? queue.close() }
        var problems = try StoreCheck.problems(in: queue)
        let (referenced, applied) = try queue.read { db in
            (try ExternalStorage.referencedFiles(db), try Schema.migrator.appliedIdentifiers(db))
        }
        let known = Set(try queue.read { db in try Schema.migrator.appliedMigrations(db) })
        let present = Set((try? FileManager.default.contentsOfDirectory(atPath: store.external.path)) ?? [])
        for name in referenced.subtracting(present).sorted() {
            problems.append("the picture file \(name) that the database names is missing")
        }
        return (problems, applied.subtracting(known).sorted())
    }
}

/// What `backup verify` found.
public struct BackupVerification: Sendable {
    public var manifest: BackupManifest
    /// Empty when the backup is whole.
    public var problems: [String]
    /// Migrations in the backup that this build does not know: it comes from a newer Northwind and restores only
    /// there.
    public var newerMigrations: [String]
}

extension BackupFolder {
    /// Checks a backup file fully; see `BackupReader.verify`.
    public static func verify(_ file: URL) async throws(NorthwindError) -> BackupVerification {
        try await Backups.offThread { () throws(NorthwindError) in try BackupReader(file: file).verify() }
    }

    /// What a backup file's manifest says, read without unpacking the rest.
    public static func manifest(of file: URL) throws(NorthwindError) -> BackupManifest {
        try BackupReader(file: file).manifest
    }
}
