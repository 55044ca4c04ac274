import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import SyncProtocol
import Synchronization

/// The engine for several instances on one PostgreSQL. A zone's row is its change counter: a writer locks it
/// (`FOR UPDATE`, zones in name order) before taking the next number and holds the lock until it commits, so a
/// zone's changes commit in number order and a reader never sees change N+1 without change N.
final class PostgresStorage: SyncStorage {
    let client: PostgresClient
    let logger: Logger
    #if NORTHWIND_TEST_HOOKS
    /// Debug builds only: the commit-order test's switches (`PostgresStorage+TestHooks.swift`).
    let hooks = StorageTestHooks.fromEnvironment()
    #endif
    private let runner: Task<Void, Never>

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`) and
    /// creates or migrates the schema.
    init(url: String, logger: Logger) async throws {
        let client = PostgresClient(configuration: try PostgresURL.configuration(url), backgroundLogger: logger)
        self.client = client
        self.logger = logger
        runner = Task { await client.run() }
        // Let the pool start before the first lease (it warns otherwise).
        await Task.yield()
        do {
            try await migrate()
        } catch {
            runner.cancel()
            throw error
        }
    }

    func close() async {
        runner.cancel()
        // run() ends once its connections have closed; a lease still held by a task that outlived its caller must
        // not hold whoever closes for good (a test run sat idle for ever here).
        let runner = runner
        let ended = await Self.within(.seconds(10)) { await runner.value }
        if !ended { logger.warning("the PostgreSQL client had not stopped 10 s after it was asked to; going on without it") }
    }

    /// Whether `body` finished within `limit`; one that does not is left running, not waited for.
    private static func within(_ limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let claim = ClaimOnce()
            Task {
                await body()
                if claim.first() { continuation.resume(returning: true) }
            }
            Task {
                try? await Task.sleep(for: limit)
                if claim.first() { continuation.resume(returning: false) }
            }
        }
    }

    // MARK: Transactions

    /// Runs `body` in one transaction on one connection; a thrown error rolls it back and reaches the caller as is.
    func transaction<T: Sendable>(
        readOnly: Bool = false,
        _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await client.withConnection { connection in
            // A reader runs in one snapshot, so a page's records and its token agree.
            try await connection.query(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN", logger: logger)
            do {
                let value = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return value
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// The commit-order test's negative control (take numbers without locking zones): never on in a release build.
    private var plainSequence: Bool {
        #if NORTHWIND_TEST_HOOKS
        hooks.plainSequence
        #else
        false
        #endif
    }

    private func migrate() async throws {
        try await transaction { connection in
            // Instances starting together migrate one at a time.
            try await connection.query("SELECT pg_advisory_xact_lock(7461001)", logger: self.logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INT PRIMARY KEY, applied BIGINT NOT NULL)",
                logger: self.logger
            )
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: self.logger).decode(Int.self) {
                applied.insert(version)
            }
            for (version, statements) in PostgresSchema.migrations.enumerated() where !applied.contains(version + 1) {
                for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger) }
                try await connection.query(
                    "INSERT INTO schema_migrations (version, applied) VALUES (\(version + 1), \(Clock.now()))",
                    logger: self.logger
                )
            }
            #if NORTHWIND_TEST_HOOKS
            if self.plainSequence {
                try await connection.query("CREATE SEQUENCE IF NOT EXISTS plain_change_numbers", logger: self.logger)
            }
            #endif
        }
    }

    func epoch() async throws -> String {
        try await client.query("SELECT value FROM meta WHERE key = 'epoch'", logger: logger).all(String.self).first ?? ""
    }

    func schema(container: String) async throws -> String? {
        try await client.query("SELECT body FROM container_schemas WHERE container = \(container)", logger: logger).all(String.self).first
    }

    func saveSchema(container: String, json: String) async throws {
        try await client.query(
            """
            INSERT INTO container_schemas (container, body) VALUES (\(container), \(json))
            ON CONFLICT (container) DO UPDATE SET body = excluded.body
            """,
            logger: logger
        )
    }

    func startNewEpoch() async throws {
        try await transaction { connection in
            try await connection.query("UPDATE meta SET value = gen_random_uuid()::text WHERE key = 'epoch'", logger: self.logger)
            try await connection.query(
                """
                INSERT INTO meta (key, value) VALUES ('restored', \(String(Clock.now())))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """,
                logger: self.logger
            )
            // A purged tombstone leaves no record behind, but its batch may still be here.
            try await connection.query(
                """
                INSERT INTO meta (key, value)
                VALUES ('restoredThrough', greatest((SELECT coalesce(max(modified), 0) FROM records),
                                                    (SELECT coalesce(max(created), 0) FROM batches))::text)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """,
                logger: self.logger
            )
        }
    }

    func restoredThrough() async throws -> Int64? {
        try await client.query("SELECT value FROM meta WHERE key = 'restoredThrough'", logger: logger).all(String.self).first
            .flatMap { Int64($0) }
    }

    func noteCaughtUp(container: String, siteCode: String, epoch: String) async throws {
        let key = SyncSchema.caughtUpKey(container: container, siteCode: siteCode)
        try await client.query(
            """
            INSERT INTO meta (key, value) SELECT \(key), value FROM meta WHERE key = 'epoch' AND value = \(epoch)
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """,
            logger: logger
        )
    }

    func caughtUpSites(container: String) async throws -> Set<String> {
        let prefix = SyncSchema.caughtUpKey(container: container, siteCode: "")
        let rows = try await client.query(
            """
            SELECT substr(key, length(\(prefix)) + 1) FROM meta
            WHERE starts_with(key, \(prefix)) AND value = (SELECT value FROM meta WHERE key = 'epoch')
            """,
            logger: logger
        )
        return Set(try await rows.all(String.self))
    }

    // MARK: Zones

    private static let zoneColumns = "zonename, owner, writers, seq, purgedthrough, checksum, deleted"
    private typealias ZoneRow = (String, String?, String, Int64, Int64, Int64, Bool)

    private static func zone(_ row: ZoneRow) -> ZoneState {
        ZoneState(
            zoneID: ZoneID(row.0),
            owner: row.1,
            writers: ZoneWriters(rawValue: row.2) ?? .all,
            seq: row.3,
            purgedThrough: row.4,
            checksum: UInt64(bitPattern: row.5),
            deleted: row.6
        )
    }

    func zones(container: String, scope: DatabaseScope) async throws -> [ZoneState] {
        try await client.query(
            """
            SELECT \(unescaped: Self.zoneColumns) FROM zones WHERE container = \(container) AND scope = \(scope.key) ORDER BY zonename
            """,
            logger: logger
        ).all(ZoneRow.self).map(Self.zone)
    }

    /// Reads zones in name order; `lock` holds each zone's row until commit, which serialises its writers.
    private func zones(
        _ connection: PostgresConnection,
        container: String,
        scope: DatabaseScope,
        names: [String],
        lock: Bool
    ) async throws -> [String: ZoneState] {
        var zones: [String: ZoneState] = [:]
        for name in names.sorted() {
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.zoneColumns) FROM zones WHERE container = \(container) AND scope = \(scope.key)
                AND zonename = \(name) \(unescaped: lock ? "FOR UPDATE" : "")
                """,
                logger: logger
            )
            if let row = try await rows.all(ZoneRow.self).first { zones[name] = Self.zone(row) }
        }
        return zones
    }

    private func saveZone(_ connection: PostgresConnection, _ zone: ZoneState, container: String, scope: DatabaseScope) async throws {
        try await connection.query(
            """
            INSERT INTO zones (container, scope, zonename, owner, writers, seq, purgedthrough, checksum, deleted)
            VALUES (\(container), \(scope.key), \(zone.zoneID.zoneName), \(zone.owner), \(zone.writers.rawValue), \(zone.seq),
                \(zone.purgedThrough), \(Int64(bitPattern: zone.checksum)), \(zone.deleted))
            ON CONFLICT (container, scope, zonename) DO UPDATE SET owner = excluded.owner, writers = excluded.writers,
                seq = excluded.seq, purgedthrough = excluded.purgedthrough, checksum = excluded.checksum, deleted = excluded.deleted
            """,
            logger: logger
        )
    }

    func modifyZones<Answer: Sendable>(
        container: String,
        scope: DatabaseScope,
        names: [String],
        decide: @Sendable ([String: ZoneState]) -> ([ZoneState], Answer)
    ) async throws -> Answer {
        let answer = try await transaction { connection in
            // A zone that does not exist yet has no row to lock: an advisory lock on its name stands in for it
            // (a hash collision only makes two zones share a lock).
            for name in names.sorted() {
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended(\(container + "|" + scope.key + "|" + name), 0))",
                    logger: self.logger
                )
            }
            let current = try await self.zones(connection, container: container, scope: scope, names: names, lock: true)
            let (zones, answer) = decide(current)
            for zone in zones {
                if zone.deleted {
                    try await connection.query(
                        """
                        DELETE FROM records WHERE container = \(container) AND scope = \(scope.key) AND zonename = \(zone.zoneID.zoneName)
                        """,
                        logger: self.logger
                    )
                }
                try await self.saveZone(connection, zone, container: container, scope: scope)
            }
            return answer
        }
        try await notify(container: container)
        return answer
    }

    // MARK: Records

    func modifyRecords(_ batch: ModifyBatch) async throws -> String {
        let (answer, wrote) = try await transaction { connection in
            switch try batch.decide(try await self.reads(connection, batch)) {
            case .replay(let answer): return (answer, false)
            case .write(let writes):
                try await self.write(connection, writes, batch)
                #if NORTHWIND_TEST_HOOKS
                try await self.holdIfAsked(batch.batchID)
                #endif
                return (writes.answer, !writes.records.isEmpty)
            }
        }
        if wrote { try await notify(container: batch.container) }
        return answer
    }

    private func reads(_ connection: PostgresConnection, _ batch: ModifyBatch) async throws -> ModifyReads {
        let (container, scope) = (batch.container, batch.scope)
        // Lock first, then look for a replay: a second copy of a batch waits here and then finds the first's answer.
        let locked = try await zones(connection, container: container, scope: scope, names: batch.zonesToLock, lock: !plainSequence)
        let stored = try await connection.query(
            """
            SELECT response, digest FROM batches WHERE container = \(container) AND clientid = \(batch.clientID)
            AND batchid = \(batch.batchID)
            """,
            logger: logger
        )
        if let (answer, digest) = try await stored.all((String, String?).self).first {
            return ModifyReads(stored: .init(answer: answer, digest: digest))
        }
        var reads = ModifyReads(stored: nil)
        if let lineage = batch.lineage {
            // Locked, so that two copies sending at once are ordered: the second sees the first's sequence.
            reads.lineage = try await connection.query(
                """
                SELECT clientid, sequence FROM site_lineage WHERE container = \(container) AND sitecode = \(lineage.siteCode)
                FOR UPDATE
                """,
                logger: logger
            ).all((String, Int64).self).first.map { ModifyReads.RememberedLineage(clientID: $0.0, sequence: $0.1) }
        }
        #if NORTHWIND_TEST_HOOKS
        reads.zones = plainSequence ? try await takePlainNumbers(connection, locked) : locked
        #else
        reads.zones = locked
        #endif
        reads.records = try await records(connection, container: container, scope: scope, keys: batch.keysToRead)
        reads.assets = try await existingAssets(batch.assetsToCheck, container: container, connection)
        reads.restoreWindow = batch.readsRestoreWindow ? try await restoreWindow(connection) : nil
        return reads
    }

    private func write(_ connection: PostgresConnection, _ writes: ModifyWrites, _ batch: ModifyBatch) async throws {
        let (container, scope) = (batch.container, batch.scope)
        if let lineage = writes.lineage {
            try await connection.query(
                """
                INSERT INTO site_lineage (container, sitecode, clientid, sequence)
                VALUES (\(container), \(lineage.siteCode), \(lineage.clientID), \(lineage.sequence))
                ON CONFLICT (container, sitecode) DO UPDATE SET clientid = excluded.clientid, sequence = excluded.sequence
                """,
                logger: logger
            )
        }
        if !plainSequence {
            for zone in writes.zones { try await saveZone(connection, zone, container: container, scope: scope) }
        }
        try await saveRecords(connection, writes.records, container: container, scope: scope)
        try await connection.query(
            """
            INSERT INTO batches (container, clientid, batchid, response, created, digest)
            VALUES (\(container), \(batch.clientID), \(batch.batchID), \(writes.answer), \(writes.now), \(batch.digest))
            """,
            logger: logger
        )
    }

    /// Which of the pictures a batch names the server already holds.
    private func existingAssets(_ hashes: Set<String>, container: String, _ connection: PostgresConnection) async throws -> Set<String> {
        var assets = Set<String>()
        if hashes.isEmpty { return assets }
        let rows = try await connection.query(
            "SELECT sha256 FROM assets WHERE container = \(container) AND sha256 = ANY(\(Array(hashes)))",
            logger: logger
        )
        for try await hash in rows.decode(String.self) { assets.insert(hash) }
        return assets
    }

    /// The span of stamps a restore from a backup lost, while put-backs may still arrive for it.
    private func restoreWindow(_ connection: PostgresConnection) async throws -> Range<Int64>? {
        let meta = try await connection.query("SELECT key, value FROM meta WHERE key IN ('restored', 'restoredThrough')", logger: logger)
            .all((String, String).self)
        let values = Dictionary(uniqueKeysWithValues: meta.map { ($0.0, Int64($0.1) ?? 0) })
        guard let through = values["restoredThrough"], let restored = values["restored"], through < restored else { return nil }
        return through..<restored
    }

    /// Tells every instance that the container changed: after the commit, so that a listener that reads at once
    /// sees the change. A hint only: listeners fetch the truth.
    private func notify(container: String) async throws {
        do {
            try await client.query("SELECT pg_notify('northwind_sync', \(container))", logger: logger)
        } catch {
            logger.warning("could not tell the other instances of a change in \(container): \(String(reflecting: error))")
        }
    }

    private typealias RecordRow = (String, Int64, Bool)

    private static func storedRecord(_ row: RecordRow) throws -> StoredRecord {
        StoredRecord(record: try SyncRecord.decode(Data(row.0.utf8)), seq: row.1, appendOnly: row.2)
    }

    private func records(
        _ connection: PostgresConnection,
        container: String,
        scope: DatabaseScope,
        keys: [RecordKey]
    ) async throws -> [RecordKey: StoredRecord] {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT body, seq, appendonly FROM records WHERE container = \(container) AND scope = \(scope.key)
            AND (zonename, recordname) IN (SELECT * FROM unnest(\(keys.map(\.zoneName))::text[], \(keys.map(\.recordName))::text[]))
            """,
            logger: logger
        )
        var records: [RecordKey: StoredRecord] = [:]
        for try await row in rows.decode(RecordRow.self) {
            let stored = try Self.storedRecord(row)
            records[RecordKey(zoneName: stored.record.zoneID.zoneName, recordName: stored.record.recordName)] = stored
        }
        return records
    }

    /// Writes a batch's records in one statement.
    private func saveRecords(_ connection: PostgresConnection, _ writes: [ModifyWrites.Record], container: String, scope: DatabaseScope) async throws
    {
        guard !writes.isEmpty else { return }
        let records = writes.map(\.stored.record)
        try await connection.query(
            """
            INSERT INTO records (container, scope, zonename, recordname, recordtype, seq, appendonly, deleted, modified, body)
            SELECT \(container), \(scope.key), * FROM unnest(\(records.map(\.zoneID.zoneName))::text[],
                \(records.map(\.recordName))::text[], \(records.map(\.recordType))::text[], \(writes.map(\.stored.seq))::int8[],
                \(writes.map(\.stored.appendOnly))::bool[], \(records.map(\.deleted))::bool[],
                \(records.map { $0.modified?.timestamp ?? 0 })::int8[], \(writes.map(\.body))::text[])
            ON CONFLICT (container, scope, zonename, recordname) DO UPDATE SET recordtype = excluded.recordtype,
                seq = excluded.seq, appendonly = excluded.appendonly, deleted = excluded.deleted, modified = excluded.modified,
                body = excluded.body
            """,
            logger: logger
        )
    }

    func usage(container: String, scope: DatabaseScope) async throws -> (records: Int, bytes: Int) {
        let rows = try await client.query(
            """
            SELECT count(*)::int8, coalesce(sum(octet_length(body)), 0)::int8 FROM records
            WHERE container = \(container) AND scope = \(scope.key) AND NOT deleted
            """,
            logger: logger
        )
        for try await (records, bytes) in rows.decode((Int64, Int64).self) { return (Int(records), Int(bytes)) }
        return (0, 0)
    }

    func lookup(container: String, scope: DatabaseScope, keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        try await transaction(readOnly: true) { connection in
            try await self.records(connection, container: container, scope: scope, keys: keys)
        }
    }

    func changes(
        container: String,
        scope: DatabaseScope,
        zoneName: String,
        after: Int64?,
        limit: Int,
        recordTypes: [String]?
    ) async throws -> ChangesPage {
        try await transaction(readOnly: true) { connection in
            guard
                let zone = try await self.zones(connection, container: container, scope: scope, names: [zoneName], lock: false)[zoneName]
            else { return ChangesPage(zone: nil, records: [], through: 0, moreComing: false) }
            // From scratch the feed is compacted: live records only, no tombstones.
            let live = after == nil ? "AND NOT deleted" : ""
            let rows = try await connection.query(
                """
                SELECT recordname, recordtype, seq, body FROM records WHERE container = \(container) AND scope = \(scope.key)
                AND zonename = \(zoneName) \(unescaped: live) AND seq > \(after ?? 0) ORDER BY seq, recordname LIMIT \(limit + 1)
                """,
                logger: self.logger
            ).all(ChangedRow.self).map(Self.changed)
            var page = Array(rows.prefix(limit))
            var through = zone.seq
            #if NORTHWIND_TEST_HOOKS
            if self.plainSequence {
                through = max(through, try await self.newestChange(connection, container: container, scope: scope, zone: zoneName))
            }
            #endif
            var more = false
            if rows.count > limit, let last = page.last {
                if last.seq == rows[limit].seq {
                    // Never split a change: finish the one the page ends in.
                    page += try await connection.query(
                        """
                        SELECT recordname, recordtype, seq, body FROM records WHERE container = \(container) AND scope = \(scope.key)
                        AND zonename = \(zoneName) \(unescaped: live) AND seq = \(last.seq) AND recordname > \(last.recordName)
                        ORDER BY recordname
                        """,
                        logger: self.logger
                    ).all(ChangedRow.self).map(Self.changed)
                    let later = try await connection.query(
                        """
                        SELECT 1 FROM records WHERE container = \(container) AND scope = \(scope.key)
                        AND zonename = \(zoneName) \(unescaped: live) AND seq > \(last.seq) LIMIT 1
                        """,
                        logger: self.logger
                    ).all(Int.self).first
                    more = later != nil
                } else {
                    // The row past the page belongs to a later change.
                    more = true
                }
                if more { through = last.seq }
            }
            if let recordTypes { page = page.filter { recordTypes.contains($0.recordType) } }
            return ChangesPage(zone: zone, records: page, through: through, moreComing: more)
        }
    }

    private typealias ChangedRow = (String, String, Int64, String)

    private static func changed(_ row: ChangedRow) -> ChangedRecord {
        ChangedRecord(recordName: row.0, recordType: row.1, seq: row.2, body: row.3)
    }

    func liveRecords(container: String, scope: DatabaseScope, zoneName: String, recordType: String) async throws -> [StoredRecord] {
        try await client.query(
            """
            SELECT body, seq, appendonly FROM records WHERE container = \(container) AND scope = \(scope.key)
            AND zonename = \(zoneName) AND recordtype = \(recordType) AND NOT deleted ORDER BY recordname
            """,
            logger: logger
        ).all(RecordRow.self).map(Self.storedRecord)
    }

}

extension PostgresRowSequence {
    /// Every row, decoded.
    func all<each T: PostgresDecodable & Sendable>(_: (repeat each T).Type) async throws -> [(repeat each T)] {
        var rows: [(repeat each T)] = []
        for try await row in decode((repeat each T).self) { rows.append(row) }
        return rows
    }
}

/// True for the first caller only.
private final class ClaimOnce: Sendable {
    private let done = Atomic(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
