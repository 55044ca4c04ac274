import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// A version of another site's record that the site and the sync server have both lost (each restored from a backup
/// older than it) comes back through its owner. The installation still holding it may not write the owner's zone, so
/// it offers it in its own (`record_offers`) and keeps it until the owner answers in its zone
/// (`record_offer_answers`). The owner takes back, as its own change and with the clocks they were written with, only
/// values it wrote itself in a period it lost (`lostWindow:` in `sync_state`, noted when the store found itself
/// restored); anything else it refuses, and the holder then takes the server's copy and lists what it held.
extension SyncEngineSide {
    /// The owner's answer to this store's latest offer of a record, if any.
    enum OfferState: Equatable {
        case none
        case waiting
        case accepted
        case refused(String)
    }

    /// Notes the period whose own changes this store lost: after the newest change of its own that the restored
    /// state holds, until now.
    /// A store with no change of its own has no period it could have lost.
    static func noteLostWindow(_ db: Database) throws {
        let newest = try String.fetchOne(db, sql: "SELECT max(changedAt) FROM change_log WHERE origin = 'local' AND NOT localOnly")
        guard let after = newest.flatMap(Timestamp.init)?.milliseconds else { return }
        try ShopSync.setState(db, "lostWindow:\(Timestamp.now.milliseconds)", String(after))
    }

    /// How long after a restore this store takes back what it lost: offers come within minutes of its first full
    /// sync; a window left open for good would let a forged offer in at any later time.
    static let lostWindowLifetime: Int64 = 7 * 24 * 3600 * 1000

    /// The periods this store lost in restores, as (after, through] in milliseconds, for restores less than
    /// `lostWindowLifetime` ago.
    static func lostWindows(_ db: Database) throws -> [(after: Int64, through: Int64)] {
        let now = Timestamp.now.milliseconds
        return try Row.fetchAll(db, sql: "SELECT substr(key, 12) AS through, value FROM sync_state WHERE key LIKE 'lostWindow:%'").compactMap {
            row in
            guard let through = Int64(row["through"] as String), let after = Int64(row["value"] as String),
                now - through < lostWindowLifetime
            else { return nil }
            return (after, through)
        }
    }

    /// An offer with no answer after this long (its site runs a version that does not answer, or is gone) is given up.
    static let offerPatience: Int64 = 24 * 3600 * 1000

    // MARK: The holder

    /// What became of this store's offer of the version it holds of another site's record; a version not offered
    /// yet is offered now (`reupload` sends the offer). Never asked while the store awaits its full sync after a
    /// restore (`reconcile` and `takeSuperseded` keep the row meanwhile): that sync brings back the offers it made
    /// before, and a "waiting" that offered nothing let the callers drop a row that was never offered.
    static func offerHeld(
        _ db: Database,
        table: SyncTable,
        recordName: String,
        zone: String,
        site: SyncSite,
        reupload: inout [(String, String)]
    ) throws -> OfferState {
        guard
            let base = try Row.fetchOne(
                db,
                sql: "SELECT changeTag, fields FROM sync_records WHERE tableName = ? AND recordID = ? AND zoneName = ?",
                arguments: [table.name, recordName, zone]
            )
        else { return .none }
        let tag: String = base["changeTag"]
        if let answer = try Row.fetchOne(
            db,
            sql: """
                SELECT o.recordID, o.createdAt, a.accepted, a.reason FROM record_offers o
                LEFT JOIN record_offer_answers a ON a.offerID = o.id AND a.site = substr(o.zoneName, 6)
                WHERE o.site = ? AND o.zoneName = ? AND o.recordName = ? AND o.changeTag = ?
                """,
            arguments: [site.siteCode, zone, recordName, tag]
        ) {
            if let accepted = answer["accepted"] as Bool? { return accepted ? .accepted : .refused(answer["reason"]) }
            // The server refused the offer itself, or its site never answered: listed here, as before offers.
            let created = Timestamp(answer["createdAt"] as String)?.milliseconds ?? 0
            if try isRefused(db, table: "record_offers", recordID: answer["recordID"]) || Timestamp.now.milliseconds - created > offerPatience {
                return .none
            }
            return .waiting
        }
        let held = SyncRecord(
            recordName: recordName,
            recordType: table.name,
            zoneID: ZoneID(zone),
            fields: try ShopSync.decodeFields(base["fields"])
        )
        // Past what an offer carries (a record near the sync server's limit): listed here instead, as before offers.
        guard held.json.utf8.count <= 400_000 else { return .none }
        // Named by what it offers, so that an offer made again (by a copy of this store) is the same record.
        let digest = SHA256.hash(data: Data("\(site.siteCode)\u{0}\(zone)\u{0}\(recordName)\u{0}\(tag)".utf8)).hex
        let offerID = [
            digest.prefix(8), digest.dropFirst(8).prefix(4), digest.dropFirst(12).prefix(4), digest.dropFirst(16).prefix(4),
            digest.dropFirst(20).prefix(12),
        ]
        .joined(separator: "-")
        try db.execute(
            sql: """
                INSERT INTO record_offers (recordID, site, zoneName, recordType, recordName, changeTag, body)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [offerID, site.siteCode, zone, table.name, recordName, tag, held.json]
        )
        reupload.append(("record_offers", offerID))
        return .waiting
    }

    /// How many of this store's offers wait for their owner's answer.
    static func offersWaiting(_ db: Database, site: String) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                SELECT count(*) FROM record_offers o WHERE o.site = ?
                AND NOT EXISTS (SELECT 1 FROM record_offer_answers a WHERE a.offerID = o.id AND a.site = substr(o.zoneName, 6))
                """,
            arguments: [site]
        ) ?? 0
    }

