import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension SyncEngineSide {
    /// Records how a sync ended: a success clears the error; a failure keeps it, and an unreachable server starts
    /// (or continues) the offline period.
    public func recordOutcome(error: String?, offline: Bool) async throws(NorthwindError) {
        try await write { db in
            let now = Timestamp.now.description
            if let error {
                try ShopSync.setState(db, "lastError", error)
                if offline, try ShopSync.state(db, "offlineSince") == nil { try ShopSync.setState(db, "offlineSince", now) }
                if !offline { try ShopSync.setState(db, "offlineSince", nil) }
            } else {
                try ShopSync.setState(db, "lastSuccess", now)
                try ShopSync.setState(db, "lastError", nil)
                try ShopSync.setState(db, "offlineSince", nil)
            }
        }
    }
}

extension SyncEngineSide {
    /// Why a store that has joined cannot sync when its credential file is missing, and what to do.
    public func missingCredentialMessage(_ membership: SyncMembership) -> String {
        let file: String = StoreFiles(path: store.configuration.path).syncCredential.path
        let site: String = membership.siteCode
        return "This store has joined \(membership.container) as \(site), but its sync credential (\(file)) is missing: a store "
            + "restored or copied onto another machine has none, as backups carry none. Ask the sync server's administrator for "
            + "a token that replaces the site's credential (northwind-sync-server enroll --site \(site) --replace), then run "
            + "northwind sync join URL TOKEN --again."
    }

    /// Keeps a rotated credential (in its file beside the store).
    public func saveCredential(_ credential: String) throws(NorthwindError) {
        try StoreFiles(path: store.configuration.path).writeSyncCredential(credential)
    }

    /// Records the membership. A store that holds data may join only a container that holds none (head office's
    /// first upload); a store that joins a container with data must be empty and downloads everything.
    public func join(_ membership: SyncMembership, containerHasData: Bool) async throws(NorthwindError) {
        try await read { db in try ShopSync.checkCanJoin(db, containerHasData: containerHasData, siteCode: nil) }
        // The credential's file first: a store whose membership is recorded always has its credential beside it.
        try backoffice.syncEngine.saveCredential(membership.credential)
        // A watermark left by another store once at this path would take this one for an older copy of that one.
        try? FileManager.default.removeItem(at: StoreFiles(path: store.configuration.path).syncWatermark)
        try await write { db in
            try ShopSync.checkCanJoin(db, containerHasData: containerHasData, siteCode: nil)
            // A site the administrator chose (`enroll --site`): an empty store takes its code for its order numbers.
            // (A store with data was refused such a token before it was spent: `checkCanJoin` with the token's site.)
            if try StoreMetadata.siteCode(db) != membership.siteCode, try Store.isEmpty(db) {
                try StoreMetadata.setSiteCode(db, membership.siteCode)
            }
            try ShopSync.saveMembership(db, membership)
            // Head office's rows are all to upload: the change log holds every row's insert. An empty store has
            // nothing to send.
            let through = containerHasData ? (try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0) : 0
            try ShopSync.setState(db, "uploadedThrough", String(through))
            // An empty store joining a company with data loads its first download whole (`loadSnapshot`).
            // The mark holds the outbox's position: once anything is acknowledged, the store no longer qualifies.
            if containerHasData { try ShopSync.setState(db, "snapshot", String(through)) }
        }
    }

    /// Whether this store may join a company: refused (before any token is spent) when it has joined already, when
    /// it holds data and so does the company, or when the token names another site than a store with data uses.
    public func checkCanJoin(containerHasData: Bool, siteCode: String?) async throws(NorthwindError) {
        try await read { db in try ShopSync.checkCanJoin(db, containerHasData: containerHasData, siteCode: siteCode) }
    }

    /// The store's site was given a new credential (`enroll --replace`): it syncs with it from now on, as before.
    public func replaceCredential(_ membership: SyncMembership) async throws(NorthwindError) {
        guard let current = try await read({ db in try ShopSync.membership(db) }), current.siteCode == membership.siteCode else {
            throw NorthwindError.invalidState("This store has not joined as site \(membership.siteCode).")
        }
        try backoffice.syncEngine.saveCredential(membership.credential)
        try await write { db in try ShopSync.saveMembership(db, membership) }
    }

    /// A value the sync engine keeps in the store (what it last declared, say).
    public func stateValue(_ key: String) async throws(NorthwindError) -> String? {
        try await read { db in try ShopSync.state(db, "engine:" + key) }
    }

