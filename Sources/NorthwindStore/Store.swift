import Foundation
import GRDB
import Logging
import Synchronization

/// Where a store lives and how it behaves.
public struct StoreConfiguration: Sendable {
    /// The SQLite file.
    public var path: String
    /// Log every SQL statement and its duration to stderr (the counterpart of Core Data's SQLDebug).
    public var sqlDebug: Bool
    /// Binary values larger than this many bytes go to a file beside the database.
    public var externalStorageThreshold: Int
    /// Unreferenced external files younger than this survive the sweep at open: another process may be about to
    /// commit the row that names them.
    public var orphanGracePeriod: TimeInterval
    /// How long a long read (a report download) waits for its turn when `Store.longReadLimit` already run, before it
    /// is refused as busy: clients that stopped reading must not pile up waiting threads without end.
    public var longReadWait: TimeInterval

    public init(
        path: String,
        sqlDebug: Bool = false,
        externalStorageThreshold: Int = 100 * 1024,
        orphanGracePeriod: TimeInterval = 300,
        longReadWait: TimeInterval = 30
    ) {
        self.path = path
        self.sqlDebug = sqlDebug
        self.externalStorageThreshold = externalStorageThreshold
        self.orphanGracePeriod = orphanGracePeriod
        self.longReadWait = longReadWait
    }

    /// `--store`, else `NORTHWIND_STORE`, else `$XDG_DATA_HOME/northwind/northwind.sqlite`
    /// (`~/.local/share/northwind/northwind.sqlite` when XDG_DATA_HOME is unset).
    public static func resolvePath(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = environment["NORTHWIND_STORE"], !path.isEmpty { return path }
        let dataHome =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return dataHome + "/northwind/northwind.sqlite"
    }
}

/// The one owner of a store file: its connection pool, migrations and external binary files.
public final class Store: Sendable {
    public let configuration: StoreConfiguration
    /// The pool, in WAL mode. Every public write of the domain layer is one `write` transaction.
    package let pool: DatabasePool
    public let binaries: ExternalStorage
    /// Connections for single-statement reads on hot paths.
    package let quick: QuickReaders
    /// Held while the store is open, so that a restore cannot swap the files from under it.
    private let lock: StoreLock
    /// What `installOnce` has installed on the writer.
    private let installed = Mutex<Set<String>>([])
    /// How `longRead` opens its connections: the pool's, read-only.
    private let longReadConfiguration: Configuration
    private let longReads = DispatchSemaphore(value: Store.longReadLimit)

