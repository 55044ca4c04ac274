import Foundation
import GRDB
import NorthwindStore

extension Backups {
    /// Writes a backup of this store into `folder`, while the store goes on serving and writing.
    ///
    /// The database is copied by SQLite's online backup inside one read transaction, so it is the store at one
    /// instant; the large pictures that instant refers to are linked (or copied) in the same transaction. Writers
    /// are never blocked: a read in WAL mode holds no lock they need. The copy is checked (`integrity_check`,
    /// `foreign_key_check`), archived, read back and checked against its manifest before it takes its name.
    public func create(in folder: BackupFolder, kind: BackupKind) async throws(NorthwindError) -> BackupListing {
        let store = self.store
        return try await Self.offThread { () throws(NorthwindError) in
            try BackupWriter.write(from: store.pool, pictures: store.binaries.directory, storePath: store.configuration.path, to: folder, kind: kind)
        }
    }

    /// Runs blocking file work on a thread of its own, not on Swift's cooperative pool.
    static func offThread<T: Sendable>(_ work: @escaping @Sendable () throws(NorthwindError) -> T) async throws(NorthwindError) -> T {
        let result: Result<T, NorthwindError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: Result { () throws(NorthwindError) in try work() })
            }
        }
        return try result.get()
    }
}

enum BackupWriter {
    /// A picture the snapshot names was removed before it could be linked: a writer replaced it after the snapshot
    /// began. Another snapshot will name the new one.
    private struct PictureGone: Error {}

    static func write(
        from reader: some DatabaseReader,
        pictures: URL,
        storePath: String,
        to folder: BackupFolder,
        kind: BackupKind
    ) throws(NorthwindError) -> BackupListing {
        try folder.prepare()
        folder.sweepStaging()
        let staging = folder.url.appendingPathComponent(BackupFolder.stagingPrefix + UUID().uuidString.lowercased(), isDirectory: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        // Readable by its owner only, whatever the umask: the copy holds everything the store does.
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storeUnavailable("Cannot write in the backup folder \(folder.url.path): \(error.localizedDescription)")
        }
        // Held while this backup runs, so that a sweep tells it from one left by a killed backup.
        let lock = StoreLock.exclusive(staging.appendingPathComponent(BackupFolder.stagingLock))
        defer { withExtendedLifetime(lock) {} }
        var attempt = 0
        while true {
            attempt += 1
            do {
                for name in try FileManager.default.contentsOfDirectory(atPath: staging.path) where name != BackupFolder.stagingLock {
                    try FileManager.default.removeItem(at: staging.appendingPathComponent(name))
                }
                try FileManager.default.createDirectory(at: staging.appendingPathComponent("pictures"), withIntermediateDirectories: true)
                var manifest = try snapshot(from: reader, pictures: pictures, storePath: storePath, into: staging, kind: kind)
                CrashPoint.reach("backup-snapshot")
                return try archive(&manifest, staging: staging, folder: folder)
            } catch is PictureGone where attempt < 5 {
                continue
            } catch is PictureGone {
                throw .storeUnavailable("The store's pictures kept changing while the backup ran; try again in a moment.")
            } catch let error as NorthwindError {
                throw error
            } catch {
                throw .storeUnavailable("The backup failed: \(error)")
            }
        }
    }

