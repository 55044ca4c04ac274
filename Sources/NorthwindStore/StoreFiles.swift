import Foundation

/// The files that make up one store, and the one way to replace them all at once.
///
/// A store is the SQLite file, its `-wal` and `-shm`, and the `_external` folder of large pictures. A restore
/// builds the new store complete in `PATH.restoring/`, then swaps it in under a journal (`PATH.restore-journal`):
/// the old files move to `PATH.replaced/`, the new ones move in, and the journal goes. Whoever opens the store next
/// finishes a swap that a crash cut short, so the store is always either the old one or the new one, never the
/// new database beside the old write-ahead log.
public struct StoreFiles: Sendable {
    /// The SQLite file.
    public let path: String

    public init(path: String) { self.path = path }

    public var database: URL { URL(fileURLWithPath: path) }
    public var external: URL { URL(fileURLWithPath: path + "_external", isDirectory: true) }
    var companions: [URL] { [URL(fileURLWithPath: path + "-wal"), URL(fileURLWithPath: path + "-shm")] }
    var lockFile: URL { URL(fileURLWithPath: path + ".lock") }
    var journal: URL { URL(fileURLWithPath: path + ".restore-journal") }
    var replaced: URL { URL(fileURLWithPath: path + ".replaced", isDirectory: true) }

    /// Where a restore assembles the new store: a store of its own, `northwind.sqlite` and its `_external` folder.
    public var staging: StoreFiles { StoreFiles(path: path + ".restoring/northwind.sqlite") }
    var stagingFolder: URL { URL(fileURLWithPath: path + ".restoring", isDirectory: true) }

    public var exists: Bool { FileManager.default.fileExists(atPath: path) }

    /// Makes an empty staging area, removing what an earlier, abandoned restore left there.
    public func prepareStaging() throws(NorthwindError) {
        do {
            try? FileManager.default.removeItem(at: stagingFolder)
            try FileManager.default.createDirectory(at: staging.external, withIntermediateDirectories: true)
        } catch {
            throw .storeUnavailable("Cannot prepare \(stagingFolder.path) for the restore: \(error.localizedDescription)")
        }
    }

    public func discardStaging() { try? FileManager.default.removeItem(at: stagingFolder) }

    /// Swaps the staged store in for this one. The caller holds `lockExclusively()`, and the staged database has no
    /// write-ahead log left (it was closed). Each step is a rename, and `NORTHWIND_CRASH_AT=restore-…` can stop a
    /// debug build's process between any two of them.
    // guide: begin restore-swap
    public func swapInStaged() throws(NorthwindError) {
        do {
            try Data("restore\n".utf8).write(to: journal)
            try Self.syncFolder(of: journal)
            CrashPoint.reach("restore-journal")
            try rollForward()
        } catch let error as NorthwindError {
            throw error
        } catch {
            throw .storeUnavailable("The restore could not swap the store in at \(path): \(error.localizedDescription)")
        }
    }
    // guide: end restore-swap

    /// Finishes a swap that was cut short, or clears what an abandoned staging left. Called when the store opens,
    /// holding the lock exclusively.
    public func recover() throws(NorthwindError) {
        let fileManager = FileManager.default
        do {
            if fileManager.fileExists(atPath: journal.path) {
                try rollForward()
            } else {
                // Staging never reached the journal (the old store stands; the half-built new one goes), or the swap
                // was done and only its leftovers remain.
                for leftover in [stagingFolder, replaced] where fileManager.fileExists(atPath: leftover.path) {
                    try fileManager.removeItem(at: leftover)
                }
            }
        } catch let error as NorthwindError {
            throw error
        } catch {
            throw .storeUnavailable("An interrupted restore of \(path) could not be finished: \(error.localizedDescription)")
        }
    }

