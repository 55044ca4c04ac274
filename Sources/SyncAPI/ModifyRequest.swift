import Foundation
import HTTPTypes
import OpenAPIRuntime
import SyncProtocol

/// The `ModifyRequest` schema of openapi.yaml, ours rather than generated (`typeOverrides`), for one reason: a
/// batch of hundreds of records is read by `JSONReader` in a tenth of the CPU `JSONDecoder` takes (measured with
/// `northwind-sync-bench`). The server keeps the body as sent (`RawRequestBody`) and hands the generated code `{}`;
/// the decoding here then reads the kept bytes, and leaves any shape the reader does not expect to `JSONDecoder`,
/// which reads the same bytes and gives its error. `ModifyRequestTests` hold its fields to the document's.
public struct ModifyRequest: Codable, Hashable, Sendable {
    public var clientID: String
    public var batchID: String
    /// All operations or none (the default), or each on its own.
    public var atomic: Bool?
    public var operations: [Components.Schemas.RecordOperation]
    /// This batch's place in its site's sequence (shared database only).
    public var sequence: Int64?
    /// This copy of the store takes its site over from any other copy.
    public var takeOver: Bool?

    public init(
        clientID: String,
        batchID: String,
        atomic: Bool? = nil,
        operations: [Components.Schemas.RecordOperation],
        sequence: Int64? = nil,
        takeOver: Bool? = nil
    ) {
        self.clientID = clientID
        self.batchID = batchID
        self.atomic = atomic
        self.operations = operations
        self.sequence = sequence
        self.takeOver = takeOver
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case clientID, batchID, atomic, operations, sequence, takeOver
    }

    public init(from decoder: any Decoder) throws {
        // The whole body, as the server received it, is this request: read it directly.
        if decoder.codingPath.isEmpty, let body = RawRequestBody.bytes {
            if let batch = JSONReader.read(body, { reader throws(JSONReader.Mismatch) in try Self(reading: &reader) }) {
                self = batch
            } else {
                self = try RawRequestBody.$bytes.withValue(nil) { try JSONDecoder().decode(Self.self, from: body) }
            }
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            clientID: try container.decode(String.self, forKey: .clientID),
            batchID: try container.decode(String.self, forKey: .batchID),
            atomic: try container.decodeIfPresent(Bool.self, forKey: .atomic),
            operations: try container.decode([Components.Schemas.RecordOperation].self, forKey: .operations),
            sequence: try container.decodeIfPresent(Int64.self, forKey: .sequence),
            takeOver: try container.decodeIfPresent(Bool.self, forKey: .takeOver)
        )
    }

    /// The batch in `body`, read as the server reads it: by `JSONReader` when it can, else by `JSONDecoder`, whose
    /// errors it throws.
    public static func decode(_ body: Data) throws -> Self {
        try RawRequestBody.$bytes.withValue(body) { try JSONDecoder().decode(Self.self, from: Data("{}".utf8)) }
    }

    private init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var clientID: String?
        var batchID: String?
        var atomic: Bool?
        var sequence: Int64?
        var takeOver: Bool?
        var operations: [Components.Schemas.RecordOperation]?
        try reader.object { key, reader throws(JSONReader.Mismatch) in
            switch key {
            case "clientID": try JSONReader.set(&clientID, reader.string())
            case "batchID": try JSONReader.set(&batchID, reader.string())
            case "atomic": try JSONReader.set(&atomic, reader.bool())
            case "sequence": try JSONReader.set(&sequence, reader.int64())
            case "takeOver": try JSONReader.set(&takeOver, reader.bool())
            case "operations":
                var list: [Components.Schemas.RecordOperation] = []
                try reader.array { reader throws(JSONReader.Mismatch) in list.append(try .init(reading: &reader)) }
                try JSONReader.set(&operations, list)
            default: throw JSONReader.Mismatch()
            }
        }
        guard let clientID, let batchID, let operations else { throw JSONReader.Mismatch() }
        self.init(clientID: clientID, batchID: batchID, atomic: atomic, operations: operations, sequence: sequence, takeOver: takeOver)
    }
}

/// The body of a request whose type reads its own JSON (`ModifyRequest`), kept by `Middleware` for that type. The
/// generated code is handed `{}` instead: `JSONDecoder` scans a whole body before any type reads it, 1.5 ms for a
/// batch of 400 records, which the type would then ignore.
public enum RawRequestBody {
    @TaskLocal public static var bytes: Data?

    /// The operations whose request body reads its own JSON. `ModifyRequestTests` hold this to the operations whose
    /// body is a `ModifyRequest` in openapi.yaml.
    public static let operationIDs: Set<String> = [Operations.ModifyRecords.id]

    /// Among the generated server's middlewares: keeps the body of those operations and hands on `{}`.
    public struct Middleware: ServerMiddleware {
        public init() {}

        public func intercept(
            _ request: HTTPRequest,
            body: HTTPBody?,
            metadata: ServerRequestMetadata,
            operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            guard RawRequestBody.operationIDs.contains(operationID), let body else { return try await next(request, body, metadata) }
            let bytes = Data(try await ArraySlice<UInt8>(collecting: body, upTo: SyncLimits.bytesPerRequest))
            return try await RawRequestBody.$bytes.withValue(bytes) { try await next(request, HTTPBody("{}"), metadata) }
        }
    }
}

extension Components.Schemas.RecordOperation {
    fileprivate init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var opID: String?
        var operationType: OperationTypePayload?
        var record: SyncRecord?
        try reader.object { key, reader throws(JSONReader.Mismatch) in
            switch key {
            case "opID": try JSONReader.set(&opID, reader.string())
            case "operationType":
                guard let type = OperationTypePayload(rawValue: try reader.string()) else { throw JSONReader.Mismatch() }
                try JSONReader.set(&operationType, type)
            case "record": try JSONReader.set(&record, SyncRecord(reading: &reader))
            default: throw JSONReader.Mismatch()
            }
        }
        guard let opID, let operationType, let record else { throw JSONReader.Mismatch() }
        self.init(opID: opID, operationType: operationType, record: record)
    }
}
