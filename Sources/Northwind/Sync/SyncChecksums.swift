import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// A zone's checksum, as the server keeps it: what a catch-up and a first download's staging are checked against.
extension SyncEngineSide {
    /// Compares the server's checksum of a zone, at the end of a catch-up, with this store's: the XOR over the
    /// records it holds as the server sent them (its bases, the records waiting for a parent and those held for a
    /// newer version) of the first 8 bytes of SHA-256(name NUL tag). A difference starts the zone's fetch again
    /// from scratch, once; if it remains after that, `sync status` names the zone until a catch-up agrees.
    static func compareChecksum(_ db: Database, zone: String, server: String, applied: inout SyncApplied) throws {
        let kept = try keptRecordsChecksum(db, zone: zone)
        var mine = hex(try otherPartsChecksum(db, zone: zone) ^ kept)
        if mine != server.lowercased() {
            // The kept sum is only trusted while it agrees: before refetching, count the records once more.
            let counted = try countRecordsChecksum(db, zone: zone)
            if counted != kept { mine = hex(try otherPartsChecksum(db, zone: zone) ^ counted) }
        }
        if mine == server.lowercased() {
            try ShopSync.setState(db, "checksumRetried:" + zone, nil)
            try ShopSync.setState(db, "checksumDiffers:" + zone, nil)
            return
        }
        if try ShopSync.state(db, "checksumRetried:" + zone) == nil {
            try ShopSync.setState(db, "checksumRetried:" + zone, "1")
            try ShopSync.setState(db, "token:" + zone, nil)
            try ShopSync.setState(db, "refetching:" + zone, "1")
            try db.execute(sql: "DELETE FROM sync_refetch WHERE zoneName = ?", arguments: [zone])
            applied.refetch = true
        } else {
            try ShopSync.setState(
                db,
                "checksumDiffers:" + zone,
                "\(Timestamp.now.description): zone \(zone) differs from the server's after fetching it again (server \(server), here \(mine))"
            )
            applied.checksumDiffers = true
        }
    }

    /// The zone's records' part, as the triggers of `sync_zone_sums` keep it; counted when unknown.
    static func keptRecordsChecksum(_ db: Database, zone: String) throws -> UInt64 {
        if let sum = try Int64.fetchOne(db.cachedStatement(sql: "SELECT sum FROM sync_zone_sums WHERE zoneName = ?"), arguments: [zone]) {
            return UInt64(bitPattern: sum)
        }
        return try countRecordsChecksum(db, zone: zone)
    }

    /// Hashes every record of the zone again, corrects any record's kept `checksum` that is missing or wrong, and
    /// stores the zone's sum.
    static func countRecordsChecksum(_ db: Database, zone: String) throws -> UInt64 {
        var sum: UInt64 = 0
        var wrong: [(table: String, recordID: String, checksum: Int64)] = []
        let rows = try Row.fetchCursor(
            db,
            sql: "SELECT tableName, recordID, changeTag, checksum FROM sync_records WHERE zoneName = ?",
            arguments: [zone]
        )
        while let row = try rows.next() {
            let part = checksum(recordName: row["recordID"], changeTag: row["changeTag"])
            sum ^= part
            if row["checksum"] as Int64? != Int64(bitPattern: part) { wrong.append((row["tableName"], row["recordID"], Int64(bitPattern: part))) }
        }
        for record in wrong {
            try db.execute(
                sql: "UPDATE sync_records SET checksum = ? WHERE tableName = ? AND recordID = ?",
                arguments: [record.checksum, record.table, record.recordID]
            )
        }
        try db.execute(
            sql: "INSERT INTO sync_zone_sums (zoneName, sum) VALUES (?, ?) ON CONFLICT (zoneName) DO UPDATE SET sum = excluded.sum",
            arguments: [zone, Int64(bitPattern: sum)]
        )
        return sum
    }

    /// The records the store holds outside `sync_records` as the server sent them: those waiting for a parent, those
    /// held for a newer version, and the versions an owner's catch-up superseded.
    static func otherPartsChecksum(_ db: Database, zone: String) throws -> UInt64 {
        var local: UInt64 = 0
        for body in try String.fetchAll(
            db,
            sql: "SELECT body FROM sync_waiting WHERE zoneName = ?1 UNION ALL SELECT body FROM sync_held WHERE zoneName = ?1",
            arguments: [zone]
        ) {
            let record = try SyncRecord.decode(Data(body.utf8))
            if !record.deleted { local ^= checksum(recordName: record.recordName, changeTag: record.recordChangeTag ?? "") }
        }
        return local ^ (try supersededChecksum(db, zone: zone))
    }

    static func checksum(recordName: String, changeTag: String) -> UInt64 {
        var bytes = Array(recordName.utf8)
        bytes.append(0)
        bytes.append(contentsOf: changeTag.utf8)
        return SHA256.hash(data: bytes).prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
    }

    /// The staged zone's checksum, as the server computes it (`compareChecksum`), in its hex form.
    static func stagedChecksum(_ db: Database, zone: String) throws -> String {
        var sum: UInt64 = 0
        let rows = try Row.fetchCursor(db, sql: "SELECT recordName, changeTag FROM sync_snapshot WHERE zoneName = ?", arguments: [zone])
        while let row = try rows.next() { sum ^= checksum(recordName: row[0], changeTag: row[1]) }
        return hex(sum)
    }

    /// A checksum as the server writes it: 16 lowercase hex digits.
    static func hex(_ sum: UInt64) -> String {
        let text = String(sum, radix: 16)
        return String(repeating: "0", count: max(0, 16 - text.count)) + text
    }
}