    /// Moves the old files aside while the staged database is still staged, then moves the staged files in. Every
    /// step checks what is already done, so running it again after a crash at any point ends in the same place.
    private func rollForward() throws {
        let fileManager = FileManager.default
        let staged = staging
        try fileManager.createDirectory(at: replaced, withIntermediateDirectories: true)
        if fileManager.fileExists(atPath: staged.path) {
            // The old database, its log and its pictures leave before the new database arrives: the new file must
            // never meet the old write-ahead log.
            for old in [database] + companions where fileManager.fileExists(atPath: old.path) {
                // Names never taken twice, so that a second run after a crash cannot collide with the first's.
                try fileManager.moveItem(at: old, to: replaced.appendingPathComponent(UUID().uuidString + "-" + old.lastPathComponent))
                CrashPoint.reach("restore-aside")
            }
            CrashPoint.reach("restore-aside-done")
            try fileManager.moveItem(at: staged.database, to: database)
            try Self.syncFolder(of: database)
            CrashPoint.reach("restore-database-in")
        }
        if fileManager.fileExists(atPath: staged.external.path) {
            if fileManager.fileExists(atPath: external.path) {
                try fileManager.moveItem(at: external, to: replaced.appendingPathComponent("external-\(UUID().uuidString)"))
            }
            try fileManager.moveItem(at: staged.external, to: external)
            try Self.syncFolder(of: database)
            CrashPoint.reach("restore-pictures-in")
        }
        try fileManager.removeItem(at: journal)
        try Self.syncFolder(of: journal)
        CrashPoint.reach("restore-journal-removed")
        try? fileManager.removeItem(at: replaced)
        try? fileManager.removeItem(at: stagingFolder)
    }

    /// Flushes a folder's entries (a rename, a new file) to disk.
    static func syncFolder(of file: URL) throws {
        let descriptor = open(file.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = fsync(descriptor)
    }

    /// Flushes a file's bytes to disk.
    public static func syncFile(_ file: URL) throws(NorthwindError) {
        let descriptor = open(file.path, O_RDONLY)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw .storeUnavailable("Cannot flush \(file.path) to disk: \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        try? syncFolder(of: file)
    }

    // MARK: Locks

    /// A shared hold on the store, kept by every process that has it open: a restore needs it alone.
    func lockShared() throws(NorthwindError) -> StoreLock {
        let lock = try StoreLock(file: lockFile)
        let fileManager = FileManager.default
        let leftovers = { [journal, stagingFolder, replaced].contains { fileManager.fileExists(atPath: $0.path) } }
        while true {
            if leftovers() {
                // A restore runs now (its lock is exclusive: wait for it), or one was cut short: finish it alone.
                guard lock.lock(exclusive: true, wait: true) else {
                    throw .storeUnavailable("Cannot lock \(lockFile.path): \(String(cString: strerror(errno)))")
                }
                try recover()
                lock.release()
            }
            guard lock.lock(exclusive: false, wait: true) else {
                throw .storeUnavailable("Cannot lock \(lockFile.path): \(String(cString: strerror(errno)))")
            }
            // A restore may have been killed while we waited: look again now that we hold the lock.
            guard leftovers() else { return lock }
            lock.release()
        }
    }

    /// The store to oneself, for a restore: refused while any other program (a server, a command) has it open.
    public func lockExclusively() throws(NorthwindError) -> StoreLock {
        let lock = try StoreLock(file: lockFile)
        guard lock.tryLock(exclusive: true) else {
            throw .storeUnavailable(
                "The store at \(path) is open in another program (is `northwind serve` running?). Stop it, then restore."
            )
        }
        return lock
    }
}

/// An advisory lock (flock) on a store's lock file, held until this object goes.
public final class StoreLock: Sendable {
    private let descriptor: Int32

    init(file: URL) throws(NorthwindError) {
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        descriptor = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .storeUnavailable("Cannot open \(file.path): \(String(cString: strerror(errno)))")
        }
    }

    func tryLock(exclusive: Bool) -> Bool { lock(exclusive: exclusive, wait: false) }

    /// `file`'s lock, held alone, or nil while another holder has it.
    public static func exclusive(_ file: URL) -> StoreLock? {
        guard let lock = try? StoreLock(file: file), lock.tryLock(exclusive: true) else { return nil }
        return lock
    }

    func lock(exclusive: Bool, wait: Bool) -> Bool {
        flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)) == 0
    }

    /// Lets go before this object does.
    public func release() { _ = flock(descriptor, LOCK_UN) }

    deinit { close(descriptor) }
}