    public func setStateValue(_ key: String, _ value: String?) async throws(NorthwindError) {
        try await write { db in try ShopSync.setState(db, "engine:" + key, value) }
    }

    // MARK: Lineage

    /// This store's client ID and the sequence of its next batch to the shared database (`SyncLineage`), made on first
    /// use.
    public func lineage() async throws(NorthwindError) -> SyncLineage {
        try await write { db in
            let clientID: String
            if let known = try ShopSync.state(db, "clientID") {
                clientID = known
            } else {
                clientID = UUID().uuidString.lowercased()
                try ShopSync.setState(db, "clientID", clientID)
            }
            let taken = Int64(try ShopSync.state(db, "batchesTaken") ?? "0") ?? 0
            return SyncLineage(clientID: clientID, sequence: taken + 1, takeOver: try ShopSync.state(db, "takeOver") != nil)
        }
    }

    /// A full sync ended with every zone fetched: a restored store may execute orders again, and a received record
    /// still waiting for the record it refers to waits for one the server no longer has (deleted at another site):
    /// the conflict inbox says so, once per record, and `sync status` counts them. Such a record stays waiting, and
    /// applies if its parent ever comes back.
    /// `listedZones`: the zones the server has; one this store still marks for fetching again but the server no
    /// longer lists has nothing to fetch, and holds nothing up.
    public func fullSyncCompleted(listedZones: Set<String>? = nil) async throws(NorthwindError) {
        let rules = backoffice.rules.invoicing
        try await write { db in
            if let listedZones {
                for key in try String.fetchAll(db, sql: "SELECT key FROM sync_state WHERE key LIKE 'refetching:%'")
                where !listedZones.contains(String(key.dropFirst("refetching:".count))) {
                    try ShopSync.setState(db, key, nil)
                }
            }
            let refetching = try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_state WHERE key LIKE 'refetching:%'") ?? 0
            if refetching == 0 {
                try ShopSync.setState(db, "restoredUntilFullSync", nil)
                // Every zone fetched in this epoch: the deletions acknowledged in earlier ones were sent again where
                // a restored server had brought their records back, and are kept no longer.
                try db.execute(
                    sql:
                        "DELETE FROM sync_state WHERE key LIKE 'deletedAck:%' AND value <> ifnull((SELECT value FROM sync_state WHERE key = 'serverEpoch'), '')"
                )
                if let site = try syncSite(db) {
                    try Self.settleWaitingDocuments(db, site: site)
                    try Self.reissueSetAside(db, site: site, rules: rules)
                }
            }
            for body in try String.fetchAll(db, sql: "SELECT body FROM sync_waiting") {
                let record = try SyncRecord.decode(Data(body.utf8))
                let key = "orphan:\(record.zoneID.zoneName)/\(record.recordName)"
                guard try ShopSync.state(db, key) == nil else { continue }
                var applied = SyncApplied()
                try Self.discardWhole(
                    db,
                    table: record.recordType,
                    record: record,
                    reason: "received, but it refers to a record the server no longer has (deleted at another site): not applied",
                    applied: &applied
                )
                try ShopSync.setState(db, key, Timestamp.now.description)
            }
        }
    }

    // MARK: Server epoch

