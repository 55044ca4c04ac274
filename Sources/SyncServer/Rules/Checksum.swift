import Crypto
import Foundation

/// A zone's checksum: the XOR, over its live records, of the first 8 bytes of SHA-256("recordName\0changeTag").
/// XOR lets the server keep it up to date one record at a time, and lets a client compute it in any order.
enum ZoneChecksum {
    static func of(recordName: String, changeTag: String) -> UInt64 {
        var bytes = Array(recordName.utf8)
        bytes.append(0)
        bytes.append(contentsOf: changeTag.utf8)
        let digest = SHA256.hash(data: bytes)
        return digest.prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
    }

    static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
