import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// An invoice number given twice. A store put back whole to an older copy (with its watermark, so it cannot know
/// until it syncs) may issue again a number an earlier copy issued and sent: both documents are real, and both reach
/// the server. Every installation settles it the same way, as `settleUniqueClash` does for an order number: the
/// document whose number was written first (by clock, then record id) keeps it; the other is set aside, whole, with
/// its lines and any credit note of it, into the inbox and `sync_set_aside`, so that each installation holds the
/// same ledger. The site whose series it is then invoices that shipment again under its next number
/// (`reissueSetAside`), once its own zone is whole again, and tells the manager to send the customer the new one.
extension SyncEngineSide {
    enum NumberClash { case incomingSetAside, localSetAside, wait }

    /// Settles an incoming invoice or credit note whose number a different one holds here. When another document
    /// holds its shipment or return instead (one invoice per shipment, one credit note per return), the incoming one
    /// waits: the one held here may yet lose its number to a document not here yet (a new installation meets them in
    /// any order), and then the incoming one applies. Nil when the clash is over something else.
    static func settleNumberClash(
        _ db: Database,
        table: SyncTable,
        record: SyncRecord,
        site: SyncSite,
        applied: inout SyncApplied
    ) throws -> NumberClash? {
        guard table.name == "invoices", case .string(let series)? = record.fields["site"], case .string(let kind)? = record.fields["kind"],
            case .int64(let year)? = record.fields["year"], case .int64(let counter)? = record.fields["counter"],
            !record.deleted
        else { return nil }
        guard
            let other = try String.fetchOne(
                db.cachedStatement(
                    sql: "SELECT recordID FROM invoices WHERE site = ? AND kind = ? AND year = ? AND counter = ? AND recordID <> ?"
                ),
                arguments: [series, kind, year, counter, record.recordName]
            )
        else {
            return try sameSourceHolder(db, record) != nil ? .wait : nil
        }
        // A version without the clock of its number (never one the server took: it refuses such saves) loses.
        let incomingLoses =
            try FieldClock.clocks(of: record.fields)["counter"] == nil
            || clash(db, table: table, record: record, other: other, column: "counter", site: site).incomingLoses
        let number = record.fields["number"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "\(counter)"
        let reason =
            "invoice number \(number) was given twice (a copy of site \(series)'s store put back to an older one issued it again): "
            + "the earlier document keeps it, and this one is set aside"
        if incomingLoses {
            guard try !isKnownElsewhere(db, table: "invoices", record: record) else { return nil }
            try setAside(db, table: "invoices", record: record, keptBy: other, reason: reason + "; its site invoices the shipment again")
            applied.discarded += 1
            return .incomingSetAside
        }
        try setAsideHeld(db, invoiceRecordID: other, keptBy: record.recordName, site: site, reason: reason, applied: &applied)
        return .localSetAside
    }

    /// The other invoice held here for the record's shipment (an invoice), or the other credit note of its return.
    private static func sameSourceHolder(_ db: Database, _ record: SyncRecord) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT recordID FROM invoices i WHERE i.recordID <> ?1 AND (
                      (i.kind = 'invoice' AND ?2 = 'invoice' AND i.shipmentID = (SELECT id FROM shipments WHERE recordID = ?3))
                      OR i.returnID = (SELECT id FROM returns WHERE recordID = ?4))
                    """
            ),
            arguments: [
                record.recordName, record.fields["kind"] == .string("invoice") ? "invoice" : "creditNote",
                referenced(record, "shipmentID"), referenced(record, "returnID"),
            ]
        )
    }

    /// A record of this id held here, or known in another zone or set aside in one, is not this one to set aside:
    /// a forgery naming another's record would otherwise lift its guard.
    private static func isKnownElsewhere(_ db: Database, table: String, record: SyncRecord) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM \(table) WHERE recordID = ?1)
                      OR EXISTS (SELECT 1 FROM sync_records WHERE tableName = ?2 AND recordID = ?1 AND zoneName <> ?3)
                      OR EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = ?2 AND recordID = ?1)
                    """
            ),
            arguments: [record.recordName, table, record.zoneID.zoneName]
        ) ?? true
    }

    private static func referenced(_ record: SyncRecord, _ field: String) -> String? {
        if case .reference(let reference)? = record.fields[field] { reference.recordName } else { nil }
    }

    /// Notes a record as set aside and lists it, whole, in the inbox. Its number (year and counter) stays taken.
    static func setAside(_ db: Database, table: String, record: SyncRecord, keptBy: String?, reason: String) throws {
        func text(_ name: String) -> String? { if case .string(let value)? = record.fields[name] { value } else { nil } }
        func int(_ name: String) -> Int64? { if case .int64(let value)? = record.fields[name] { value } else { nil } }
        try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO sync_set_aside (tableName, recordID, zoneName, number, site, kind, year, counter, shipmentRecordID, keptBy)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        .execute(arguments: [
            table, record.recordName, record.zoneID.zoneName, text("number"), text("site"), text("kind"), int("year"), int("counter"),
            referenced(record, "shipmentID"), keptBy,
        ])
        try recordConflict(db, table: table, recordID: record.recordName, DiscardedValue(field: "*", lost: .string(record.json)), reason: reason)
    }

    /// Sets aside an invoice or credit note held here, its lines and the credit notes that correct it: each into the
    /// inbox, whole, then out of the ledger (the delete guards let a set-aside row go). Their bases stay: the server
    /// still holds them, and a zone's checksum counts them.
    private static func setAsideHeld(
        _ db: Database,
        invoiceRecordID: String,
        keptBy: String?,
        site: SyncSite,
        reason: String,
        applied: inout SyncApplied
    ) throws {
        guard let invoices = SyncTable.byName["invoices"], let lines = SyncTable.byName["invoice_lines"],
            let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM invoices WHERE recordID = ?"), arguments: [invoiceRecordID])
        else { return }
        for credit in try String.fetchAll(db.cachedStatement(sql: "SELECT recordID FROM invoices WHERE correctsID = ?"), arguments: [id]) {
            try setAsideHeld(
                db,
                invoiceRecordID: credit,
                keptBy: nil,
                site: site,
                reason: "it corrects a document set aside: " + reason,
                applied: &applied
            )
        }
        for line in try String.fetchAll(db.cachedStatement(sql: "SELECT recordID FROM invoice_lines WHERE invoiceID = ?"), arguments: [id]) {
            guard let record = try RecordMapping.record(db, table: lines, recordID: line, site: site, zoneName: try zone(db, "invoice_lines", line))
            else { continue }
            try setAside(db, table: lines.name, record: record, keptBy: nil, reason: "its invoice was set aside: " + reason)
            try forgetResend(db, table: lines.name, recordID: line)
            try db.cachedStatement(sql: "DELETE FROM invoice_lines WHERE recordID = ?").execute(arguments: [line])
            applied.discarded += 1
        }
        guard
            let record = try RecordMapping.record(
                db,
                table: invoices,
                recordID: invoiceRecordID,
                site: site,
                zoneName: try zone(db, "invoices", invoiceRecordID)
            )
        else { return }
        try setAside(db, table: invoices.name, record: record, keptBy: keptBy, reason: reason + "; its site invoices the shipment again")
        // A version waiting to go up again after a server restore would go up as a removal: nothing of it goes up.
        try forgetResend(db, table: invoices.name, recordID: invoiceRecordID)
        try db.cachedStatement(sql: "DELETE FROM invoices WHERE recordID = ?").execute(arguments: [invoiceRecordID])
        applied.discarded += 1
    }

    /// The zone a row's base names; for a row never sent, its site's zone.
    private static func zone(_ db: Database, _ table: String, _ recordID: String) throws -> String {
        if let zone = try String.fetchOne(
            db.cachedStatement(sql: "SELECT zoneName FROM sync_records WHERE tableName = ? AND recordID = ?"),
            arguments: [table, recordID]
        ) {
            return zone
        }
        let series = try String.fetchOne(db, sql: "SELECT site FROM invoices WHERE recordID = ?", arguments: [recordID])
        return SyncTable.siteZone(try series ?? StoreMetadata.siteCode(db))
    }

    /// True when a downloaded record is, or hangs from, one set aside here: it is set aside too (or again, when a
    /// zone is fetched afresh), its base kept, and nothing written.
    static func keepsSetAside(_ db: Database, table: SyncTable, record: SyncRecord, applied: inout SyncApplied) throws -> Bool {
        guard table.name == "invoices" || table.name == "invoice_lines", !record.deleted else { return false }
        if try isSetAside(db, table: table.name, recordID: record.recordName, zone: record.zoneID.zoneName) { return true }
        for field in ["invoiceID", "correctsID"] {
            // Only a parent set aside in the record's own zone: a line or credit note is its invoice's site's.
            guard case .reference(let parent)? = record.fields[field],
                try isSetAside(db, table: "invoices", recordID: parent.recordName, zone: record.zoneID.zoneName)
            else { continue }
            guard try !isKnownElsewhere(db, table: table.name, record: record) else { return false }
            try setAside(
                db,
                table: table.name,
                record: record,
                keptBy: nil,
                reason: "it hangs from \(try setAsideNumber(db, parent.recordName) ?? parent.recordName), an invoice or credit note set "
                    + "aside (its number was given twice)"
            )
            applied.discarded += 1
            return true
        }
        return false
    }

    private static func setAsideNumber(_ db: Database, _ recordID: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT number FROM sync_set_aside WHERE tableName = 'invoices' AND recordID = ?"),
            arguments: [recordID]
        )
    }

    /// Whether a record was set aside here; with `zone`, only in that zone.
    static func isSetAside(_ db: Database, table: String, recordID: String, zone: String? = nil) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = ? AND recordID = ? AND (?3 IS NULL OR zoneName = ?3))"
            ),
            arguments: [table, recordID, zone]
        ) ?? false
    }

    /// At the end of a full sync, every zone fetched: an invoice still waiting because another holds its shipment
    /// here (or a credit note, its return) is settled as a number is. Two copies of a store put back whole each
    /// invoiced the shipment; the one whose number was written first stays, the other is set aside, its number
    /// taken. What waited on them (their lines, or the one now free) is tried again.
    static func settleWaitingDocuments(_ db: Database, site: SyncSite) throws {
        guard let table = SyncTable.byName["invoices"] else { return }
        let before = try lastSeq(db)
        var applied = SyncApplied()
        var reupload: [(String, String)] = []
        var settled = false
        let waiting = try String.fetchAll(db, sql: "SELECT body FROM sync_waiting").map { try SyncRecord.decode(Data($0.utf8)) }
        for record in waiting where record.recordType == table.name && !record.deleted {
            guard let other = try sameSourceHolder(db, record) else { continue }
            let incomingLoses =
                try FieldClock.clocks(of: record.fields)["counter"] == nil
                || clash(db, table: table, record: record, other: other, column: "counter", site: site).incomingLoses
            let reason =
                "a second invoice of one shipment, or credit note of one return (copies of a store put back whole each issued "
                + "one): the one whose number came first stands, and this one is set aside; its number stays taken"
            if incomingLoses {
                guard try !isKnownElsewhere(db, table: table.name, record: record) else { continue }
                try setAside(db, table: table.name, record: record, keptBy: other, reason: reason)
                try saveBase(db, table: table.name, record: record)
                try db.execute(
                    sql: "DELETE FROM sync_waiting WHERE zoneName = ? AND recordName = ?",
                    arguments: [record.zoneID.zoneName, record.recordName]
                )
            } else {
                try setAsideHeld(db, invoiceRecordID: other, keptBy: record.recordName, site: site, reason: reason, applied: &applied)
            }
            settled = true
        }
        guard settled else { return }
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        let queue = try String.fetchAll(db, sql: "SELECT body FROM sync_waiting").map { try SyncRecord.decode(Data($0.utf8)) }
        try db.execute(sql: "DELETE FROM sync_waiting")
        for record in try applyInOrder(db, queue, site: site, applied: &applied, reupload: &reupload) {
            try keepWaiting(db, record)
        }
        try finishApply(db, after: before, reupload: reupload)
    }

    /// Issues again, under the next numbers of its series, what was set aside of this site's documents: a
    /// shipment's invoice, then a credit note for each of its returns that has none (a credit note set aside with
    /// its invoice, or for its own number). Only once this store holds its own zone whole (a store put back whole,
    /// or still fetching its zone, would number from an old highest and give a number twice again). A shipment
    /// invoiced meanwhile (by another copy of this store) keeps that invoice. The inbox tells the manager what to
    /// send the customer. Local changes: they go up with the next push.
    static func reissueSetAside(_ db: Database, site: SyncSite, rules: InvoiceRules) throws {
        guard try ShopSync.state(db, "restoredUntilFullSync") == nil,
            try ShopSync.state(db, "refetching:" + SyncTable.siteZone(site.siteCode)) == nil
        else { return }
        let shipments = try String.fetchAll(
            db,
            sql: """
                SELECT DISTINCT shipmentRecordID FROM sync_set_aside
                WHERE tableName = 'invoices' AND site = ? AND reissuedAs IS NULL AND shipmentRecordID IS NOT NULL
                """,
            arguments: [site.siteCode]
        )
        for shipmentRecordID in shipments {
            // One shipment's failure (a record of the same ID arrived first, say) must not fail the sync that ends
            // here, nor the next: it rolls back alone, and the inbox says so once.
            do {
                try db.inSavepoint {
                    try reissue(db, shipmentRecordID: shipmentRecordID, rules: rules)
                    return .commit
                }
            } catch {
                let key = "reissueFailed:" + shipmentRecordID
                guard try ShopSync.state(db, key) == nil else { continue }
                try ShopSync.setState(db, key, Timestamp.now.description)
                let entry = try String.fetchOne(
                    db,
                    sql: "SELECT recordID FROM sync_set_aside WHERE tableName = 'invoices' AND shipmentRecordID = ? ORDER BY setAsideAt",
                    arguments: [shipmentRecordID]
                )
                try recordConflict(
                    db,
                    table: "invoices",
                    recordID: entry ?? shipmentRecordID,
                    DiscardedValue(field: "number", lost: nil),
                    reason: "its invoice was set aside (its number given twice), and issuing it again failed: \(error); "
                        + "the next sync tries again"
                )
            }
        }
    }

    /// Issues again what one shipment of this site lacks of what was set aside.
    private static func reissue(_ db: Database, shipmentRecordID: String, rules: InvoiceRules) throws {
        guard let shipment = try Shipment.filter(Column("recordID") == shipmentRecordID).fetchOne(db),
            let order = try Order.fetchOne(db, key: shipment.orderID)
        else { return }
        // The inbox entries name a document set aside, so that resolving them only says they were seen to.
        let setAside = try Row.fetchOne(
            db,
            sql: """
                SELECT recordID, number, kind FROM sync_set_aside WHERE tableName = 'invoices' AND shipmentRecordID = ?
                ORDER BY kind = 'invoice' DESC, setAsideAt LIMIT 1
                """,
            arguments: [shipmentRecordID]
        )
        let entry: String = setAside?["recordID"] ?? shipmentRecordID
        let invoice: String
        if let held = try String.fetchOne(
            db,
            sql: "SELECT number FROM invoices WHERE shipmentID = ? AND kind = 'invoice'",
            arguments: [shipment.id]
        ) {
            invoice = held
        } else {
            let replaced: String? = setAside?["kind"] == "invoice" ? setAside?["number"] : nil
            invoice = try Invoicing.issueInvoice(for: shipment, of: order, rules: rules, replaces: replaced, db).number
            try tellManager(db, entry: entry, order: order, replaced: replaced, issued: invoice, what: "invoice")
        }
        let returns = try Return.fetchAll(
            db,
            sql: "SELECT * FROM returns r WHERE shipmentID = ? AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.returnID = r.id) ORDER BY id",
            arguments: [shipment.id]
        )
        for returned in returns {
            var quantities: [Int64: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT shipmentLineID, quantity FROM return_lines WHERE returnID = ?", arguments: [returned.id]) {
                quantities[row[0]] = row[1]
            }
            try Invoicing.creditNote(for: returned, of: shipment, order: order, returnLines: quantities, rules: rules, db)
            let issued = try String.fetchOne(db, sql: "SELECT number FROM invoices WHERE returnID = ?", arguments: [returned.id])
            try tellManager(db, entry: entry, order: order, replaced: nil, issued: issued ?? "?", what: "credit note")
        }
        try db.execute(
            sql: "UPDATE sync_set_aside SET reissuedAs = ? WHERE tableName = 'invoices' AND shipmentRecordID = ? AND reissuedAs IS NULL",
            arguments: [invoice, shipmentRecordID]
        )
    }

    private static func tellManager(_ db: Database, entry: String, order: Order, replaced: String?, issued: String, what: String) throws {
        try recordConflict(
            db,
            table: "invoices",
            recordID: entry,
            DiscardedValue(field: "number", kept: .string(issued), lost: replaced.map(FieldValue.string)),
            reason: "a \(what) of order \(order.number) was set aside, its number having been given twice (or its invoice's): issued "
                + "again as \(issued); send the customer \(what) \(issued)"
                + (replaced.map { " in place of the one numbered \($0)" } ?? "")
        )
    }
}
