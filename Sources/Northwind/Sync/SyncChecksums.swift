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
        var local: UInt64 = 0
        for row in try Row.fetchAll(db, sql: "SELECT recordID, changeTag FROM sync_records WHERE zoneName = ?", arguments: [zone]) {
            local ^= checksum(recordName: row["recordID"], changeTag: row["changeTag"])
        }
        for body in try String.fetchAll(
            db,
            sql: "SELECT body FROM sync_waiting WHERE zoneName = ?1 UNION ALL SELECT body FROM sync_held WHERE zoneName = ?1",
            arguments: [zone]
        ) {
            let record = try SyncRecord.decode(Data(body.utf8))
            if !record.deleted { local ^= checksum(recordName: record.recordName, changeTag: record.recordChangeTag ?? "") }
        }
        local ^= try supersededChecksum(db, zone: zone)
        let mine = hex(local)
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
