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
}

/// Writes JSON into a string. Only the shapes of the sync protocol's records; escaping follows RFC 8259.
public struct JSONWriter: Sendable {
    public private(set) var text = ""

    public init() { text.reserveCapacity(512) }

    public mutating func raw(_ fragment: String) { text += fragment }

    public mutating func string(_ value: String) {
        text += "\""
        // Most values need no escaping: append them whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    /// `"name":`
    public mutating func key(_ name: String) {
        string(name)
        text += ":"
    }

    mutating func record(_ record: SyncRecord) {
        text += "{"
        key("recordName")
        string(record.recordName)
        text += ","
        key("recordType")
        string(record.recordType)
        text += ",\"zoneID\":{"
        key("zoneName")
        string(record.zoneID.zoneName)
        text += "}"
        if let tag = record.recordChangeTag {
            text += ","
            key("recordChangeTag")
            string(tag)
        }
        text += ",\"fields\":{"
        for (index, (name, value)) in record.fields.enumerated() {
            if index > 0 { text += "," }
            key(name)
            field(value)
        }
        text += "}"
        for (name, stamp) in [("created", record.created), ("modified", record.modified)] {
            guard let stamp else { continue }
            text += ","
            key(name)
            text += "{\"timestamp\":\(stamp.timestamp),"
            key("site")
            string(stamp.site)
            text += "}"
        }
        text += record.deleted ? ",\"deleted\":true}" : ",\"deleted\":false}"
    }

    mutating func field(_ value: FieldValue) {
        text += "{\"type\":\"\(value.typeName)\",\"value\":"
        switch value {
        case .string(let text), .decimal(let text): string(text)
        case .int64(let number), .timestamp(let number): text += String(number)
        // JSON has no NaN or infinity; decoding never yields them, so a stray one is written as null.
        case .double(let number): text += number.isFinite ? "\(number)" : "null"
        case .bytes(let data): string(data.base64EncodedString())
        case .reference(let reference):
            text += "{"
            key("recordName")
            string(reference.recordName)
            if let zone = reference.zoneName {
                text += ","
                key("zoneName")
                string(zone)
            }
            text += "}"
        case .asset(let asset):
            text += "{"
            key("sha256")
            string(asset.sha256)
            text += ",\"size\":\(asset.size)"
            if let type = asset.contentType {
                text += ","
                key("contentType")
                string(type)
            }
            text += "}"
        case .list(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                field(item)
            }
            text += "]"
        }
        text += "}"
    }
}
