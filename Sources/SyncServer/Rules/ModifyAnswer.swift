import Foundation
import SyncProtocol

/// `records/modify`'s answer as JSON, written once: stored for replays and sent as is, so a batch's records are not
/// encoded three times over.
enum ModifyAnswer {
    /// `bodies` holds the JSON of records already written for storage, so that they are not written twice.
    static func json(_ response: Components.Schemas.ModifyResponse, bodies: [RecordKey: String] = [:]) throws -> String {
        var writer = JSONWriter()
        writer.raw("{\"records\":[")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for (index, result) in response.records.enumerated() {
            writer.raw(index > 0 ? ",{" : "{")
            writer.key("opID")
            writer.string(result.opID)
            writer.raw(",")
            writer.key("recordName")
            writer.string(result.recordName)
            if let record = result.record {
                writer.raw(",\"record\":")
                writer.raw(bodies[RecordKey(zoneName: record.zoneID.zoneName, recordName: record.recordName)] ?? record.json)
            }
            // Errors are few: the encoder will do.
            if let error = result.error { writer.raw(",\"error\":" + String(decoding: try encoder.encode(error), as: UTF8.self)) }
            writer.raw("}")
        }
        writer.raw(response.replayed ? "],\"replayed\":true}" : "],\"replayed\":false}")
        return writer.text
    }

    /// A stored answer, marked as a replay.
    static func replayed(_ stored: String) -> String {
        let first = "\"replayed\":false}"
        guard stored.hasSuffix(first) else { return stored }
        return String(stored.dropLast(first.count)) + "\"replayed\":true}"
    }

    static func decoded(_ json: String) throws -> Components.Schemas.ModifyResponse {
        try JSONDecoder().decode(Components.Schemas.ModifyResponse.self, from: Data(json.utf8))
    }
}
