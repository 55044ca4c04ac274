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
            let sameSource = try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM invoices i WHERE i.recordID <> ?1 AND (
                          (i.kind = 'invoice' AND ?2 = 'invoice' AND i.shipmentID = (SELECT id FROM shipments WHERE recordID = ?3))
                          OR i.returnID = (SELECT id FROM returns WHERE recordID = ?4)))
                        """
                ),
                arguments: [record.recordName, kind, Self.referenced(record, "shipmentID"), Self.referenced(record, "returnID")]
            )
            return sameSource == true ? .wait : nil
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
            try setAside(db, table: "invoices", record: record, keptBy: other, reason: reason + "; its site invoices the shipment again")
            applied.discarded += 1
            return .incomingSetAside
        }
        try setAsideHeld(db, invoiceRecordID: other, keptBy: record.recordName, site: site, reason: reason, applied: &applied)
        return .localSetAside
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
            guard case .reference(let parent)? = record.fields[field], try isSetAside(db, table: "invoices", recordID: parent.recordName) else {
                continue
            }
            // A record of this id held here, or known in another zone, is not this one to set aside: a forgery
            // naming another's record would otherwise lift its guard.
            let known = try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM \(table.name) WHERE recordID = ?1)
                          OR EXISTS (SELECT 1 FROM sync_records WHERE tableName = ?2 AND recordID = ?1 AND zoneName <> ?3)
                          OR EXISTS (SELECT 1 FROM sync_set_aside WHERE tableName = ?2 AND recordID = ?1)
                        """
                ),
                arguments: [record.recordName, table.name, record.zoneID.zoneName]
            )
            guard known == false else { return false }
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
            guard let shipment = try Shipment.filter(Column("recordID") == shipmentRecordID).fetchOne(db),
                let order = try Order.fetchOne(db, key: shipment.orderID)
            else { continue }
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
                for row in try Row.fetchAll(db, sql: "SELECT shipmentLineID, quantity FROM return_lines WHERE returnID = ?", arguments: [returned.id])
                {
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
