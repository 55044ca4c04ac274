import Crypto
import Foundation
import SyncAPI
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
        writer.raw("]")
        if let zones = response.zones {
            writer.raw(",\"zones\":[")
            for (index, zone) in zones.enumerated() {
                writer.raw(index > 0 ? ",{" : "{")
                writer.raw(zone.firstChange ? "\"firstChange\":true," : "\"firstChange\":false,")
                writer.key("previousToken")
                writer.string(zone.previousToken)
                writer.raw(",")
                writer.key("syncToken")
                writer.string(zone.syncToken)
                writer.raw(",")
                writer.key("zoneName")
                writer.string(zone.zoneName)
                writer.raw("}")
            }
            writer.raw("]")
        }
        // Last, as `replayed` rewrites it.
        writer.raw(response.replayed ? ",\"replayed\":true}" : ",\"replayed\":false}")
        return writer.text
    }

    /// The batch's content, as a digest: its atomicity and each operation's ID, type and record.
    /// The bytes hashed never change: digests stored by earlier versions are compared with new ones. They are written
    /// into one buffer and hashed once (a string and a `Data` per operation were 7% of a batch's CPU).
    static func digest(_ request: Components.Schemas.ModifyRequest) -> String {
        var content = JSONWriter(capacity: 64 * 1024)
        content.raw(request.atomic ?? true ? "atomic\n" : "each\n")
        for operation in request.operations {
            content.raw(operation.opID)
            content.raw("\u{0}")
            content.raw(operation.operationType.rawValue)
            content.raw("\u{0}")
            content.record(operation.record, sortingFields: true)
            content.raw("\n")
        }
        return SHA256.hash(data: content.bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// A batch ID seen before answers as a replay only if the content is the same: a store reverted or copied
    /// reuses IDs for new changes, which an old answer would mark as sent.
    static func checkReplay(batchID: String, stored: String?, sent: String) throws(SyncError) {
        guard let stored, stored != sent else { return }
        throw SyncError(
            .batchReused,
            "batch \(batchID) was sent before with other content, so it was not applied; "
                + "send these changes under a new batchID (this happens when a store is reverted to an older copy)"
        )
    }

    /// A stored answer, marked as a replay.
    static func replayed(_ stored: String) -> String {
        let first = "\"replayed\":false}"
        guard stored.hasSuffix(first) else { return stored }
        return String(stored.dropLast(first.count)) + "\"replayed\":true}"
    }
}