    /// Opens (creating if needed) and migrates the store, then sweeps orphaned external files.
    public init(_ configuration: StoreConfiguration) throws(NorthwindError) {
        self.configuration = configuration
        let url = URL(fileURLWithPath: configuration.path)
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .storeUnavailable("Cannot create the store's folder \(directory.path): \(error.localizedDescription)")
        }
        lock = try StoreFiles(path: configuration.path).lockShared()
        // It holds password hashes and session tokens: only its owner reads it (SQLite gives its -wal and -shm
        // files the database's own mode). An empty file is a new database to SQLite.
        if !FileManager.default.fileExists(atPath: configuration.path) {
            let descriptor = open(configuration.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 { Glibc.close(descriptor) }
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        // Another process (the CLI beside the server) may hold the write lock for a moment.
        config.busyMode = .timeout(10)
        config.label = "northwind"
        config.prepareDatabase { db in
            // The writer keeps statement journals of big multi-row writes (seeding, imports) in memory, not in temp
            // files. Readers keep SQLite's default: under concurrent reports, sorters in memory ran at half the rate
            // of sorters spilling to temp files (`northwind-bench --settings-seconds`, docs/performance.md).
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
            }
            // Reads copy pages through read(2) rather than map the file (see `mmapSize`).
            try db.execute(sql: "PRAGMA mmap_size = \(Store.mmapSize)")
            ReportFunctions.register(db)
        }
        // guide: begin sql-debug
        if configuration.sqlDebug {
            let logger = Logger(label: "northwind.sql") { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .debug
                return handler
            }
            config.prepareDatabase { db in
                db.trace(options: .profile) { event in
                    if case let .profile(statement, duration) = event {
                        logger.debug("\(String(format: "%.3f", duration * 1000)) ms  \(statement.sql)")
                    }
                }
            }
        }
        // guide: end sql-debug
        var longReadConfiguration = config
        longReadConfiguration.readonly = true
        longReadConfiguration.label = "northwind.long"
        self.longReadConfiguration = longReadConfiguration
        config.maximumReaderCount = Store.readerCount
        do {
            pool = try DatabasePool(path: configuration.path, configuration: config)
            // GRDB's pool sets NORMAL, under which a power cut undoes commits since the last checkpoint: an order
            // taken, a receipt booked, a batch the server acknowledged. FULL syncs the log at every commit.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            if try pool.read(Schema.migrator.hasBeenSuperseded) {
                throw NorthwindError.invalidState(
                    "The store at \(configuration.path) was last opened by a newer Northwind: install that version or a later one to open it."
                )
            }
            try Schema.migrator.migrate(pool)
            try pool.write { db in try StoreMetadata.prepare(db) }
            quick = try QuickReaders(path: configuration.path, count: 4, configuration: config)
        } catch let error as NorthwindError {
            throw error
        } catch {
            throw .storeUnavailable("Cannot open the store at \(configuration.path): \(error)")
        }
        binaries = ExternalStorage(
            directory: URL(fileURLWithPath: configuration.path + "_external", isDirectory: true),
            threshold: configuration.externalStorageThreshold
        )
        binaries.sweepOrphans(in: pool, olderThan: configuration.orphanGracePeriod)
    }

    /// Closes every connection now, leaving no write-ahead log behind, instead of when the last reference goes: a
    /// restore closes the store it staged before swapping it in. Any use after this fails.
    public func close() throws(NorthwindError) {
        do {
            try quick.close()
            try pool.close()
            lock.release()
        } catch {
            throw .storeUnavailable("Cannot close the store at \(configuration.path): \(error)")
        }
    }

    /// Runs `body` in one read-only transaction on a connection of its own, opened for it and closed after: for a
    /// read that lasts as long as its client takes to read (a report download), which would otherwise keep one of
    /// the pool's few readers from the pages all that time. At most `longReadLimit` run at once; more block their
    /// thread here until one ends, so a server calls it from threads of its own (the CLI's one download never waits),
    /// and are refused as busy after `longReadWait`.
    package func longRead<T>(_ body: (Database) throws -> T) throws -> T {
        guard longReads.wait(timeout: .now() + configuration.longReadWait) == .success else {
            throw NorthwindError.storeUnavailable(
                "\(Self.longReadLimit) report downloads are already running, and none ended within "
                    + "\(Int(configuration.longReadWait)) seconds. Try again once one of them has finished."
            )
        }
        defer { longReads.signal() }
        let queue = try DatabaseQueue(path: configuration.path, configuration: longReadConfiguration)
        defer { try? queue.close() }
        return try queue.read(body)
    }

    /// Runs `body` once per store on the writer connection, outside any transaction: how the domain adds its write
    /// gate (temporary triggers and a function) to the one connection every write goes through.
    package func installOnce(_ name: String, _ body: (Database) throws -> Void) {
        installed.withLock { done in
            guard !done.contains(name) else { return }
            do {
                try pool.writeWithoutTransaction { db in try body(db) }
            } catch {
                // Its SQL is ours and fixed: a failure is a defect, which every test would show.
                preconditionFailure("Cannot install \(name) on the store: \(error)")
            }
            done.insert(name)
        }
    }

    /// Whether the store holds no business data yet (metadata aside).
    public func isEmpty() throws -> Bool {
        try pool.read { db in try Self.isEmpty(db) }
    }

    public static func isEmpty(_ db: Database) throws -> Bool {
        for table in Schema.syncedTables where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table))") == true {
            return false
        }
        return true
    }

    /// Removes every business row, children first, inside the caller's transaction; external files go after commit.
    public func deleteAllData(_ db: Database) throws {
        for (table, attribute) in Self.binaryAttributes {
            try binaries.prepareDeleteAll(db, table: table, attribute: attribute)
        }
        // Employees refer to each other; RESTRICT is checked row by row, so break the chain first.
        try db.execute(sql: "UPDATE employees SET reportsTo = NULL WHERE reportsTo IS NOT NULL")
        try db.execute(sql: "DELETE FROM access_tokens; DELETE FROM credentials")
        // The ledger's guards forbid deleting movements, except when the whole store goes.
        try db.execute(sql: Schema.dropLedgerGuards)
        try db.execute(sql: Schema.dropPurchaseGuards)
        try db.execute(sql: Schema.dropFulfilmentGuards)
        try db.execute(sql: Schema.dropInvoiceGuards)
        for table in Schema.syncedTables.reversed() {
            try db.execute(sql: "DELETE FROM \(table)")
        }
        try db.execute(sql: Schema.ledgerGuards)
        try db.execute(sql: Schema.purchaseGuards)
        try db.execute(sql: Schema.fulfilmentGuards)
        try db.execute(sql: Schema.invoiceGuards)
        try db.execute(sql: Schema.setAsideGuards)
    }

    /// The pool's reader connections: three, not GRDB's five. Each keeps its own page cache and statements, which
    /// made 14 MB of `serve`'s peak at scale 100 at the same throughput (docs/performance.md, issue 41); reads as
    /// long as a client makes them go to `longRead`, so that slow downloads never take these from the pages.
    public static let readerCount = 3
    /// Long reads that may run at once.
    public static let longReadLimit = 4

    /// How much of the file reads may map: none. Mapped pages count in the server's resident memory (at scale 100,
    /// `serve` peaked at 149-155 MB with 1 GiB mapped, 103-109 MB without), and under concurrent reads mapping no
    /// longer gained anything (`northwind-bench --settings-seconds`, docs/performance.md, issue 41).
    public static let mmapSize = 0

    /// Binary attributes kept with external storage, as (table, attribute).
    public static var binaryAttributes: [(table: String, attribute: String)] { Schema.binaryAttributes.map { ($0.0, $0.1) } }

    /// The names of synced tables, in an order that respects foreign keys.
    public static var syncedTables: [String] { Schema.syncedTables }
}
