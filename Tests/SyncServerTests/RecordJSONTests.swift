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

    @Test func fieldsWrittenAloneReadBackEqualByBothReaders() throws {
        // Given the fields of a record with one field of each type
        let fields = RecordSamples.everyType.fields
        // When they are written alone, as a shop keeps the server's last version of a row
        let json = Data(SyncRecord.fieldsJSON(fields).utf8)
        // Then Foundation's decoder and the protocol's reader both read the same fields back
        #expect(try JSONDecoder().decode([String: FieldValue].self, from: json) == fields)
        #expect(try SyncRecord.decodeFields(json) == fields)
    }

    @Test func fieldsStoredByJSONEncoderStillRead() throws {
        // Given fields as an older version stored them, with Foundation's encoder (keys sorted, slashes escaped)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var fields = RecordSamples.everyType.fields
        fields["note"] = .string("n/a \"quoted\" é")
        let stored = try encoder.encode(fields)
        // When a shop reads them back
        let read = try SyncRecord.decodeFields(stored)
        // Then every field is as it was
        #expect(read == fields)
    }

    @Test func fieldsAreWrittenAsJSONEncoderWritesThemWithSortedKeys() throws {
        // Given fields whose dictionary order differs from their names' order, in upper and lower case and with digits
        let fields: [String: FieldValue] = [
            "b": .int64(1), "B": .int64(-2), "_z": .null, "a10": .string("x \"q\""), "a2": .string("é"), "shipVia": .int64(3),
            "shippedDate": .string("2026-11-29"),
        ]
        // When they are written alone, and by Foundation's encoder with sorted keys
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Then the text is the same, byte for byte (no value here holds a "/", which Foundation escapes)
        #expect(SyncRecord.fieldsJSON(fields) == String(decoding: try encoder.encode(fields), as: UTF8.self))
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