    // MARK: The owner

    /// Answers the offers of records of this site's zone that it has not answered yet. Offers whose records refer
    /// to one another (an order, its shipment, the shipment's lines and movements) are answered together, parents
    /// first: all taken back, or none (the first refusal is every one's), so that an order never comes back shipped
    /// without what shipped it. A group one of whose records names a row not here yet waits for it.
    static func answerOffers(_ db: Database, site: SyncSite, applied: inout SyncApplied, reupload: inout [(String, String)]) throws {
        let ownZone = SyncTable.siteZone(site.siteCode)
        let pending = try Row.fetchAll(
            db,
            sql: """
                SELECT o.id, o.recordType, o.recordName, o.body, o.createdAt FROM record_offers o
                WHERE o.zoneName = ?1 AND o.site <> ?2
                AND NOT EXISTS (SELECT 1 FROM record_offer_answers a WHERE a.offerID = o.id AND a.site = ?2)
                """,
            arguments: [ownZone, site.siteCode]
        )
        // A store restored answers once its full sync has brought back what the server holds of its zone.
        guard !pending.isEmpty, try ShopSync.state(db, "restoredUntilFullSync") == nil else { return }
        let windows = try lostWindows(db)
        for group in offerGroups(pending) {
            var (groupApplied, groupReupload) = (SyncApplied(), [(String, String)]())
            var verdict: (accepted: Bool, reasons: [String])? = (true, [])
            try db.inSavepoint {
                for offer in group {
                    let judged: (Bool, String)?
                    do {
                        judged = try judge(db, offer: offer, site: site, windows: windows, applied: &groupApplied, reupload: &groupReupload)
                    } catch {
                        // Whatever it was, an answer: never a page that fails for good.
                        judged = (false, "\(offer["recordType"] as String) \(offer["recordName"] as String): could not be read: \(error)")
                    }
                    guard let (accepted, reason) = judged else {
                        verdict = nil
                        return .rollback
                    }
                    guard accepted else {
                        verdict = (false, [reason])
                        return .rollback
                    }
                    verdict?.reasons.append(reason)
                }
                return .commit
            }
            // A group that names a row not here waits for it, for an hour: past that, the row is not coming.
            if verdict == nil, let created = group.compactMap({ Timestamp($0["createdAt"] as String)?.milliseconds }).min(),
                Timestamp.now.milliseconds - created > 3_600_000
            {
                verdict = (false, ["it names a record this store does not hold"])
            }
            guard let verdict else { continue }
            if verdict.accepted {
                applied.saved += groupApplied.saved
                reupload += groupReupload
            }
            for (index, offer) in group.enumerated() {
                let reason = verdict.accepted ? verdict.reasons[index] : verdict.reasons[0]
                let answerID = UUID().uuidString.lowercased()
                try db.execute(
                    sql: "INSERT INTO record_offer_answers (recordID, site, offerID, accepted, reason) VALUES (?, ?, ?, ?, ?)",
                    arguments: [answerID, site.siteCode, offer["id"] as Int64, verdict.accepted, String(reason.prefix(1000))]
                )
                reupload.append(("record_offer_answers", answerID))
            }
        }
    }

    /// Pending offers in groups of records that refer to one another (or are the same record, offered from two
    /// places), each in parents-first order.
    private static func offerGroups(_ offers: [Row]) -> [[Row]] {
        var root = Array(offers.indices)
        func find(_ index: Int) -> Int {
            var index = index
            while root[index] != index { index = root[index] }
            return index
        }
        var byName: [String: Int] = [:]
        for (index, offer) in offers.enumerated() {
            let name: String = offer["recordName"]
            if let other = byName[name] { root[find(index)] = find(other) } else { byName[name] = index }
        }
        for (index, offer) in offers.enumerated() {
            guard let record = try? SyncRecord.decode(Data((offer["body"] as String).utf8)) else { continue }
            for case .reference(let reference) in record.fields.values {
                if let other = byName[reference.recordName] { root[find(index)] = find(other) }
            }
        }
        let order: (Row, Row) -> Bool = {
            (SyncTable.rank($0["recordType"]), $0["id"] as Int64) < (SyncTable.rank($1["recordType"]), $1["id"] as Int64)
        }
        return Dictionary(grouping: offers.indices, by: find).values
            .map { $0.map { offers[$0] }.sorted(by: order) }
            .sorted { order($0[0], $1[0]) }
    }

