import Foundation
import NorthwindStore

/// The folder backups go to: outside the store and outside the program, so that neither losing the store nor
/// reinstalling the program loses them. `backup.directory`, else `$XDG_DATA_HOME/northwind/backups`.
public struct BackupFolder: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// The folder a setting names; empty means the data folder's `northwind/backups`.
    public static func resolve(_ setting: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> BackupFolder {
        if !setting.isEmpty { return BackupFolder(url: URL(fileURLWithPath: setting, isDirectory: true)) }
        let dataHome =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return BackupFolder(url: URL(fileURLWithPath: dataHome + "/northwind/backups", isDirectory: true))
    }

    /// Every backup here, newest first, each with what its manifest says and whether it was last verified good.
    public func list() -> [BackupListing] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(".nwbackup") && !$0.hasPrefix(".") }
            .map { BackupListing(file: url.appendingPathComponent($0)) }
            .sorted { ($0.createdAt, $0.name) > ($1.createdAt, $1.name) }
    }

    static let stagingPrefix = ".staging-"
    static let stagingLock = ".writer.lock"

    /// Removes the staging folders of backups that were killed: ones whose writer's lock is free. A folder younger
    /// than a minute is left, as its writer may not hold the lock yet.
    func sweepStaging(olderThan age: TimeInterval = 60) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        for name in names where name.hasPrefix(Self.stagingPrefix) {
            let staging = url.appendingPathComponent(name, isDirectory: true)
            let attributes = try? FileManager.default.attributesOfItem(atPath: staging.path)
            guard let modified = attributes?[.modificationDate] as? Date, Date().timeIntervalSince(modified) >= age else { continue }
            guard let lock = StoreLock.exclusive(staging.appendingPathComponent(Self.stagingLock)) else { continue }
            try? FileManager.default.removeItem(at: staging)
            lock.release()
        }
    }

    /// Creates the folder, readable by its owner only: a backup holds everything the store does.
    func prepare() throws(NorthwindError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storeUnavailable(
                "Cannot create the backup folder \(url.path): \(error.localizedDescription). Set backup.directory to a folder you can write."
            )
        }
    }

    /// A new file name: `northwind-SITE-YYYYMMDD-HHMMSS-KIND.nwbackup`, never one already there.
    /// Gives a finished archive its name, "northwind-SITE-YYYYMMDD-HHMMSS-KIND.nwbackup" (then -2, -3, …): taken
    /// when the file is complete, by a hard link that fails if the name exists, so that backups finishing at once
    /// each get a name of their own and none replaces another.
    func name(_ finished: URL, site: String, at time: Timestamp, kind: BackupKind) throws(NorthwindError) -> URL {
        let stamp = String(time.description.prefix(19)).replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "T", with: "-")
        let base = "northwind-\(site)-\(stamp)-\(kind.rawValue)"
        for counter in 1...10_000 {
            let candidate = url.appendingPathComponent((counter == 1 ? base : "\(base)-\(counter)") + ".nwbackup")
            if link(finished.path, candidate.path) == 0 {
                unlink(finished.path)
                return candidate
            }
            guard errno == EEXIST else {
                throw .storeUnavailable("Cannot name the backup \(candidate.path): \(String(cString: strerror(errno)))")
            }
        }
        throw .storeUnavailable("Cannot name the backup: \(base) and 10,000 others like it exist in \(url.path).")
    }
}

/// The result of checking a backup, kept beside it (`FILE.verified`) so that a list can say it without unpacking.
public struct BackupCheck: Codable, Sendable, Equatable {
    public var checkedAt: String
    public var problems: [String]
    public var ok: Bool { problems.isEmpty }

    static func file(for backup: URL) -> URL { URL(fileURLWithPath: backup.path + ".verified") }

    static func load(for backup: URL) -> BackupCheck? {
        guard let data = try? Data(contentsOf: file(for: backup)) else { return nil }
        return try? JSONDecoder().decode(BackupCheck.self, from: data)
    }

    func save(for backup: URL) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try? encoder.encode(self).write(to: Self.file(for: backup), options: .atomic)
    }
}

public enum BackupState: String, Sendable {
    case verified, damaged, unreadable
    case notChecked = "not checked"
}

/// One backup in a folder, as a list shows it.
public struct BackupListing: Sendable {
    public var file: URL
    public var size: Int64
    /// Nil when the file cannot be read as a backup; `problem` says why.
    public var manifest: BackupManifest?
    public var problem: String?
    public var check: BackupCheck?

    public var name: String { file.lastPathComponent }
    /// The size as people read it: "840 KiB", "12.5 MiB".
    public var sizeText: String { byteText(size) }
    public var createdAt: String { manifest?.createdAt ?? "" }
    public var isVerified: Bool { check?.ok == true }
    /// How the backup stands; its raw value is the word every list shows.
    public var state: BackupState {
        problem != nil ? .unreadable : isVerified ? .verified : check == nil ? .notChecked : .damaged
    }

    /// The same backup, and the record of its check, under another name (`backup create -o FILE`).
    public func moved(to destination: URL) throws(NorthwindError) -> BackupListing {
        do {
            try FileManager.default.moveItem(at: file, to: destination)
            try? FileManager.default.moveItem(at: BackupCheck.file(for: file), to: BackupCheck.file(for: destination))
        } catch {
            throw .storeUnavailable("Cannot move the backup to \(destination.path): \(error.localizedDescription)")
        }
        return BackupListing(file: destination)
    }

    init(file: URL, size: Int64, manifest: BackupManifest?, check: BackupCheck?) {
        (self.file, self.size, self.manifest, self.check) = (file, size, manifest, check)
    }

    init(file: URL) {
        self.file = file
        size = ((try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? NSNumber)?.int64Value ?? 0
        check = BackupCheck.load(for: file)
        do {
            manifest = try BackupReader(file: file).manifest
        } catch {
            problem = "\(error)"
        }
    }
}
