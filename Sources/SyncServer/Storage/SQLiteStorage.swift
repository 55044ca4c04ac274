import Foundation
import GRDB
import SyncProtocol

/// The embedded engine: one SQLite file in WAL mode. SQLite has one writer at a time, so each zone's change
/// numbers are dense and in commit order without further locking.
final class SQLiteStorage: SyncStorage {
    let pool: DatabasePool
    /// Asset bytes live in files beside the database, named by their hash.
    let assetDirectory: URL

    init(path: String) throws {
        let url = URL(fileURLWithPath: path)
        assetDirectory = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + "-assets")
        try FileManager.default.createDirectory(at: assetDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB's pool sets NORMAL, under which a power cut undoes commits since the last checkpoint: batches already
        // acknowledged to the shops, which never send them again. FULL syncs the log at every commit.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try Self.migrator.migrate(pool)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: containers, zones, records, batches, assets") { db in
            for statement in SyncSchema.statements { try db.execute(sql: statement) }
            try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('epoch', ?)", arguments: [UUID().uuidString])
        }
        migrator.registerMigration("v2: assets per container") { db in
            try db.execute(sql: "DROP TABLE assets")
            try db.execute(
                sql: """
                    CREATE TABLE assets (container TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL,
                        PRIMARY KEY (container, sha256))
                    """
            )
        }
        migrator.registerMigration("v3: subscriptions") { db in
            try db.execute(sql: SyncSchema.subscriptions)
        }
        migrator.registerMigration("v4: batch digests") { db in
            try db.execute(sql: SyncSchema.batchDigests)
        }
        migrator.registerMigration("v5: site lineage") { db in
            try db.execute(sql: SyncSchema.siteLineage)
        }
        migrator.registerMigration("v6: container schemas") { db in
            try db.execute(sql: SyncSchema.containerSchemas)
        }
        migrator.registerMigration("v7: tokens for a chosen site") { db in
            for statement in SyncSchema.boundEnrollments { try db.execute(sql: statement) }
        }
        migrator.registerMigration("v8: credential rotation") { db in
            for statement in SyncSchema.credentialRotation { try db.execute(sql: statement) }
        }
        return migrator
    }

    func epoch() async throws -> String {
        try await pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'epoch'") ?? "" }
    }

    func schema(container: String) async throws -> String? {
        try await pool.read { db in try String.fetchOne(db, sql: "SELECT body FROM container_schemas WHERE container = ?", arguments: [container]) }
    }

    func saveSchema(container: String, json: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO container_schemas (container, body) VALUES (?, ?) ON CONFLICT (container) DO UPDATE SET body = excluded.body",
                arguments: [container, json]
            )
        }
    }

    func startNewEpoch() async throws {
        try await pool.write { db in try Self.startNewEpoch(db) }
    }

    static func startNewEpoch(_ db: Database) throws {
        try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'epoch'", arguments: [UUID().uuidString])
        try db.execute(
            sql: "INSERT INTO meta (key, value) VALUES ('restored', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [String(Clock.now())]
        )
        // A purged tombstone leaves no record behind, but its batch may still be here.
        try db.execute(
            sql: """
                INSERT INTO meta (key, value)
                VALUES ('restoredThrough', max((SELECT coalesce(max(modified), 0) FROM records), (SELECT coalesce(max(created), 0) FROM batches)))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """
        )
    }

    static func restoreWindow(_ db: Database) throws -> Range<Int64>? {
        let meta = try Row.fetchAll(db, sql: "SELECT key, value FROM meta WHERE key IN ('restored', 'restoredThrough')")
        let values = Dictionary(uniqueKeysWithValues: meta.map { ($0["key"] as String, Int64($0["value"] as String) ?? 0) })
        guard let through = values["restoredThrough"], let restored = values["restored"], through < restored else { return nil }
        return through..<restored
    }

    func restoredThrough() async throws -> Int64? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'restoredThrough'").flatMap { Int64($0) }
        }
    }

    func noteCaughtUp(container: String, siteCode: String, epoch: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO meta (key, value) SELECT ?, value FROM meta WHERE key = 'epoch' AND value = ?
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """,
                arguments: [SyncSchema.caughtUpKey(container: container, siteCode: siteCode), epoch]
            )
        }
    }

    func caughtUpSites(container: String) async throws -> Set<String> {
        let prefix = SyncSchema.caughtUpKey(container: container, siteCode: "")
        return try await pool.read { db in
            Set(
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT substr(key, length(?1) + 1) FROM meta
                        WHERE substr(key, 1, length(?1)) = ?1 AND value = (SELECT value FROM meta WHERE key = 'epoch')
                        """,
                    arguments: [prefix]
                )
            )
        }
    }

    // MARK: Zones

    func zones(container: String, scope: DatabaseScope) async throws -> [ZoneState] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM zones WHERE container = ? AND scope = ? ORDER BY zoneName",
                arguments: [container, scope.key]
            ).map(Self.zone)
        }
    }

    func modifyZones<Answer: Sendable>(
        container: String,
        scope: DatabaseScope,
        names: [String],
        decide: @Sendable ([String: ZoneState]) -> ([ZoneState], Answer)
    ) async throws -> Answer {
        try await pool.write { db in
            let current = try Self.zones(db, container: container, scope: scope, names: names)
            let (zones, answer) = decide(current)
            for zone in zones {
                if zone.deleted {
                    try db.execute(
                        sql: "DELETE FROM records WHERE container = ? AND scope = ? AND zoneName = ?",
                        arguments: [container, scope.key, zone.zoneID.zoneName]
                    )
                }
                try Self.saveZone(db, zone, container: container, scope: scope)
            }
            return answer
        }
    }

    private static func zones(_ db: Database, container: String, scope: DatabaseScope, names: [String]) throws -> [String: ZoneState] {
        var zones: [String: ZoneState] = [:]
        for name in names.sorted() {
            if let row = try Row.fetchOne(
                db,
                sql: "SELECT * FROM zones WHERE container = ? AND scope = ? AND zoneName = ?",
                arguments: [container, scope.key, name]
            ) {
                zones[name] = zone(row)
            }
        }
        return zones
    }

    private static func saveZone(_ db: Database, _ zone: ZoneState, container: String, scope: DatabaseScope) throws {
        try db.execute(
            sql: """
                INSERT INTO zones (container, scope, zoneName, owner, writers, seq, purgedThrough, checksum, deleted)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (container, scope, zoneName) DO UPDATE SET owner = excluded.owner, writers = excluded.writers,
                    seq = excluded.seq, purgedThrough = excluded.purgedThrough, checksum = excluded.checksum, deleted = excluded.deleted
                """,
            arguments: [
                container, scope.key, zone.zoneID.zoneName, zone.owner, zone.writers.rawValue, zone.seq, zone.purgedThrough,
                Int64(bitPattern: zone.checksum), zone.deleted,
            ]
        )
    }

    private static func zone(_ row: Row) -> ZoneState {
        ZoneState(
            zoneID: ZoneID(row["zoneName"]),
            owner: row["owner"],
            writers: ZoneWriters(rawValue: row["writers"]) ?? .all,
            seq: row["seq"],
            purgedThrough: row["purgedThrough"],
            checksum: UInt64(bitPattern: row["checksum"]),
            deleted: row["deleted"]
        )
    }

    // MARK: Records

    func modifyRecords(_ batch: ModifyBatch) async throws -> String {
        try await pool.write { db in
            // The write lock is the database's: every zone is locked.
            switch try batch.decide(try Self.reads(db, batch)) {
            case .replay(let answer): return answer
            case .write(let writes):
                try Self.write(db, writes, batch)
                return writes.answer
            }
        }
    }

    private static func reads(_ db: Database, _ batch: ModifyBatch) throws -> ModifyReads {
        let (container, scope) = (batch.container, batch.scope)
        if let stored = try Row.fetchOne(
            db,
            sql: "SELECT response, digest FROM batches WHERE container = ? AND clientID = ? AND batchID = ?",
            arguments: [container, batch.clientID, batch.batchID]
        ) {
            return ModifyReads(stored: .init(answer: stored["response"], digest: stored["digest"]))
        }
        var reads = ModifyReads(stored: nil)
        if let lineage = batch.lineage,
            let row = try Row.fetchOne(
                db,
                sql: "SELECT clientID, sequence FROM site_lineage WHERE container = ? AND siteCode = ?",
                arguments: [container, lineage.siteCode]
            )
        {
            reads.lineage = .init(clientID: row["clientID"], sequence: row["sequence"])
        }
        reads.zones = try Self.zones(db, container: container, scope: scope, names: batch.zonesToLock)
        reads.records = try Self.records(db, container: container, scope: scope, keys: batch.keysToRead)
        for hash in batch.assetsToCheck
        where try Bool.fetchOne(db, sql: "SELECT 1 FROM assets WHERE container = ? AND sha256 = ?", arguments: [container, hash]) ?? false {
            reads.assets.insert(hash)
        }
        reads.restoreWindow = batch.readsRestoreWindow ? try Self.restoreWindow(db) : nil
        return reads
    }

    private static func write(_ db: Database, _ writes: ModifyWrites, _ batch: ModifyBatch) throws {
        let (container, scope) = (batch.container, batch.scope)
        if let lineage = writes.lineage {
            try db.execute(
                sql: """
                    INSERT INTO site_lineage (container, siteCode, clientID, sequence) VALUES (?, ?, ?, ?)
                    ON CONFLICT (container, siteCode) DO UPDATE SET clientID = excluded.clientID, sequence = excluded.sequence
                    """,
                arguments: [container, lineage.siteCode, lineage.clientID, lineage.sequence]
            )
        }
        for zone in writes.zones { try Self.saveZone(db, zone, container: container, scope: scope) }
        for record in writes.records { try Self.saveRecord(db, record.stored, body: record.body, container: container, scope: scope) }
        try db.execute(
            sql: "INSERT INTO batches (container, clientID, batchID, response, created, digest) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [container, batch.clientID, batch.batchID, writes.answer, writes.now, batch.digest]
        )
    }

    /// One query per zone and 400 names, rather than one per record. The list is padded to one of a few lengths
    /// (repeating its last name), so that a handful of prepared statements serve every batch.
    private static func records(_ db: Database, container: String, scope: DatabaseScope, keys: [RecordKey]) throws -> [RecordKey: StoredRecord] {
        var records: [RecordKey: StoredRecord] = [:]
        for (zoneName, zoneKeys) in Dictionary(grouping: keys, by: \.zoneName) {
            let names = zoneKeys.map(\.recordName)
            for start in stride(from: 0, to: names.count, by: 400) {
                var chunk = Array(names[start..<min(start + 400, names.count)])
                let length = [1, 16, 64, 400].first { $0 >= chunk.count } ?? chunk.count
                chunk += Array(repeating: chunk[chunk.count - 1], count: length - chunk.count)
                let marks = Array(repeating: "?", count: length).joined(separator: ",")
                let statement = try db.cachedStatement(
                    sql: """
                        SELECT body, seq, appendOnly FROM records
                        WHERE container = ? AND scope = ? AND zoneName = ? AND recordName IN (\(marks))
                        """
                )
                let rows = try Row.fetchAll(statement, arguments: StatementArguments([container, scope.key, zoneName] + chunk))
                for row in rows {
                    let stored = try storedRecord(row)
                    records[RecordKey(zoneName: zoneName, recordName: stored.record.recordName)] = stored
                }
            }
        }
        return records
    }

    private static func saveRecord(_ db: Database, _ stored: StoredRecord, body: String, container: String, scope: DatabaseScope) throws {
        let record = stored.record
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO records (container, scope, zoneName, recordName, recordType, seq, appendOnly, deleted, modified, body)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (container, scope, zoneName, recordName) DO UPDATE SET recordType = excluded.recordType,
                    seq = excluded.seq, appendOnly = excluded.appendOnly, deleted = excluded.deleted, modified = excluded.modified,
                    body = excluded.body
                """
        )
        try statement.execute(arguments: [
            container, scope.key, record.zoneID.zoneName, record.recordName, record.recordType, stored.seq, stored.appendOnly,
            record.deleted, record.modified?.timestamp ?? 0, body,
        ])
    }

    private static func storedRecord(_ row: Row) throws -> StoredRecord {
        let body: String = row["body"]
        return StoredRecord(
            record: try SyncRecord.decode(Data(body.utf8)),
            seq: row["seq"],
            appendOnly: row["appendOnly"]
        )
    }

    func usage(container: String, scope: DatabaseScope) async throws -> (records: Int, bytes: Int) {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*), coalesce(sum(length(CAST(body AS BLOB))), 0) FROM records
                    WHERE container = ? AND scope = ? AND deleted = 0
                    """,
                arguments: [container, scope.key]
            )
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    func lookup(container: String, scope: DatabaseScope, keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        try await pool.read { db in try Self.records(db, container: container, scope: scope, keys: keys) }
    }

    func changes(
        container: String,
        scope: DatabaseScope,
        zoneName: String,
        after: Int64?,
        limit: Int,
        recordTypes: [String]?
    ) async throws -> ChangesPage {
        try await pool.read { db in
            guard
                let zone = try Row.fetchOne(
                    db,
                    sql: "SELECT * FROM zones WHERE container = ? AND scope = ? AND zoneName = ?",
                    arguments: [container, scope.key, zoneName]
                ).map(Self.zone)
            else { return ChangesPage(zone: nil, records: [], through: 0, moreComing: false) }
            // From scratch the feed is compacted: live records only, no tombstones.
            let live = after == nil ? "AND deleted = 0" : ""
            let base = "SELECT recordName, recordType, seq, body FROM records WHERE container = ? AND scope = ? AND zoneName = ? \(live)"
            // A cursor reads each row in place; `fetchAll` would copy every row, column names included, first.
            let changed = { (row: Row) in ChangedRecord(recordName: row[0], recordType: row[1], seq: row[2], body: row[3]) }
            let rows = try Array(
                Row.fetchCursor(
                    db,
                    sql: base + " AND seq > ? ORDER BY seq, recordName LIMIT ?",
                    arguments: [container, scope.key, zoneName, after ?? 0, limit + 1]
                ).map(changed)
            )
            var page = Array(rows.prefix(limit))
            var through = zone.seq
            var more = false
            if rows.count > limit, let last = page.last {
                if last.seq == rows[limit].seq {
                    // Never split a change: finish the one the page ends in.
                    page += try Array(
                        Row.fetchCursor(
                            db,
                            sql: base + " AND seq = ? AND recordName > ? ORDER BY recordName",
                            arguments: [container, scope.key, zoneName, last.seq, last.recordName]
                        ).map(changed)
                    )
                    through = last.seq
                    more =
                        try Bool.fetchOne(
                            db,
                            sql: "SELECT 1 FROM records WHERE container = ? AND scope = ? AND zoneName = ? \(live) AND seq > ? LIMIT 1",
                            arguments: [container, scope.key, zoneName, through]
                        ) != nil
                    if !more { through = zone.seq }
                } else {
                    // The row past the page belongs to a later change.
                    through = last.seq
                    more = true
                }
            }
            if let recordTypes { page = page.filter { recordTypes.contains($0.recordType) } }
            return ChangesPage(zone: zone, records: page, through: through, moreComing: more)
        }
    }

    func liveRecords(container: String, scope: DatabaseScope, zoneName: String, recordType: String) async throws -> [StoredRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT body, seq, appendOnly FROM records
                    WHERE container = ? AND scope = ? AND zoneName = ? AND recordType = ? AND deleted = 0 ORDER BY recordName
                    """,
                arguments: [container, scope.key, zoneName, recordType]
            ).map(Self.storedRecord)
        }
    }

    func presentAssets(container: String, hashes: [String]) async throws -> Set<String> {
        try await pool.read { db in
            var present = Set<String>()
            for hash in hashes
            where try Bool.fetchOne(db, sql: "SELECT 1 FROM assets WHERE container = ? AND sha256 = ?", arguments: [container, hash]) ?? false {
                present.insert(hash)
            }
            return present
        }
    }

    func saveAsset(container: String, sha256: String, data: Data) async throws {
        // The file first, then the row: a row never names missing bytes. Files are shared between containers.
        let file = assetDirectory.appendingPathComponent(sha256)
        if !FileManager.default.fileExists(atPath: file.path) { try data.write(to: file, options: .atomic) }
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO assets (container, sha256, size, created) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [container, sha256, data.count, Clock.now()]
            )
        }
    }

    func asset(container: String, sha256: String) async throws -> Data? {
        let known = try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM assets WHERE container = ? AND sha256 = ?", arguments: [container, sha256]) ?? false
        }
        return known ? try Data(contentsOf: assetDirectory.appendingPathComponent(sha256)) : nil
    }

    // MARK: Subscriptions

    func subscriptions(container: String, scope: DatabaseScope, siteCode: String) async throws -> [StoredSubscription] {
        try await pool.read { db in try Self.subscriptions(db, container: container, scope: scope, siteCode: siteCode) }
    }

    private static func subscriptions(
        _ db: Database,
        container: String,
        scope: DatabaseScope,
        siteCode: String
    ) throws -> [StoredSubscription] {
        try Row.fetchAll(
            db,
            sql: "SELECT subscriptionID, body FROM subscriptions WHERE container = ? AND scope = ? AND siteCode = ? ORDER BY subscriptionID",
            arguments: [container, scope.key, siteCode]
        ).map { StoredSubscription(id: $0["subscriptionID"], body: $0["body"]) }
    }

    func modifySubscriptions<Answer: Sendable>(
        container: String,
        scope: DatabaseScope,
        siteCode: String,
        decide: @Sendable ([StoredSubscription]) throws -> ([StoredSubscription], Answer)
    ) async throws -> Answer {
        try await pool.write { db in
            let (subscriptions, answer) = try decide(try Self.subscriptions(db, container: container, scope: scope, siteCode: siteCode))
            try db.execute(
                sql: "DELETE FROM subscriptions WHERE container = ? AND scope = ? AND siteCode = ?",
                arguments: [container, scope.key, siteCode]
            )
            for subscription in subscriptions {
                try db.execute(
                    sql: "INSERT INTO subscriptions (container, scope, siteCode, subscriptionID, body) VALUES (?, ?, ?, ?, ?)",
                    arguments: [container, scope.key, siteCode, subscription.id, subscription.body]
                )
            }
            return answer
        }
    }

    func assetBytes(container: String) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM assets WHERE container = ?", arguments: [container]) ?? 0
        }
    }

    func purgeTombstones(before: Int64) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE zones SET purgedThrough = max(purgedThrough, (
                        SELECT max(seq) FROM records r
                        WHERE r.container = zones.container AND r.scope = zones.scope AND r.zoneName = zones.zoneName
                          AND r.deleted = 1 AND r.modified < ?))
                    WHERE EXISTS (SELECT 1 FROM records r
                        WHERE r.container = zones.container AND r.scope = zones.scope AND r.zoneName = zones.zoneName
                          AND r.deleted = 1 AND r.modified < ?)
                    """,
                arguments: [before, before]
            )
            try db.execute(sql: "DELETE FROM records WHERE deleted = 1 AND modified < ?", arguments: [before])
            return db.changesCount
        }
    }
}