    /// Takes an offered record back, or says why not; nil while a row it names is not here yet.
    private static func judge(
        _ db: Database,
        offer: Row,
        site: SyncSite,
        windows: [(after: Int64, through: Int64)],
        applied: inout SyncApplied,
        reupload: inout [(String, String)]
    ) throws -> (Bool, String)? {
        let ownZone = SyncTable.siteZone(site.siteCode)
        guard let decoded = try? SyncRecord.decode(Data((offer["body"] as String).utf8)), !decoded.deleted,
            decoded.recordName == offer["recordName"], decoded.recordType == offer["recordType"], decoded.zoneID.zoneName == ownZone,
            let table = SyncTable.byName[decoded.recordType], table.zone == .site
        else { return (false, "the offer does not hold a record of zone \(ownZone)") }
        var record = table.readable(decoded)
        let name = "\(table.name) \(record.recordName)"
        // The rules a download of the record would meet: a movement moves its zone's shelf, and so on.
        if let refusal = try bindToZoneOwner(db, table: table, record: &record) ?? purchaseOwnerRefusal(db, table: table, record: record, site: site)
        {
            return (false, "\(name): \(refusal)")
        }
        let current = try RecordMapping.record(db, table: table, recordID: record.recordName, site: site, zoneName: ownZone)
        let differing = record.fields.keys.filter { $0 != FieldClock.fieldName && current?.fields[$0] != record.fields[$0] }.sorted()
        if current != nil, differing.isEmpty { return (true, "\(name): held here already") }
        // A ledger row is never changed: another version of one held here is not this store's.
        if current != nil, table.appendOnly { return (false, "\(name): held here in another version, which stands") }
        // A record deleted here stays deleted: its offer is of a version from before the deletion.
        if current == nil,
            try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM change_log WHERE tableName = ? AND recordID = ? AND operation = 'delete')",
                arguments: [table.name, record.recordName]
            ) == true
        {
            return (false, "\(name): deleted here")
        }
        let offered = FieldClock.clocks(of: record.fields)
        let own = try ownClocks(db, table: table, recordID: record.recordName, current: current, site: site)
        for field in differing {
            guard let clock = offered[field], clock.site == site.siteCode,
                let written = Int64(clock.text.prefix(while: \.isNumber)),
                windows.contains(where: { written > $0.after && written <= $0.through })
            else {
                return (false, "\(name): its \(field) was not written here in a period this store lost in a restore")
            }
            if let mine = own[field], mine >= clock { return (false, "\(name): its \(field) changed here since") }
        }
        var fields = current?.fields ?? [:]
        for field in differing { fields[field] = record.fields[field] }
        do {
            guard try writeRow(db, table: table, recordID: record.recordName, fields: fields, site: site) else { return nil }
        } catch let error as DatabaseError {
            // Any refusal of the store's (a rule, a value it cannot hold) is an answer, never a page that fails for good.
            return (false, "\(name): could not be taken back: \(NorthwindError.translating(error).description)")
        }
        // Sent with the clocks its values were written with, as a version sent again after a server restore is.
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_resend (tableName, recordID, fields, zoneName, modified) VALUES (?, ?, ?, ?, NULL)",
            arguments: [table.name, record.recordName, try ShopSync.encodeFields(record.fields), ownZone]
        )
        reupload.append((table.name, record.recordName))
        applied.saved += 1
        return (true, "\(name): taken back, written here in a period this store lost in a restore")
    }

    /// The clock of each field of the row as it is here: the acknowledged version's, or the local edit's for a
    /// value changed since.
    private static func ownClocks(
        _ db: Database,
        table: SyncTable,
        recordID: String,
        current: SyncRecord?,
        site: SyncSite
    ) throws -> [String: FieldClock] {
        guard let current else { return [:] }
        let base = try ShopSync.decodeFields(
            String.fetchOne(db, sql: "SELECT fields FROM sync_records WHERE tableName = ? AND recordID = ?", arguments: [table.name, recordID])
        )
        let held = try resendFields(db, table: table.name, recordID: recordID) ?? [:]
        let (baseClocks, heldClocks) = (FieldClock.clocks(of: base), FieldClock.clocks(of: held))
        let local = FieldClock(milliseconds: try ShopSync.changedAt(db, table: table.name, recordID: recordID), site: site.siteCode)
        var clocks: [String: FieldClock] = [:]
        for (field, value) in current.fields {
            if let clock = baseClocks[field], base[field] == value {
                clocks[field] = clock
            } else if let clock = heldClocks[field], held[field] == value {
                clocks[field] = clock
            } else {
                clocks[field] = local
            }
        }
        return clocks
    }
}
