import Foundation
import SyncProtocol

/// A zone's sync token: the store's epoch, the zone and the number of the last change the client holds.
/// Opaque to clients (base64url of JSON); the epoch changes when a store is restored, so older tokens expire.
struct ZoneToken: Codable, Hashable, Sendable {
    var epoch: String
    var zone: String
    var seq: Int64

    var encoded: String { TokenCoding.encode(self) }

    static func decode(_ text: String, zone: String, epoch: String) throws(SyncError) -> ZoneToken {
        guard let token = TokenCoding.decode(ZoneToken.self, text), token.zone == zone else {
            throw SyncError(.badRequest, "syncToken is not a token of zone \(zone); send the token its last changes/zone answer gave")
        }
        guard token.epoch == epoch else {
            throw SyncError(
                .changeTokenExpired,
                "the token of zone \(zone) is from before the server's data was restored; fetch the zone again without a token"
            )
        }
        return token
    }
}

/// The database's token: every zone's last change number, so changes/database can name the zones that moved.
struct DatabaseToken: Codable, Hashable, Sendable {
    var epoch: String
    var zones: [String: Int64]

    var encoded: String { TokenCoding.encode(self) }
}

enum TokenCoding {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(value)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) -> T? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard text.utf8.count < 64 * 1024, let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }
}
