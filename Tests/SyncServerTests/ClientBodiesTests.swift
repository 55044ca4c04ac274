import Foundation
import SyncAPI
import SyncProtocol
import Testing

/// A shop writes `records/modify`'s request and reads the two busiest answers itself (`ClientBodies.swift`); these
/// hold that code to what Foundation's encoder and decoder make of the same values and bytes.
struct ClientBodiesTests {
    static let record = RecordSamples.everyType

    @Test func aBatchWrittenDirectlyReadsBackEqualByBothReaders() throws {
        // Given a batch with every kind of field, a sequence and a take-over
        let batch = ModifyRequest(
            clientID: "c\"1",
            batchID: "b/1",
            atomic: true,
            operations: [
                .init(opID: "0", operationType: .create, record: Self.record),
                .init(opID: "1", operationType: .forceDelete, record: SyncRecord(recordName: "x", recordType: "T", zoneID: ZoneID("z"))),
            ],
            sequence: 7,
            takeOver: true
        )
        // When it is written directly
        let json = batch.json
        // Then Foundation's decoder and the server's reader both read the same batch
        #expect(try JSONDecoder().decode(ModifyRequest.self, from: json) == batch)
        #expect(try ModifyRequest.decode(json) == batch)
    }

    @Test func anAnswerWithRecordsAndErrorsReadsAsFoundationReadsIt() throws {
        // Given an answer with a saved record, a conflict carrying the server's record, a throttled operation and a zone's tokens
        let answer = Components.Schemas.ModifyResponse(
            records: [
                .init(opID: "0", recordName: "p1", record: Self.record),
                .init(opID: "1", recordName: "p2", error: SyncError(.conflict, "changed \"there\"", serverRecord: Self.record)),
                .init(opID: "2", recordName: "p3", error: SyncError(.throttled, "later", retryAfter: 30)),
            ],
            replayed: true,
            zones: [.init(zoneName: "catalog", previousToken: "t:8", syncToken: "t:9", firstChange: false)]
        )
        let body = try JSONEncoder().encode(answer)
        // When the shop reads it directly
        let read = try Components.Schemas.ModifyResponse.decode(body)
        // Then it is what Foundation's decoder reads
        #expect(read == (try JSONDecoder().decode(Components.Schemas.ModifyResponse.self, from: body)))
        #expect(read == answer)
    }

    @Test func aPageOfChangesReadsAsFoundationReadsIt() throws {
        // Given a last page of a zone, with a deletion and a checksum
        var deleted = SyncRecord(recordName: "gone", recordType: "Product", zoneID: ZoneID("catalog"))
        deleted.deleted = true
        let page = Components.Schemas.ZoneChangesResponse(zones: [
            .init(zoneID: ZoneID("catalog"), syncToken: "t:9", moreComing: false, records: [Self.record, deleted], checksum: "ab12")
        ])
        let body = try JSONEncoder().encode(page)
        // When the shop reads it directly
        let read = try Components.Schemas.ZoneChangesResponse.decode(body)
        // Then it is what Foundation's decoder reads
        #expect(read == (try JSONDecoder().decode(Components.Schemas.ZoneChangesResponse.self, from: body)))
        #expect(read == page)
    }

    @Test func aShapeTheReaderDoesNotExpectIsLeftToFoundation() throws {
        // Given an answer with a member a later server might add
        let body = Data(#"{"zones":[{"zoneID":{"zoneName":"catalog"},"syncToken":"t","moreComing":true,"records":[],"hint":1}]}"#.utf8)
        // When the shop reads it
        let read = try Components.Schemas.ZoneChangesResponse.decode(body)
        // Then Foundation's decoder reads it, ignoring the member, as it always did
        #expect(read.zones.first?.syncToken == "t")
        // And a body that is not an answer at all gives Foundation's error
        #expect(throws: DecodingError.self) { try Components.Schemas.ZoneChangesResponse.decode(Data(#"{"zones":3}"#.utf8)) }
    }
}
