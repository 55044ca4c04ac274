import Foundation
import GRDB
import Glibc
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import SyncServer

extension ConvergenceRun {
    // MARK: - Checks

    /// Checked after every step at the site that acted: no order without its lines, no shipped order without its
    /// movements, and no status that went backwards.
    func checkAtomicity(_ site: String) async throws {
        let (orphans, unmoved, statuses) = try await stores[site]!.store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT number FROM orders o WHERE NOT EXISTS (SELECT 1 FROM order_lines l WHERE l.orderID = o.id)"),
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT recordID FROM orders o WHERE status = 'shipped' AND EXISTS (SELECT 1 FROM order_lines l
                          WHERE l.orderID = o.id AND l.quantity <> ifnull((SELECT -sum(m.delta) FROM stock_movements m
                            WHERE m.orderID = o.id AND m.productID = l.productID AND m.reason = 'shipped'), 0))
                        """
                ),
                try Row.fetchAll(db, sql: "SELECT recordID, status FROM orders").map { ($0["recordID"] as String, $0["status"] as String) }
            )
        }
        if let number = orphans.first { throw Violation(description: "\(site) shows order \(number) without its lines") }
        // (Demo orders shipped before movements were recorded have none; only the workload's are checked.)
        if let recordID = unmoved.first(where: ordersTaken.contains) {
            throw Violation(description: "\(site) shows shipped order \(orderNumbers[recordID] ?? recordID) without its lines' units shipped")
        }
        var seen = statusesSeen[site, default: [:]]
        for (recordID, status) in statuses {
            if let before = seen[recordID], before != status, before != "new" {
                throw Violation(description: "order \(orderNumbers[recordID] ?? recordID) went from \(before) back to \(status) at \(site)")
            }
            seen[recordID] = status
        }
        statusesSeen[site] = seen
    }

    /// Every synced table's rows by record id, with references as record ids and a movement's location spelled out:
    /// what must agree everywhere.
    func canonicalDump(_ site: String) async throws -> [String: [String: String]] {
        let syncSite = self.syncSite(site)
        return try await stores[site]!.store.pool.read { db in
            var dump: [String: [String: String]] = [:]
            for table in SyncTable.all {
                var rows: [String: String] = [:]
                for recordID in try String.fetchAll(db, sql: "SELECT recordID FROM \(table.name)") {
                    guard var record = try RecordMapping.record(db, table: table, recordID: recordID, site: syncSite, zoneName: "") else {
                        continue
                    }
                    for (name, value) in record.fields {
                        if case .reference(let reference) = value { record.fields[name] = .string("→" + reference.recordName) }
                    }
                    rows[recordID] = record.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "|")
                }
                dump[table.name] = rows
            }
            return dump
        }
    }

    /// What a store knows of a record, to explain a difference: the row, the base the server acknowledged, the
    /// change-log entries and the inbox entries.
    func syncState(of recordID: String, in table: String, at site: String) async throws -> String {
        try await stores[site]!.store.pool.read { db in
            let row = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE recordID = ?)", arguments: [recordID]) == true
            let tag = try String.fetchOne(db, sql: "SELECT changeTag FROM sync_records WHERE recordID = ?", arguments: [recordID])
            let entries = try Row.fetchAll(
                db,
                sql: "SELECT seq, operation, origin FROM change_log WHERE recordID = ? ORDER BY seq",
                arguments: [recordID]
            )
            .map { "\($0["seq"] as Int64) \($0["operation"] as String) \($0["origin"] as String)" }
            let through = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'uploadedThrough'") ?? "0"
            let inbox = try String.fetchAll(db, sql: "SELECT reason FROM sync_conflicts WHERE recordID = ?", arguments: [recordID])
            let waiting = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sync_waiting WHERE recordName = ?)", arguments: [recordID]) == true
            return "row \(row ? "here" : "absent"), base \(tag ?? "none"), log [\(entries.joined(separator: ", "))] uploaded through \(through), "
                + "waiting \(waiting), inbox \(inbox)"
        }
    }

    /// What the server holds of a record: live or a tombstone, at which place in its zone.
    func serverState(of recordID: String, in table: String) async throws -> String {
        let zones = SyncTable.sharedZone(of: table).map { [$0] } ?? sites.map { SyncTable.siteZone(siteCodes[$0]!) }
        let service = try await SyncService.open(database: database)
        let found = try await service.storage.lookup(
            container: "acme",
            scope: .shared,
            keys: zones.map { RecordKey(zoneName: $0, recordName: recordID) }
        )
        await service.close()
        guard let stored = found.values.first else { return "nothing (or a tombstone since purged)" }
        return "\(stored.record.deleted ? "a tombstone" : "live") at seq \(stored.seq), tag \(stored.record.recordChangeTag ?? "none")"
    }

    /// FNV-1a of a dump, to print beside the site.
    static func hash(_ dump: [String: [String: String]]) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for (table, rows) in dump.sorted(by: { $0.key < $1.key }) {
            for byte in table.utf8 { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
            for (id, row) in rows.sorted(by: { $0.key < $1.key }) {
                for byte in (id + row).utf8 { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
        }
        return String(value, radix: 16)
    }

    /// Every check of the issue, after healing.
    func checkConverged() async throws {
        // Convergence: the same rows everywhere.
        let reference = try await canonicalDump("hq")
        log("hq dump \(Self.hash(reference))")
        for site in sites.dropFirst() {
            let dump = try await canonicalDump(site)
            log("\(site) dump \(Self.hash(dump))")
            for table in reference.keys.sorted() where dump[table] != reference[table] {
                let mine = dump[table] ?? [:]
                let theirs = reference[table] ?? [:]
                let differing = Set(mine.keys).union(theirs.keys).sorted().first { mine[$0] != theirs[$0] }!
                var states: [String] = []
                for other in sites { states.append("\(other): \(try await syncState(of: differing, in: table, at: other))") }
                states.append("server: \(try await serverState(of: differing, in: table))")
                throw Violation(
                    description: """
                        \(site) and hq differ in \(table), record \(differing):
                          \(site): \(mine[differing] ?? "absent")
                          hq: \(theirs[differing] ?? "absent")
                        what each installation knows of it:
                          \(states.joined(separator: "\n  "))
                        """
                )
            }
        }
        // The server's per-zone checksums agree with what each installation holds.
        let service = try await SyncService.open(database: database)
        let zones = try await service.storage.zones(container: "acme", scope: .shared)
        await service.close()
        for site in sites {
            let bases = try await stores[site]!.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT zoneName, recordID, changeTag FROM sync_records").map {
                    ($0["zoneName"] as String, $0["recordID"] as String, $0["changeTag"] as String)
                }
            }
            var sums: [String: UInt64] = [:]
            for (zone, recordID, tag) in bases { sums[zone, default: 0] ^= ZoneChecksum.of(recordName: recordID, changeTag: tag) }
            for zone in zones where !zone.deleted && sums[zone.zoneID.zoneName, default: 0] != zone.checksum {
                throw Violation(description: "\(site)'s records of zone \(zone.zoneID.zoneName) do not match the server's checksum")
            }
            // What the store keeps of each zone's sum (by triggers, through kills and restores) is that count too.
            let kept = try await stores[site]!.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT zoneName, sum FROM sync_zone_sums").map { ($0["zoneName"] as String, $0["sum"] as Int64) }
            }
            for (zone, sum) in kept where UInt64(bitPattern: sum) != sums[zone, default: 0] {
                throw Violation(description: "\(site)'s kept checksum of zone \(zone) is not the sum of its records")
            }
        }
        // No lost update: every order taken and every customer created and kept is everywhere.
        for site in sites {
            let (orders, customers) = try await stores[site]!.store.pool.read { db in
                (try String.fetchSet(db, sql: "SELECT recordID FROM orders"), try String.fetchSet(db, sql: "SELECT recordID FROM customers"))
            }
            if let lost = ordersTaken.first(where: { !orders.contains($0) }) {
                throw Violation(description: "order \(orderNumbers[lost] ?? lost) is missing at \(site)")
            }
            if let lost = customersCreated.sorted().first(where: { !customers.contains($0) }) {
                throw Violation(description: "customer \(lost) is missing at \(site)")
            }
        }
        // Stock: each location's shelf is the sum of its own movements and never negative; every other installation
        // sees the same level for it.
        var shelves: [String: [String: Int]] = [:]
        for site in sites {
            let (wrong, shelf) = try await stores[site]!.store.pool.read { db in
                (
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT p.recordID FROM products p WHERE p.unitsInStock < 0 OR p.unitsInStock <>
                              (SELECT coalesce(sum(delta), 0) FROM stock_movements m WHERE m.productID = p.id AND m.location IS NULL)
                            """
                    ),
                    Dictionary(
                        uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT recordID, unitsInStock FROM products").map {
                            ($0["recordID"] as String, $0["unitsInStock"] as Int)
                        }
                    )
                )
            }
            if let product = wrong.first {
                throw Violation(description: "at \(site), the stock of \(product) is not the sum of its movements, or negative")
            }
            shelves[siteCodes[site]!] = shelf
        }
        for site in sites {
            let levels = try await stores[site]!.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT l.location, p.recordID, l.units FROM stock_levels l JOIN products p ON p.id = l.productID").map {
                    ($0["location"] as String, $0["recordID"] as String, $0["units"] as Int)
                }
            }
            for (location, product, units) in levels {
                if let shelf = shelves[location], shelf[product] != units {
                    throw Violation(
                        description: "\(site) sees \(units) of \(product) at \(location), which holds \(shelf[product].map(String.init) ?? "none")"
                    )
                }
            }
        }
        try await checkPurchasing()
        try await checkFulfilment()
        try await checkInvoices()
        // Transfers: each left its sender with exactly its quantity, and arrived once at most, never with more.
        for site in sites {
            let wrong = try await stores[site]!.store.pool.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT t.recordID FROM stock_transfers t
                        WHERE (SELECT count(*) FROM stock_movements m
                               WHERE m.transferID = t.id AND m.reason = 'transferOut' AND m.delta = -t.quantity) <> 1
                           OR EXISTS (SELECT 1 FROM stock_movements m
                                      WHERE m.transferID = t.id AND m.reason = 'transferIn' AND m.delta > t.quantity)
                        """
                )
            }
            if let transfer = wrong.first {
                throw Violation(description: "at \(site), transfer \(transfer) lacks its movement out, or received more than was sent")
            }
        }
        // Exactly once, and order numbers unique: no number twice, and no movement applied twice.
        for site in sites {
            let (twiceNumbers, twiceMovements) = try await stores[site]!.store.pool.read { db in
                (
                    try String.fetchAll(db, sql: "SELECT number FROM orders GROUP BY number HAVING count(*) > 1"),
                    try String.fetchAll(db, sql: "SELECT recordID FROM stock_movements GROUP BY recordID HAVING count(*) > 1")
                )
            }
            if let number = twiceNumbers.first { throw Violation(description: "order number \(number) is used twice at \(site)") }
            if let movement = twiceMovements.first { throw Violation(description: "movement \(movement) is applied twice at \(site)") }
            try await checkAtomicity(site)
        }
        try await checkInbox()
        try await checkNumbersGivenTwice()
        for site in sites {
            log("\(site): \(try await stores[site]!.sync.conflicts(all: true).count) values in the conflict inbox")
        }
    }

    /// Purchasing: at every installation, units on order are what its own sent orders still await, each order's status
    /// follows its receipts, and every product's average cost at every location is the same everywhere.
    func checkPurchasing() async throws {
        var averages: [String: [String: Int]] = [:]
        for site in sites {
            let code = siteCodes[site]!
            let (wrongOnOrder, wrongStatus, average) = try await stores[site]!.store.pool.read { db in
                (
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT p.recordID FROM products p WHERE p.unitsOnOrder <>
                              (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
                                 WHERE m.purchaseLineID = l.id AND m.location IS NULL), 0), 0)), 0)
                               FROM purchase_order_lines l JOIN purchase_orders o ON o.id = l.purchaseOrderID
                               WHERE l.productID = p.id AND o.location IS NULL AND o.status IN ('sent', 'partiallyReceived'))
                            """
                    ),
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT o.number FROM purchase_orders o
                            JOIN (SELECT l.purchaseOrderID AS id,
                                    min(ifnull((SELECT sum(m.delta) FROM stock_movements m WHERE m.purchaseLineID = l.id
                                      AND m.location IS (SELECT location FROM purchase_orders WHERE id = l.purchaseOrderID)), 0) >= l.quantity) AS full,
                                    max(ifnull((SELECT sum(m.delta) FROM stock_movements m WHERE m.purchaseLineID = l.id
                                      AND m.location IS (SELECT location FROM purchase_orders WHERE id = l.purchaseOrderID)), 0) > 0) AS some
                                  FROM purchase_order_lines l GROUP BY l.purchaseOrderID) r ON r.id = o.id
                            WHERE (o.status = 'received' AND NOT r.full) OR (o.status = 'partiallyReceived' AND (r.full OR NOT r.some))
                               OR (o.status = 'sent' AND r.some)
                            """
                    ),
                    Dictionary(
                        uniqueKeysWithValues: try Row.fetchAll(
                            db,
                            sql: """
                                SELECT p.recordID || '@' || ifnull(m.location, ?) AS place, m.averageCostCents AS cost
                                FROM stock_movements m JOIN products p ON p.id = m.productID
                                WHERE m.id = (SELECT max(c.id) FROM stock_movements c WHERE c.productID = m.productID
                                  AND c.location IS m.location AND c.averageCostCents IS NOT NULL)
                                """,
                            arguments: [code]
                        ).map { ($0["place"] as String, $0["cost"] as Int) }
                    )
                )
            }
            if let product = wrongOnOrder.first {
                throw Violation(description: "at \(site), units on order of \(product) are not what its sent purchase orders await")
            }
            if let number = wrongStatus.first {
                throw Violation(description: "at \(site), purchase order \(number)'s status does not follow its receipts")
            }
            averages[site] = average
        }
        for site in sites.dropFirst() where averages[site] != averages["hq"] {
            let mine = averages[site] ?? [:]
            let theirs = averages["hq"] ?? [:]
            let place = Set(mine.keys).union(theirs.keys).sorted().first { mine[$0] != theirs[$0] }!
            throw Violation(
                description:
                    "the average cost of \(place) is \(mine[place].map(String.init) ?? "none") at \(site), \(theirs[place].map(String.init) ?? "none") at hq"
            )
        }
    }

    /// The values an installation's inbox lists as lost, as `valueKey`s.
    static func inboxListing(_ backoffice: Backoffice) async throws -> Set<String> {
        let entries = try await backoffice.store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT tableName, recordID, field, lostValue FROM sync_conflicts WHERE lostValue IS NOT NULL").map {
                ($0["tableName"] as String, $0["recordID"] as String, $0["field"] as String, $0["lostValue"] as String)
            }
        }
        var listed: Set<String> = []
        for (table, recordID, field, json) in entries {
            let lost = try JSONDecoder().decode(FieldValue.self, from: Data(json.utf8))
            // A whole record (a refused change, an edit a delete discarded) lists every field it had.
            if field == "*", case .string(let json) = lost, let record = try? JSONDecoder().decode(SyncRecord.self, from: Data(json.utf8)) {
                for (name, value) in record.fields { listed.insert(valueKey(table, recordID, name, value)) }
            } else {
                listed.insert(valueKey(table, recordID, field, lost))
            }
        }
        return listed
    }

    /// A number given twice (a whole folder put back to an older copy gives again the numbers it gave since, until it
    /// syncs) is settled by renaming the later order: that order keeps everything else, and an inbox says so.
    func checkNumbersGivenTwice() async throws {
        let given = Dictionary(grouping: ordersTaken, by: { orderNumbers[$0]! }).filter { $0.value.count > 1 }
        guard !given.isEmpty else { return }
        let (numbers, renamed) = try await stores["hq"]!.store.pool.read { db in
            (
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT recordID, number FROM orders").map {
                        ($0["recordID"] as String, $0["number"] as String)
                    }
                ),
                try String.fetchSet(db, sql: "SELECT recordID FROM sync_conflicts WHERE tableName = 'orders' AND field = 'number'")
            )
        }
        var listed = renamed
        for site in sites where site != "hq" {
            listed.formUnion(
                try await stores[site]!.store.pool.read { db in
                    try String.fetchSet(db, sql: "SELECT recordID FROM sync_conflicts WHERE tableName = 'orders' AND field = 'number'")
                }
            )
        }
        for (number, recordIDs) in given.sorted(by: { $0.key < $1.key }) {
            // Only a whole folder put back, before it syncs, may give a number again.
            if recordIDs.filter({ !ordersFromFoldersPutBack.contains($0) }).count > 1 {
                throw Violation(description: "order number \(number) was given twice by a store that knew it was put back, or was never put back")
            }
            let moved = recordIDs.filter { numbers[$0] != number }
            guard moved.count == recordIDs.count - 1, moved.allSatisfy(listed.contains) else {
                throw Violation(
                    description:
                        "order number \(number) was given to \(recordIDs.count) orders and not settled by renaming, with an inbox entry, all but one"
                )
            }
            log("order number \(number), given twice, settled: \(moved.map { numbers[$0] ?? "?" }.joined(separator: ", ")), in the inbox")
        }
    }

    /// The inbox lists every discarded value: each value the workload wrote is the final one, or some site had it in
    /// front of it when it changed or deleted it, or some installation's inbox lists it as lost.
    func checkInbox() async throws {
        // An entry counts when an inbox listed it, even if that store was later put back to a copy from before it
        // (which loses its inbox with everything else it did since), or was a second machine now gone.
        var listed = inboxListedBefore
        for site in sites { listed.formUnion(try await Self.inboxListing(stores[site]!)) }
        var unlisted: [String] = []
        var (kept, superseded, inInbox) = (0, 0, 0)
        for write in writes {
            let key = Self.valueKey(write.table, write.recordID, write.field, write.value)
            let final = try await fields(at: "hq", table: write.table, recordID: write.recordID)
            if final?[write.field] == write.value {
                kept += 1
            } else if seenValues.contains(key) {
                superseded += 1
            } else if listed.contains(key) {
                inInbox += 1
            } else {
                unlisted.append("step \(write.step) at \(write.site): \(key)")
            }
        }
        log(
            "inbox check: \(writes.count) values written: \(kept) stand, \(superseded) changed or deleted by a site that had them, "
                + "\(inInbox) discarded and in an inbox, \(unlisted.count) discarded without an inbox entry"
        )
        if !unlisted.isEmpty {
            throw Violation(description: "values discarded that no inbox lists:\n  " + unlisted.joined(separator: "\n  "))
        }
    }
}
