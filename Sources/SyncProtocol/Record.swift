import Foundation

/// A zone's name within a database: `catalog`, `customers`, `site-OXF`.
public struct ZoneID: Codable, Hashable, Sendable, Comparable {
    public var zoneName: String
    public init(_ zoneName: String) { self.zoneName = zoneName }
    public static func < (a: ZoneID, b: ZoneID) -> Bool { a.zoneName < b.zoneName }
}

/// A record as it travels: a typed field map the server stores without knowing what it describes.
public struct SyncRecord: Codable, Hashable, Sendable {
    public var recordName: String
    public var recordType: String
    public var zoneID: ZoneID
    /// The server's version of the record; sent back with `update` and `delete` so the server can refuse a stale edit.
    public var recordChangeTag: String?
    public var fields: [String: FieldValue]
    /// Set by the server.
    public var created: Stamp?
    public var modified: Stamp?
    public var deleted: Bool

    public init(
        recordName: String,
        recordType: String,
        zoneID: ZoneID,
        recordChangeTag: String? = nil,
        fields: [String: FieldValue] = [:],
        created: Stamp? = nil,
        modified: Stamp? = nil,
        deleted: Bool = false
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.zoneID = zoneID
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.created = created
        self.modified = modified
        self.deleted = deleted
    }

    enum CodingKeys: String, CodingKey {
        case recordName, recordType, zoneID, recordChangeTag, fields, created, modified, deleted
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        recordName = try c.decode(String.self, forKey: .recordName)
        recordType = try c.decodeIfPresent(String.self, forKey: .recordType) ?? ""
        zoneID = try c.decode(ZoneID.self, forKey: .zoneID)
        recordChangeTag = try c.decodeIfPresent(String.self, forKey: .recordChangeTag)
        fields = try c.decodeIfPresent([String: FieldValue].self, forKey: .fields) ?? [:]
        created = try c.decodeIfPresent(Stamp.self, forKey: .created)
        modified = try c.decodeIfPresent(Stamp.self, forKey: .modified)
        deleted = try c.decodeIfPresent(Bool.self, forKey: .deleted) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(recordName, forKey: .recordName)
        try c.encode(recordType, forKey: .recordType)
        try c.encode(zoneID, forKey: .zoneID)
        try c.encodeIfPresent(recordChangeTag, forKey: .recordChangeTag)
        try c.encode(fields, forKey: .fields)
        try c.encodeIfPresent(created, forKey: .created)
        try c.encodeIfPresent(modified, forKey: .modified)
        try c.encode(deleted, forKey: .deleted)
    }
}

/// When and by whom a record was written: milliseconds since 1970 and the installation's site code.
public struct Stamp: Codable, Hashable, Sendable {
    public var timestamp: Int64
    public var site: String
    public init(timestamp: Int64, site: String) {
        self.timestamp = timestamp
        self.site = site
    }
}

/// Another record, by name; in the same zone unless `zoneName` says otherwise.
public struct RecordReference: Codable, Hashable, Sendable {
    public var recordName: String
    public var zoneName: String?
    public init(recordName: String, zoneName: String? = nil) {
        self.recordName = recordName
        self.zoneName = zoneName
    }
}

/// Bytes stored apart from records, named by their SHA-256 (lowercase hex).
public struct AssetReference: Codable, Hashable, Sendable {
    public var sha256: String
    public var size: Int64
    public var contentType: String?
    public init(sha256: String, size: Int64, contentType: String? = nil) {
        self.sha256 = sha256
        self.size = size
        self.contentType = contentType
    }
}

/// One field: `{"type": "STRING", "value": "Chai"}`. Decimals travel as strings so no digit is lost; timestamps
/// are milliseconds since 1970; bytes are base64. `{"type": "NULL"}` in an update removes the field (a cleared
/// column); the server never stores it.
public enum FieldValue: Hashable, Sendable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case decimal(String)
    case timestamp(Int64)
    case bytes(Data)
    case reference(RecordReference)
    case asset(AssetReference)
    case list([FieldValue])
    case null

    public var typeName: String {
        switch self {
        case .string: "STRING"
        case .int64: "INT64"
        case .double: "DOUBLE"
        case .decimal: "DECIMAL"
        case .timestamp: "TIMESTAMP"
        case .bytes: "BYTES"
        case .reference: "REFERENCE"
        case .asset: "ASSET"
        case .list: "LIST"
        case .null: "NULL"
        }
    }

    public static let typeNames = ["STRING", "INT64", "DOUBLE", "DECIMAL", "TIMESTAMP", "BYTES", "REFERENCE", "ASSET", "LIST", "NULL"]

    /// Every reference in the value, lists included.
    public var references: [RecordReference] {
        switch self {
        case .reference(let reference): [reference]
        case .list(let items): items.flatMap(\.references)
        default: []
        }
    }

    /// Every asset in the value, lists included.
    public var assets: [AssetReference] {
        switch self {
        case .asset(let asset): [asset]
        case .list(let items): items.flatMap(\.assets)
        default: []
        }
    }
}

extension FieldValue: Codable {
    enum CodingKeys: String, CodingKey { case type, value }

    /// `-?[0-9]{1,30}(\.[0-9]{1,30})?`, checked by hand: a regex literal is compiled on every use, and this runs for
    /// every decimal of every record a server decodes.
    static func isDecimal(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let whole = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard (1...30).contains(whole.count) else { return false }
        let rest = bytes.dropFirst(whole.count)
        if rest.isEmpty { return true }
        guard rest.first == UInt8(ascii: ".") else { return false }
        let fraction = rest.dropFirst()
        return (1...30).contains(fraction.count) && fraction.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "STRING": self = .string(try c.decode(String.self, forKey: .value))
        case "INT64": self = .int64(try c.decode(Int64.self, forKey: .value))
        case "DOUBLE": self = .double(try c.decode(Double.self, forKey: .value))
        case "DECIMAL":
            let text = try c.decode(String.self, forKey: .value)
            guard Self.isDecimal(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value,
                    in: c,
                    debugDescription: "a DECIMAL is a string of digits with an optional point, such as \"18.00\""
                )
            }
            self = .decimal(text)
        case "TIMESTAMP": self = .timestamp(try c.decode(Int64.self, forKey: .value))
        case "BYTES":
            let text = try c.decode(String.self, forKey: .value)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "BYTES are base64")
            }
            self = .bytes(data)
        case "REFERENCE": self = .reference(try c.decode(RecordReference.self, forKey: .value))
        case "ASSET": self = .asset(try c.decode(AssetReference.self, forKey: .value))
        case "LIST": self = .list(try c.decode([FieldValue].self, forKey: .value))
        case "NULL":
            if c.contains(.value), try !c.decodeNil(forKey: .value) {
                throw DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "a NULL field has no value")
            }
            self = .null
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type,
                in: c,
                debugDescription: "unknown field type \(type); known: \(FieldValue.typeNames.joined(separator: ", "))"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(typeName, forKey: .type)
        switch self {
        case .string(let v), .decimal(let v): try c.encode(v, forKey: .value)
        case .int64(let v), .timestamp(let v): try c.encode(v, forKey: .value)
        case .double(let v): try c.encode(v, forKey: .value)
        case .bytes(let v): try c.encode(v.base64EncodedString(), forKey: .value)
        case .reference(let v): try c.encode(v, forKey: .value)
        case .asset(let v): try c.encode(v, forKey: .value)
        case .list(let v): try c.encode(v, forKey: .value)
        case .null: break
        }
    }
}