    /// Notes the server's epoch, which changes when its data is restored from a backup. On a change, every record
    /// this store wrote and had acknowledged (its own site's zone, and shared records whose fields carry its clocks)
    /// goes up again, and so does every shared record it holds in a version the server changed after the newest
    /// change of the restored data (`restoredThrough`), whoever wrote it: the writer may have lost it too, in a
    /// restore of its own. Each goes with the clocks it had, so that a server that lost it gets it back and one that
    /// kept it merges it by clock; then every zone is fetched again from scratch. Nothing acknowledged is deleted here
    /// to match a server that lost it. Returns how many records go up again (0 on the first contact or the same
    /// epoch).
    public func noteServerEpoch(_ epoch: String, restoredThrough: Int64? = nil) async throws(NorthwindError) -> Int {
        try await write { db in
            guard let site = try syncSite(db) else { return 0 }
            let known = try ShopSync.state(db, "serverEpoch")
            try ShopSync.setState(db, "serverEpoch", epoch)
            guard let known, known != epoch else { return 0 }
            // Another site's records held here in a newer version wait for that site to send them again.
            try ShopSync.setState(db, "restoredThrough", restoredThrough.map(String.init))
            let ownZone = SyncTable.siteZone(site.siteCode)
            var queued = 0
            // Parents' tables first, so that the batches (up to 400 records each) send a record's parent with it or
            // before it: head office cannot restore another site's parent later.
            let rows = try Row.fetchAll(db, sql: "SELECT tableName, recordID, zoneName, fields, modified FROM sync_records")
            func order(_ row: Row) -> (Int, String, String) { (SyncTable.rank(row["tableName"]), row["tableName"], row["recordID"]) }
            for row in rows.sorted(by: { order($0) < order($1) }) {
                let (table, recordID, zone): (String, String, String) = (row["tableName"], row["recordID"], row["zoneName"])
                let clocks = FieldClock.clocks(of: try ShopSync.decodeFields(row["fields"]))
                // A version the server took at or after the newest change its restored data holds: may be lost with the restore.
                let modified: Int64? = row["modified"]
                let lostByTheServer = restoredThrough.flatMap { through in modified.map { $0 >= through } } ?? false
                // Another site's zone is written by that site; head office also puts back what the site lost too.
                let anotherSites = zone != ownZone && !SyncTable.sharedZones.contains(zone)
                let sendsAgain =
                    anotherSites
                    ? lostByTheServer && site.membership.role == "hq"
                    : zone == ownZone || lostByTheServer || clocks.values.contains(where: { $0.site == site.siteCode })
                // A document set aside stays as the server has it (or had it): it is no version of this store's.
                guard sendsAgain, try !Self.isSetAside(db, table: table, recordID: recordID) else { continue }
                try db.execute(sql: "DELETE FROM sync_records WHERE tableName = ? AND recordID = ?", arguments: [table, recordID])
                // A version still waiting from an earlier restore keeps the clocks it had.
                try db.execute(
                    sql: "INSERT OR IGNORE INTO sync_resend (tableName, recordID, fields, zoneName, modified) VALUES (?, ?, ?, ?, ?)",
                    arguments: [table, recordID, row["fields"] as String, zone, modified]
                )
                // The clock the record goes up with is when it last changed here (`changedAt`), as it was.
                let newest = clocks.values.max().map { Int64($0.text.prefix(while: \.isNumber)) ?? 0 } ?? 0
                let changedAt =
                    try String.fetchOne(
                        db,
                        sql: """
                            SELECT changedAt FROM change_log WHERE recordID = ? AND tableName = ? AND origin = 'local' AND NOT localOnly
                            ORDER BY seq DESC LIMIT 1
                            """,
                        arguments: [recordID, table]
                    ) ?? Timestamp(milliseconds: newest).description
                try db.execute(
                    sql: "INSERT INTO change_log (tableName, recordID, operation, origin, changedAt) VALUES (?, ?, 'update', 'local', ?)",
                    arguments: [table, recordID, changedAt]
                )
                queued += 1
            }
            // The restored server may hold an older schema, or none: declare it again.
            try ShopSync.setState(db, "engine:declaredSchema", nil)
            // A batch built before the restore may name changes the server has lost with it: build it afresh.
            try ShopSync.setState(db, "pendingBatch", nil)
            try ShopSync.setState(db, "pendingBatchID", nil)
            try ShopSync.refetchEverything(db)
            try ShopSync.setState(
                db,
                "lastServerRestore",
                "\(Timestamp.now.description): the server's data was restored; \(queued) records it may have lost went up again from here"
            )
            return queued
        }
    }

    /// The next batch to send: the changes of the oldest unacknowledged local transaction, with any later one that
    /// changed its records again (entries written outside the domain, such as a bulk load, go up to 400 records at a
    /// time), each record once, as it is when the batch is first built. Nil when nothing is pending.
    public func nextOutboxBatch() async throws(NorthwindError) -> OutboxBatch? {
        // Built in a read transaction, so that a shop's orders do not wait for the write lock while its rows are
        // read; a short write then keeps the batch's extent, and passes over entries with nothing left to say.
        let built = try await read { db in try syncSite(db).map { try ShopSync.buildBatch(db, site: $0) } }
        guard let built, built.writes else { return built?.batch }
        // The outbox may have moved meanwhile (another sync of this store, a server restore noted): then it is built
        // again inside the write.
        return try await write { db in try syncSite(db).flatMap { try ShopSync.recordIfUnmoved(built, db, site: $0) } }
    }

    /// Forgets the batch built and not acknowledged, so that the next one is built afresh: only when it is known
    /// that the server never applied it (a picture it names never reached the server, and is gone here since).
    public func forgetPendingBatch() async throws(NorthwindError) {
        try await write { db in
            try ShopSync.setState(db, "pendingBatch", nil)
            try ShopSync.setState(db, "pendingBatchID", nil)
        }
    }
}
