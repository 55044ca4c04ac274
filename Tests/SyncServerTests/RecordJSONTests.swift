import Foundation
import SyncProtocol
import Testing

/// The server writes records' JSON by hand for speed; Foundation's decoder must read every shape back unchanged.
@Suite("Record JSON")
struct RecordJSONTests {
    @Test func everyFieldTypeReadsBackEqual() throws {
        // Given a record with one field of each type, stamps and a change tag
        let record = RecordSamples.everyType
        // When it is written and read back
        let read = try JSONDecoder().decode(SyncRecord.self, from: Data(record.json.utf8))
        // Then it is the same record
        #expect(read == record)
    }

    @Test func stringsThatNeedEscapingReadBackEqual() throws {
        // Given names and values with quotes, backslashes, control characters and characters beyond ASCII
        let awkward = "say \"hi\"\\ \n\r\t \u{01}\u{1F} / é 中 🍵"
        let record = SyncRecord(recordName: awkward, recordType: "Note", zoneID: ZoneID("z\"1"), fields: [awkward: .string(awkward)], deleted: true)
        // When it is written and read back
        let read = try JSONDecoder().decode(SyncRecord.self, from: Data(record.json.utf8))
        // Then every character survives
        #expect(read == record)
    }
}

enum RecordSamples {
    /// A record with a field of every type, lists of lists, stamps and a change tag.
    static let everyType = SyncRecord(
        recordName: "p1",
        recordType: "Product",
        zoneID: ZoneID("catalog"),
        recordChangeTag: "42",
        fields: [
            "name": .string("Chai"),
            "stock": .int64(-39),
            "max": .int64(.max),
            "min": .int64(.min),
            "weight": .double(0.1),
            "big": .double(1e300),
            "price": .decimal("-18.00"),
            "since": .timestamp(1_795_460_000_000),
            "blob": .bytes(Data([0, 1, 254, 255])),
            "category": .reference(RecordReference(recordName: "c1")),
            "supplier": .reference(RecordReference(recordName: "s1", zoneName: "people")),
            "picture": .asset(AssetReference(sha256: String(repeating: "a", count: 64), size: 10, contentType: "image/png")),
            "tags": .list([.string("tea"), .list([.int64(1)]), .asset(AssetReference(sha256: "b", size: 0))]),
        ],
        created: Stamp(timestamp: 1, site: "HQ"),
        modified: Stamp(timestamp: 2, site: "OXF"),
        deleted: true
    )
}