    /// Copies the database and its pictures, as of one instant, into `staging`, and says what they hold.
    private static func snapshot(
        from reader: some DatabaseReader,
        pictures: URL,
        storePath: String,
        into staging: URL,
        kind: BackupKind
    ) throws -> BackupManifest {
        let copy = staging.appendingPathComponent("northwind.sqlite")
        // guide: begin backup-snapshot
        var manifest = try reader.read { db in
            // The read transaction's snapshot starts with its first read; everything below sees that one instant.
            let createdAt = Timestamp.now
            let destination = try DatabaseQueue(path: copy.path)
            try destination.writeWithoutTransaction { target in try db.backup(to: target) }
            try destination.close()
            let names = try ExternalStorage.referencedFiles(db)
            for name in names.sorted() {
                try linkOrCopy(pictures.appendingPathComponent(name), to: staging.appendingPathComponent("pictures/" + name))
            }
            // guide: end backup-snapshot
            var counts: [String: Int] = [:]
            for table in Store.syncedTables where try db.tableExists(table) {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            let membership = try ShopSync.membership(db)
            return BackupManifest(
                createdAt: createdAt.description,
                kind: kind,
                app: .init(version: NorthwindVersion.current),
                store: .init(siteCode: try StoreMetadata.siteCode(db), path: storePath),
                sqlite: .init(
                    version: try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "",
                    pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0,
                    pageCount: try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                ),
                migrations: try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid"),
                counts: counts,
                pictures: .init(count: names.count, bytes: 0),
                sync: .init(
                    site: membership?.siteCode,
                    uploadedThrough: Int64(try ShopSync.state(db, "uploadedThrough") ?? "0") ?? 0,
                    lastChange: try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0,
                    pendingChanges: membership == nil ? 0 : try ShopSync.pendingCount(db)
                ),
                entries: []
            )
        }
        // A single file, not in WAL mode: the archive holds no -wal, and a restore opens it as it is.
        let queue = try DatabaseQueue(path: copy.path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        let problems = try StoreCheck.problems(in: queue)
        try queue.close()
        guard problems.isEmpty else {
            throw NorthwindError.storeUnavailable(
                "The store failed its own check, so no backup was written: \(problems.prefix(5).joined(separator: "; ")). Restore the newest good backup."
            )
        }
        let database = try sha256(of: copy)
        manifest.entries.append(
            .init(path: BackupManifest.databaseEntry, mediaType: "application/vnd.sqlite3", size: database.size, sha256: database.sha256)
        )
        let pictureFolder = staging.appendingPathComponent("pictures")
        for name in try FileManager.default.contentsOfDirectory(atPath: pictureFolder.path).sorted() {
            let hash = try sha256(of: pictureFolder.appendingPathComponent(name))
            manifest.entries.append(
                .init(path: BackupManifest.pictureFolder + name, mediaType: "application/octet-stream", size: hash.size, sha256: hash.sha256)
            )
            manifest.pictures.bytes += hash.size
        }
        return manifest
    }

    private static func linkOrCopy(_ source: URL, to destination: URL) throws {
        if link(source.path, destination.path) == 0 { return }
        if errno == ENOENT { throw PictureGone() }
        do {
            try FileManager.default.copyItem(at: source, to: destination)
        } catch {
            if !FileManager.default.fileExists(atPath: source.path) { throw PictureGone() }
            throw error
        }
    }

    /// Writes the archive under a hidden name, reads it back against the manifest, then gives it its name.
    private static func archive(_ manifest: inout BackupManifest, staging: URL, folder: BackupFolder) throws(NorthwindError) -> BackupListing {
        // Assembled in this backup's own staging folder (no other backup writes there), then named in place.
        let partial = staging.appendingPathComponent("backup.nwbackup.partial")
        defer { try? FileManager.default.removeItem(at: partial) }
        let writer = try ArchiveWriter(creating: partial, mediaType: BackupManifest.mediaType)
        try writer.add("manifest.json", try encode(manifest), compress: true)
        let checksums = manifest.entries.map { "\($0.sha256)  \($0.path)\n" }.joined()
        try writer.add(BackupManifest.checksumsEntry, Data(checksums.utf8), compress: true)
        try writer.add(BackupManifest.databaseEntry, file: staging.appendingPathComponent("northwind.sqlite"), compress: true)
        for entry in manifest.entries where entry.path.hasPrefix(BackupManifest.pictureFolder) {
            // Pictures are compressed already.
            try writer.add(entry.path, file: staging.appendingPathComponent(entry.path), compress: false)
        }
        _ = try BackupReader(file: partial).verifyEntries()
        try StoreFiles.syncFile(partial)
        do {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: partial.path)
        } catch {
            throw .storeUnavailable("Cannot protect the backup \(partial.path): \(error.localizedDescription)")
        }
        let final = try folder.name(partial, site: manifest.store.siteCode, at: manifest.created, kind: manifest.kind)
        try StoreFiles.syncFile(final)
        BackupCheck(checkedAt: Timestamp.now.description, problems: []).save(for: final)
        return BackupListing(file: final)
    }

    static func encode(_ value: some Encodable) throws(NorthwindError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw .storeUnavailable("Cannot write JSON: \(error)")
        }
    }
}

/// SQLite's own checks of a database file: its structure and its foreign keys.
enum StoreCheck {
    static func problems(in db: some DatabaseReader) throws -> [String] {
        try db.read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            let keys = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row in
                "a row of \(row[0] as String? ?? "?") refers to a missing row of \(row[2] as String? ?? "?")"
            }
            return integrity + keys
        }
    }
}
