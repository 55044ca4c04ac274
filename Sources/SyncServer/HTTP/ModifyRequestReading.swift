import Foundation
import SyncProtocol

extension Components.Schemas.ModifyRequest {
    /// The batch in `body`: read by `JSONReader` when it can (a tenth of the CPU, measured with
    /// `northwind-sync-bench`), else by `JSONDecoder`, whose errors it throws.
    static func decode(_ body: Data) throws -> Self {
        if let batch = JSONReader.read(body, { reader throws(JSONReader.Mismatch) in try Self(reading: &reader) }) { return batch }
        return try JSONDecoder().decode(Self.self, from: body)
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
