import SyncAPI
import SyncProtocol

/// `records/modify`'s transaction, written once for both engines. An engine locks `zonesToLock` in that order,
/// reads what `ModifyReads` holds, asks `decide` what follows, and writes that (`ModifyWrites`), all in one
/// transaction. The steps, in order: a replay is answered from its stored answer (refused when its content
/// differs), the site's lineage is checked, the batch is stamped and planned, and the records, the zones' counters,
/// the lineage and the answer are written.
struct ModifyBatch: Sendable {
    var container: String
    var scope: DatabaseScope
    /// The replay key beside the container: it names the database and the installation.
    var clientID: String
    var batchID: String
    /// The batch's content (`ModifyAnswer.digest`): a batch ID sent again with other content is refused.
    var digest: String
    var lineage: SiteLineage?
    var planner: ModifyPlanner
    var now: Int64
    /// The server's epoch, for the zones' tokens in the answer.
    var epoch: String

    var zonesToLock: [String] { planner.zonesToLock }
    var keysToRead: [RecordKey] { Array(planner.keysToRead) }
    var assetsToCheck: Set<String> { planner.assetsToCheck }
    /// Only a put-back needs the restore window.
    var readsRestoreWindow: Bool { planner.hasPutBack }

    func decide(_ reads: ModifyReads) throws -> ModifyOutcome {
        if let stored = reads.stored {
            try ModifyAnswer.checkReplay(batchID: batchID, stored: stored.digest, sent: digest)
            return .replay(ModifyAnswer.replayed(stored.answer))
        }
        if let lineage {
            try lineage.check(rememberedClient: reads.lineage?.clientID, rememberedSequence: reads.lineage?.sequence ?? 0)
        }
        // Stamped with the zones locked: a backup's newest stamp is then no later than any commit it missed (in the
        // zones it shares with it), which is what `restoredThrough` relies on.
        let now = max(now, Clock.now())
        var plan = planner.plan(
            ModifyState(zones: reads.zones, records: reads.records, assets: reads.assets, now: now, restoreWindow: reads.restoreWindow)
        )
        // Each written zone took exactly one change number, under its lock: the batch is all that lies between. A zone
        // still at the number its first creation gave it (1, nothing purged) has never held a record.
        let advances = plan.zones.map { zone in
            let before = reads.zones[zone.zoneID.zoneName]
            return Components.Schemas.ZoneAdvance(
                zoneName: zone.zoneID.zoneName,
                previousToken: ZoneToken(epoch: epoch, zone: zone.zoneID.zoneName, seq: zone.seq - 1).encoded,
                syncToken: ZoneToken(epoch: epoch, zone: zone.zoneID.zoneName, seq: zone.seq).encoded,
                firstChange: before?.seq == 1 && before?.purgedThrough == 0
            )
        }
        if !advances.isEmpty { plan.response.zones = advances }
        // Each record's JSON is written once, for storage and for the answer.
        var bodies: [RecordKey: String] = [:]
        let records = plan.writes.map { stored in
            let body = stored.record.json
            bodies[RecordKey(zoneName: stored.record.zoneID.zoneName, recordName: stored.record.recordName)] = body
            return ModifyWrites.Record(stored: stored, body: body)
        }
        return .write(
            ModifyWrites(
                zones: plan.zones,
                records: records,
                lineage: lineage,
                answer: try ModifyAnswer.json(plan.response, bodies: bodies),
                now: now
            )
        )
    }
}

/// What an engine reads for a batch, with its zones locked.
struct ModifyReads: Sendable {
    struct StoredAnswer: Sendable {
        var answer: String
        /// Nil for an answer stored before digests were.
        var digest: String?
    }
    struct RememberedLineage: Sendable {
        var clientID: String
        var sequence: Int64
    }
    /// The answer stored under the batch ID; nil for a new batch. When there is one, nothing else is read.
    var stored: StoredAnswer?
    /// What the server remembers of the batch's site; nil when nothing, or when the batch claims no lineage.
    var lineage: RememberedLineage? = nil
    var zones: [String: ZoneState] = [:]
    var records: [RecordKey: StoredRecord] = [:]
    /// Which of `assetsToCheck` the container holds.
    var assets: Set<String> = []
    var restoreWindow: Range<Int64>? = nil
}

/// What an engine writes for a batch, in the same transaction.
struct ModifyWrites: Sendable {
    struct Record: Sendable {
        var stored: StoredRecord
        var body: String
    }
    var zones: [ZoneState]
    var records: [Record]
    /// The site's place in its sequence, remembered; nil when the batch claims none.
    var lineage: SiteLineage?
    /// Stored under the batch ID, with its digest and `now`, and sent.
    var answer: String
    var now: Int64
}

enum ModifyOutcome: Sendable {
    case replay(String)
    case write(ModifyWrites)
}
