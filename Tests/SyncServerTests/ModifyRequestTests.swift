import Foundation
import SyncAPI
import SyncProtocol
import Testing
import Yams

/// `ModifyRequest` is written by hand (so that the server reads a batch with `JSONReader`); these hold it to the
/// contract's schema and to what `JSONDecoder` reads.
struct ModifyRequestTests {
    static let contract = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/SyncAPI/openapi.yaml").standardizedFileURL

    static func json(_ text: String) -> Data { Data(text.utf8) }

    static let batch = json(
        #"{"clientID":"c","batchID":"b","atomic":false,"sequence":3,"takeOver":true,"operations":[{"opID":"o1","operationType":"create","#
            + #""record":{"recordName":"r1","recordType":"Product","zoneID":{"zoneName":"catalogue"},"fields":{"name":{"type":"STRING","value":"Chai"}}}}]}"#
    )

    @Test func itsFieldsAreTheSchemasPropertiesAndOnlyTheRequiredOnesAreRequired() throws {
        // Given the contract's ModifyRequest schema
        let document = try #require(try Yams.load(yaml: String(contentsOf: Self.contract, encoding: .utf8)) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let schema = try #require(schemas["ModifyRequest"] as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        // Then the type's keys are exactly its properties
        #expect(Set(ModifyRequest.CodingKeys.allCases.map(\.rawValue)) == Set(properties.keys))
        // And a request with only the required properties is read, while one without any of them is refused
        let required = try #require(schema["required"] as? [String])
        let minimal = #"{"clientID":"c","batchID":"b","operations":[]}"#
        #expect(try JSONDecoder().decode(ModifyRequest.self, from: Self.json(minimal)).clientID == "c")
        for name in required {
            var fields = try #require(try JSONSerialization.jsonObject(with: Self.json(minimal)) as? [String: Any])
            fields[name] = nil
            let body = try JSONSerialization.data(withJSONObject: fields)
            #expect(throws: DecodingError.self, "without \(name)") { try ModifyRequest.decode(body) }
        }
    }

    @Test func theOperationsWhoseBodyIsKeptAreThoseWhoseBodyIsAModifyRequest() throws {
        // Given the contract's operations and the schema of each one's JSON body
        let document = try #require(try Yams.load(yaml: String(contentsOf: Self.contract, encoding: .utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var batches = Set<String>()
        for operation in paths.values.flatMap(\.values).compactMap({ $0 as? [String: Any] }) {
            let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any]
            let schema = (content?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
            if schema?["$ref"] as? String == "#/components/schemas/ModifyRequest", let id = operation["operationId"] as? String {
                batches.insert(id)
            }
        }
        // Then the server keeps the body of exactly those, for ModifyRequest to read
        #expect(!batches.isEmpty)
        #expect(RawRequestBody.operationIDs == batches)
    }

    @Test func theServersReadingOfABatchIsWhatJSONDecoderReads() throws {
        // Given a batch with every field set
        // When it is read as the server reads it (its bytes at hand) and by JSONDecoder alone
        let fast = try ModifyRequest.decode(Self.batch)
        let plain = try JSONDecoder().decode(ModifyRequest.self, from: Self.batch)
        // Then both read the same request
        #expect(fast == plain)
        #expect(fast.operations.first?.record.recordName == "r1")
        #expect(fast.sequence == 3 && fast.takeOver == true && fast.atomic == false)
    }

    @Test func aShapeTheReaderDoesNotExpectIsLeftToJSONDecoderAndItsError() {
        // Given a batch whose sequence is a string
        let body = Self.json(#"{"clientID":"c","batchID":"b","sequence":"3","operations":[]}"#)
        // When the server reads it
        // Then JSONDecoder's error names the field
        #expect {
            try ModifyRequest.decode(body)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["sequence"]
        }
    }
}
