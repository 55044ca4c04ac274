import Foundation
import SyncProtocol
import Testing

@testable import NorthwindTestSupport

/// The server reads records with its own `JSONReader` for speed and leaves every other shape to `JSONDecoder`. Where
/// the reader gives an answer, it must be `JSONDecoder`'s answer.
@Suite("JSON reader")
struct JSONReaderTests {
    static let everyType = RecordSamples.everyType

    static func read(_ text: String) -> SyncRecord? {
        JSONReader.read(Data(text.utf8)) { reader throws(JSONReader.Mismatch) in try SyncRecord(reading: &reader) }
    }

    @Test func readsWhatTheServerWrites() {
        // Given a record with a field of every type, written by the server's JSON writer
        let json = Self.everyType.json
        // When the reader reads it
        // Then it is the same record
        #expect(Self.read(json) == Self.everyType)
    }

    @Test func readsWhatJSONEncoderWrites() throws {
        // Given the same record written by Foundation's encoder, as the generated client sends it (values may come
        // before their types, keys in any order)
        let json = String(decoding: try JSONEncoder().encode(Self.everyType), as: UTF8.self)
        // When the reader reads it
        // Then it is the same record
        #expect(Self.read(json) == Self.everyType)
    }

    @Test func resolvesEscapesAsJSONDecoderDoes() throws {
        // Given strings with every escape, a surrogate pair, characters beyond ASCII and a NUL
        let json = #"""
            {"recordName":"a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\uD83C\uDF75 é 中 🍵","zoneID":{"zoneName":"z"},
             "fields":{"k\u0041":{"type":"STRING","value":"\u4e2d"}}}
            """#
        // When the reader and JSONDecoder read it
        let expected = try JSONDecoder().decode(SyncRecord.self, from: Data(json.utf8))
        // Then they agree
        #expect(Self.read(json) == expected)
        #expect(expected.recordName == "a\"b\\c/d\u{8}\u{C}\n\r\t\u{0}é🍵 é 中 🍵")
    }

    @Test(arguments: [
        (#"{"recordName":"a","zoneID":{"zoneName":"z"},"recordChangeTag":null}"#, "a null"),
        (#"{"recordName":"a","zoneID":{"zoneName":"z"},"extra":1}"#, "an unknown key"),
        (#"{"recordName":"a","recordName":"b","zoneID":{"zoneName":"z"}}"#, "a duplicate key"),
        (#"{"recordName":"a","zoneID":{"zoneName":"z"},"fields":{"n":{"type":"INT64","value":1.0}}}"#, "an integer with a fraction"),
        (#"{"recordName":"a","zoneID":{"zoneName":"z"},"fields":{"n":{"type":"INT64","value":1e2}}}"#, "an integer with an exponent"),
        (#"{"recordName":"a","zoneID":{"zoneName":"z"},"fields":{"n":{"type":"INT64","value":9223372036854775808}}}"#, "an integer too big"),
        (#"{"recordName":"\uD800","zoneID":{"zoneName":"z"}}"#, "a lone surrogate"),
        (#"{"recordName":"a","zoneID":{"zoneName":"z"},"fields":{"n":{"type":"DECIMAL","value":"1e5"}}}"#, "a malformed decimal"),
        (#"{"recordName":"a","zoneID":{"zoneName":"z"}} x"#, "trailing text"),
        (#"{"recordName":"a""#, "a truncated document"),
    ])
    func leavesOtherShapesToJSONDecoder(json: String, shape: String) {
        // Given a document in a shape the reader does not take
        // When the reader reads it
        // Then it declines, and SyncRecord.decode answers as JSONDecoder does
        #expect(Self.read(json) == nil, "\(shape)")
        let decoder = try? JSONDecoder().decode(SyncRecord.self, from: Data(json.utf8))
        #expect((try? SyncRecord.decode(Data(json.utf8))) == decoder, "\(shape)")
    }

    @Test func declinesDeepNestingWithoutExhaustingTheStack() {
        // Given a list nested 100,000 levels deep
        let depth = 100_000
        let value = String(repeating: #"{"type":"LIST","value":["#, count: depth) + String(repeating: "]}", count: depth)
        let json = #"{"recordName":"a","zoneID":{"zoneName":"z"},"fields":{"n":"# + value + "}}"
        // When the reader reads it
        // Then it declines (JSONDecoder refuses it in turn) instead of crashing
        #expect(Self.read(json) == nil)
    }

    @Test func invalidUTF8IsDeclined() {
        // Given a record name with a byte that is not UTF-8
        var bytes = Array(#"{"recordName":"a"#.utf8)
        bytes.append(0xFF)
        bytes.append(contentsOf: #"","zoneID":{"zoneName":"z"}}"#.utf8)
        // When the reader reads it
        let read = JSONReader.read(Data(bytes)) { reader throws(JSONReader.Mismatch) in try SyncRecord(reading: &reader) }
        // Then it declines
        #expect(read == nil)
    }

    /// Seeded: flips, deletes and inserts bytes in valid records, then checks the reader never accepts what
    /// `JSONDecoder` refuses and never reads a value other than `JSONDecoder`'s.
    @Test func mutatedDocumentsNeverDisagreeWithJSONDecoder() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["NORTHWIND_FUZZ_SEED"] ?? "") ?? 20_261_124
        var random = SplitMix64(seed: seed)
        // Fields in name order: a dictionary's order changes from one process to the next, and the seed alone must
        // decide the run.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let sources = [Array(Self.everyType.canonicalJSON.utf8), Array(try encoder.encode(Self.everyType))]
        let alphabet = Array(#"{}[]":,\0123456789.eE+-tfnu abcINTSRG"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        var accepted = 0
        for round in 0..<3_000 {
            var bytes = sources[round % 2]
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let at = Int(random.next() % UInt64(bytes.count))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0: bytes[at] = byte
                case 1: bytes.remove(at: at)
                default: bytes.insert(byte, at: at)
                }
            }
            let data = Data(bytes)
            guard let read = JSONReader.read(data, { reader throws(JSONReader.Mismatch) in try SyncRecord(reading: &reader) }) else { continue }
            accepted += 1
            let decoded = try? JSONDecoder().decode(SyncRecord.self, from: data)
            #expect(
                read == decoded,
                "seed \(seed), round \(round) (replay with NORTHWIND_FUZZ_SEED=\(seed)): \(String(decoding: bytes, as: UTF8.self))"
            )
            if read != decoded { return }
        }
        // Some mutations keep the document valid (a digit for a digit, a letter in a string): those were compared.
        #expect(accepted > 100)
    }
}
