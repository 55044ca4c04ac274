import Foundation
import NorthwindStore

/// This build of Northwind, as backups and documents record their maker.
public enum NorthwindVersion {
    public static let current = "0.18.0"
}

/// Why a backup was made. Retention prunes only scheduled ones; the others stay until someone removes them.
public enum BackupKind: String, Codable, Sendable, CaseIterable {
    case scheduled
    case manual
    /// Taken of a store about to be replaced by a restore.
    case preRestore = "pre-restore"
}

/// `manifest.json` of a `.nwbackup`: what the backup holds and how to check it. The format is in docs/backup.md.
public struct BackupManifest: Codable, Sendable, Equatable {
    public static let format = "northwind-backup"
    public static let mediaType = "application/vnd.northwind.backup+zip"
    /// The format this build writes, and the newest it reads.
    public static let formatVersion = 1

    public struct App: Codable, Sendable, Equatable {
        public var name = "northwind"
        public var version: String
    }
    public struct StoreFacts: Codable, Sendable, Equatable {
        /// The installation's code, which prefixes its order numbers.
        public var siteCode: String
        /// Where the store was when backed up.
        public var path: String
    }
    public struct SQLiteFacts: Codable, Sendable, Equatable {
        public var version: String
        public var pageSize: Int
        public var pageCount: Int
    }
    public struct Pictures: Codable, Sendable, Equatable {
        /// Pictures kept as files beside the database (the large ones); small ones are inside it.
        public var count: Int
        public var bytes: Int64
    }
    public struct SyncFacts: Codable, Sendable, Equatable {
        /// The sync site this store was a member of, if any.
        public var site: String?
        /// The last change-log position sent to the sync server.
        public var uploadedThrough: Int64
        /// The last change-log position in the backup.
        public var lastChange: Int64
        /// Changes made here and not yet sent.
        public var pendingChanges: Int
    }
    public struct Entry: Codable, Sendable, Equatable {
        public var path: String
        public var mediaType: String
        public var size: Int64
        public var sha256: String
    }

    public var format = Self.format
    public var formatVersion = Self.formatVersion
    /// The oldest reader that understands this backup.
    public var minReaderVersion = 1
    /// When the snapshot was taken, as "YYYY-MM-DDTHH:MM:SS.sssZ".
    public var createdAt: String
    public var kind: BackupKind
    public var app: App
    public var store: StoreFacts
    public var sqlite: SQLiteFacts
    /// The store's migrations, oldest first: a backup holding one this build does not know is from a newer version.
    public var migrations: [String]
    /// How the database was copied: SQLite's online backup, page by page, within one read transaction.
    public var method = "sqlite-online-backup"
    /// Rows per table.
    public var counts: [String: Int]
    public var pictures: Pictures
    public var sync: SyncFacts
    /// Every entry but `mimetype` and this manifest, with its size and SHA-256; `checksums.sha256` repeats them in
    /// the form `sha256sum -c` reads.
    public var entries: [Entry]

    public var created: Timestamp { Timestamp(createdAt) ?? Timestamp(milliseconds: 0) }

    static let databaseEntry = "db/northwind.sqlite"
    static let pictureFolder = "pictures/"
    static let checksumsEntry = "checksums.sha256"
}
