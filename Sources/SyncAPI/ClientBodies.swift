import Foundation
import SyncProtocol

// The bodies of the two requests a shop sends most, `records/modify` and `changes/zone`, written and read directly,
// as the server does its side (`ModifyRequest`, `ModifyAnswer`): Foundation's encoder and decoder took a third of
// a shop's first upload and download (measured with `northwind-sync-bench shops`). Anything the reader does not
// expect is left to `JSONDecoder`, which reads the same bytes and gives its error. `ClientBodiesTests` hold both
// sides to Foundation's.

extension ModifyRequest {
    /// The request as JSON.
    public var json: Data {
        var writer = JSONWriter(capacity: 512 * operations.count + 128)
        writer.raw("{")
        writer.key("clientID")
        writer.string(clientID)
        writer.raw(",")
        writer.key("batchID")
        writer.string(batchID)
        if let atomic { writer.raw(atomic ? ",\"atomic\":true" : ",\"atomic\":false") }
        writer.raw(",\"operations\":[")
        for (index, operation) in operations.enumerated() {
            writer.raw(index > 0 ? ",{" : "{")
            writer.key("opID")
            writer.string(operation.opID)
            writer.raw(",")
            writer.key("operationType")
            writer.string(operation.operationType.rawValue)
            writer.raw(",\"record\":")
            writer.record(operation.record)
            writer.raw("}")
        }
        writer.raw("]")
        if let sequence {
            writer.raw(",\"sequence\":")
            writer.number(sequence)
        }
        if let takeOver { writer.raw(takeOver ? ",\"takeOver\":true" : ",\"takeOver\":false") }
        writer.raw("}")
        return Data(writer.bytes)
    }
}

extension Components.Schemas.ModifyResponse {
    /// The answer in `body`: read by `JSONReader` when it can, else by `JSONDecoder`, whose errors it throws.
    public static func decode(_ body: Data) throws -> Self {
        let read = JSONReader.read(body) { reader throws(JSONReader.Mismatch) -> Self in
            var records: [Components.Schemas.OperationResult]?
            var replayed: Bool?
            var zones: [Components.Schemas.ZoneAdvance]?
            try reader.object { key, reader throws(JSONReader.Mismatch) in
                switch key {
                case "records":
                    var list: [Components.Schemas.OperationResult] = []
                    try reader.array { reader throws(JSONReader.Mismatch) in list.append(try .init(reading: &reader)) }
                    try JSONReader.set(&records, list)
                case "replayed": try JSONReader.set(&replayed, reader.bool())
                case "zones":
                    var list: [Components.Schemas.ZoneAdvance] = []
                    try reader.array { reader throws(JSONReader.Mismatch) in list.append(try .init(reading: &reader)) }
                    try JSONReader.set(&zones, list)
                default: throw JSONReader.Mismatch()
                }
            }
            guard let records, let replayed else { throw JSONReader.Mismatch() }
            return Self(records: records, replayed: replayed, zones: zones)
        }
        if let read { return read }
        return try JSONDecoder().decode(Self.self, from: body)
    }
}

extension Components.Schemas.ZoneChangesResponse {
    /// The answer in `body`: read by `JSONReader` when it can, else by `JSONDecoder`, whose errors it throws.
    public static func decode(_ body: Data) throws -> Self {
        let read = JSONReader.read(body) { reader throws(JSONReader.Mismatch) -> Self in
            var zones: [Components.Schemas.ZoneChanges]?
            try reader.object { key, reader throws(JSONReader.Mismatch) in
                guard key == "zones" else { throw JSONReader.Mismatch() }
                var list: [Components.Schemas.ZoneChanges] = []
                try reader.array { reader throws(JSONReader.Mismatch) in list.append(try .init(reading: &reader)) }
                try JSONReader.set(&zones, list)
            }
            guard let zones else { throw JSONReader.Mismatch() }
            return Self(zones: zones)
        }
        if let read { return read }
        return try JSONDecoder().decode(Self.self, from: body)
    }
}

extension Components.Schemas.ZoneChanges {
    fileprivate init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var zoneID: ZoneID?
        var syncToken: String?
        var moreComing: Bool?
        var records: [SyncRecord]?
        var checksum: String?
        try reader.object { key, reader throws(JSONReader.Mismatch) in
            switch key {
            case "zoneID": try JSONReader.set(&zoneID, ZoneID(reading: &reader))
            case "syncToken": try JSONReader.set(&syncToken, reader.string())
            case "moreComing": try JSONReader.set(&moreComing, reader.bool())
            case "checksum": try JSONReader.set(&checksum, reader.string())
            case "records":
                var list: [SyncRecord] = []
                try reader.array { reader throws(JSONReader.Mismatch) in list.append(try SyncRecord(reading: &reader)) }
                try JSONReader.set(&records, list)
            default: throw JSONReader.Mismatch()
            }
        }
        guard let zoneID, let syncToken, let moreComing, let records else { throw JSONReader.Mismatch() }
        self.init(zoneID: zoneID, syncToken: syncToken, moreComing: moreComing, records: records, checksum: checksum)
    }
}

extension Components.Schemas.OperationResult {
    fileprivate init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var opID: String?
        var recordName: String?
        var record: SyncRecord?
        var error: SyncError?
        try reader.object { key, reader throws(JSONReader.Mismatch) in
            switch key {
            case "opID": try JSONReader.set(&opID, reader.string())
            case "recordName": try JSONReader.set(&recordName, reader.string())
            case "record": try JSONReader.set(&record, SyncRecord(reading: &reader))
            case "error": try JSONReader.set(&error, SyncError(reading: &reader))
            default: throw JSONReader.Mismatch()
            }
        }
        guard let opID, let recordName else { throw JSONReader.Mismatch() }
        self.init(opID: opID, recordName: recordName, record: record, error: error)
    }
}

extension Components.Schemas.ZoneAdvance {
    fileprivate init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var zoneName: String?
        var previousToken: String?
        var syncToken: String?
        var firstChange: Bool?
        try reader.object { key, reader throws(JSONReader.Mismatch) in
            switch key {
            case "zoneName": try JSONReader.set(&zoneName, reader.string())
            case "previousToken": try JSONReader.set(&previousToken, reader.string())
            case "syncToken": try JSONReader.set(&syncToken, reader.string())
            case "firstChange": try JSONReader.set(&firstChange, reader.bool())
            default: throw JSONReader.Mismatch()
            }
        }
        guard let zoneName, let previousToken, let syncToken, let firstChange else { throw JSONReader.Mismatch() }
        self.init(zoneName: zoneName, previousToken: previousToken, syncToken: syncToken, firstChange: firstChange)
    }
}

extension SyncError {
    fileprivate init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var code: ServerErrorCode?
        var reason: String?
        var retryAfter: Int64?
        var serverRecord: SyncRecord?
        try reader.object { key, reader throws(JSONReader.Mismatch) in
            switch key {
            case "serverErrorCode":
                guard let value = ServerErrorCode(rawValue: try reader.string()) else { throw JSONReader.Mismatch() }
                try JSONReader.set(&code, value)
            case "reason": try JSONReader.set(&reason, reader.string())
            case "retryAfter": try JSONReader.set(&retryAfter, reader.int64())
            case "serverRecord": try JSONReader.set(&serverRecord, SyncRecord(reading: &reader))
            default: throw JSONReader.Mismatch()
            }
        }
        guard let code, let reason else { throw JSONReader.Mismatch() }
        self.init(code, reason, retryAfter: retryAfter.flatMap { Int(exactly: $0) }, serverRecord: serverRecord)
    }
}
