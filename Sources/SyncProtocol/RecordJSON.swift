import Foundation

extension SyncRecord {
    /// The record as JSON, as `JSONEncoder` would write it (keys in another order). Written directly because a server
    /// encodes every record it stores and answers, and Foundation's encoder costs it ten times as much (measured with
    /// `northwind-sync-bench`). `RecordJSONTests` check that `JSONDecoder` reads it back equal, for every field type.
    public var json: String {
        var writer = JSONWriter()
        writer.record(self)
        return writer.text
    }

    /// The same JSON with the fields in name order: the same record gives the same text in every process (a
    /// dictionary's order changes from one process to the next), as a digest of its content needs.
    public var canonicalJSON: String {
        var writer = JSONWriter()
        writer.record(self, sortingFields: true)
        return writer.text
    }

    /// Fields alone as a JSON object in name order, as `JSONEncoder` with `.sortedKeys` writes them (but for `/`,
    /// which it escapes and this leaves): how a shop keeps the server's last version of a row, once per record.
    public static func fieldsJSON(_ fields: [String: FieldValue]) -> String {
        var writer = JSONWriter()
        writer.fields(fields, sorted: true)
        return writer.text
    }
}

/// Writes JSON as UTF-8 bytes: the sync protocol's records here, and the web API's product search answers (its
/// `ProductSearchJSON`). Escaping follows RFC 8259.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func raw(_ fragment: String) { bytes.append(contentsOf: fragment.utf8) }

    public mutating func number(_ value: Int64) { bytes.append(contentsOf: String(value).utf8) }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        // Runs of bytes that need no escape, nearly always the whole string, are copied at once.
        value.withUTF8 { utf8 in
            var run = 0
            for (index, byte) in utf8.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                escape(byte)
                run = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)],
            ])
        }
    }

    /// `"name":`
    public mutating func key(_ name: String) {
        string(name)
        raw(":")
    }

    public mutating func record(_ record: SyncRecord, sortingFields: Bool = false) {
        raw("{")
        key("recordName")
        string(record.recordName)
        raw(",")
        key("recordType")
        string(record.recordType)
        raw(",\"zoneID\":{")
        key("zoneName")
        string(record.zoneID.zoneName)
        raw("}")
        if let tag = record.recordChangeTag {
            raw(",")
            key("recordChangeTag")
            string(tag)
        }
        raw(",\"fields\":")
        fields(record.fields, sorted: sortingFields)
        if let created = record.created { stamp("created", created) }
        if let modified = record.modified { stamp("modified", modified) }
        raw(record.deleted ? ",\"deleted\":true}" : ",\"deleted\":false}")
    }

    private mutating func stamp(_ name: String, _ stamp: Stamp) {
        raw(",")
        key(name)
        raw("{\"timestamp\":")
        number(stamp.timestamp)
        raw(",")
        key("site")
        string(stamp.site)
        raw("}")
    }

    mutating func fields(_ fields: [String: FieldValue], sorted: Bool) {
        raw("{")
        if sorted {
            for (index, (name, value)) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { raw(",") }
                key(name)
                field(value)
            }
        } else {
            for (index, (name, value)) in fields.enumerated() {
                if index > 0 { raw(",") }
                key(name)
                field(value)
            }
        }
        raw("}")
    }

    /// A map of strings as a JSON object in key order.
    public mutating func strings(_ map: [String: String]) {
        raw("{")
        for (index, (name, value)) in map.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { raw(",") }
            key(name)
            string(value)
        }
        raw("}")
    }

    mutating func field(_ value: FieldValue) {
        raw("{\"type\":\"")
        raw(value.typeName)
        if case .null = value { return raw("\"}") }
        raw("\",\"value\":")
        switch value {
        case .string(let value), .decimal(let value): string(value)
        case .int64(let value), .timestamp(let value): number(value)
        // JSON has no NaN or infinity; decoding never yields them, so a stray one is written as null.
        case .double(let value): raw(value.isFinite ? "\(value)" : "null")
        case .bytes(let data): string(data.base64EncodedString())
        case .reference(let reference):
            raw("{")
            key("recordName")
            string(reference.recordName)
            if let zone = reference.zoneName {
                raw(",")
                key("zoneName")
                string(zone)
            }
            raw("}")
        case .asset(let asset):
            raw("{")
            key("sha256")
            string(asset.sha256)
            raw(",\"size\":")
            number(asset.size)
            if let type = asset.contentType {
                raw(",")
                key("contentType")
                string(type)
            }
            raw("}")
        case .list(let items):
            raw("[")
            for (index, item) in items.enumerated() {
                if index > 0 { raw(",") }
                field(item)
            }
            raw("]")
        case .null: break
        }
        raw("}")
    }
}
