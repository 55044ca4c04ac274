import Foundation

/// Reads the JSON of the sync protocol's records straight into their types, for the shapes clients and the server
/// write. Foundation's `JSONDecoder` costs a server about 25 µs a record, most of it in generic Codable machinery
/// (measured with `northwind-sync-bench`); this reader a tenth of that.
///
/// It never decides what is an error: anything it does not expect (a key it does not know, a `null`, a duplicate, a
/// number in exponent form where an integer belongs, invalid UTF-8…) throws `Mismatch`, and the caller decodes the
/// same bytes with `JSONDecoder`, which gives the answer or the error message. `JSONReaderTests` check both agree.
public struct JSONReader: ~Copyable {
    /// The input is not in the shape this reader expects; decode it with `JSONDecoder` instead.
    public struct Mismatch: Error {
        public init() {}
    }

    private let bytes: UnsafeRawBufferPointer
    private var at = 0
    /// Objects and arrays open around the reader. Deeper than `maximumDepth` is a mismatch, so that no input can
    /// exhaust the stack.
    private var depth = 0
    static let maximumDepth = 64

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The value `read` takes from the whole of `data`, or nil when the data is not in the expected shape.
    public static func read<T>(_ data: Data, _ read: (inout JSONReader) throws(Mismatch) -> T) -> T? {
        data.withUnsafeBytes { buffer in
            var reader = JSONReader(buffer)
            do {
                let value = try read(&reader)
                reader.skipSpace()
                return reader.at == buffer.count ? value : nil
            } catch {
                return nil
            }
        }
    }

    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }

    /// Skips space, then takes `byte` if it comes next.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard current == byte else { return false }
        at += 1
        return true
    }

    private mutating func require(_ byte: UInt8) throws(Mismatch) {
        guard take(byte) else { throw Mismatch() }
    }

    /// Calls `member` for each of an object's keys, with the reader at the key's value, which `member` must read.
    /// `member` must refuse a key it has seen (`set(_:_:)` does): `JSONDecoder` has its own rule for duplicates.
    public mutating func object(_ member: (String, inout JSONReader) throws(Mismatch) -> Void) throws(Mismatch) {
        try require(UInt8(ascii: "{"))
        try enter()
        defer { depth -= 1 }
        if take(UInt8(ascii: "}")) { return }
        repeat {
            let key = try string()
            try require(UInt8(ascii: ":"))
            try member(key, &self)
        } while take(UInt8(ascii: ","))
        try require(UInt8(ascii: "}"))
    }

    /// Calls `element` for each of an array's elements, with the reader at the element, which `element` must read.
    public mutating func array(_ element: (inout JSONReader) throws(Mismatch) -> Void) throws(Mismatch) {
        try require(UInt8(ascii: "["))
        try enter()
        defer { depth -= 1 }
        if take(UInt8(ascii: "]")) { return }
        repeat { try element(&self) } while take(UInt8(ascii: ","))
        try require(UInt8(ascii: "]"))
    }

    private mutating func enter() throws(Mismatch) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Mismatch() }
    }

    /// Fills `slot`; a slot already filled means a duplicate key, a mismatch.
    public static func set<T>(_ slot: inout T?, _ value: T) throws(Mismatch) {
        guard slot == nil else { throw Mismatch() }
        slot = value
    }

    /// Where the reader is, to come back to with `reading(at:_:)`.
    public var position: Int { at }

    /// Reads with `read` from `position`, then goes back to where the reader was.
    public mutating func reading<T>(at position: Int, _ read: (inout JSONReader) throws(Mismatch) -> T) throws(Mismatch) -> T {
        let resume = at
        at = position
        defer { at = resume }
        return try read(&self)
    }

    /// Passes over any one value.
    public mutating func skipValue() throws(Mismatch) {
        skipSpace()
        switch current {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "{"): try object { _, reader throws(Mismatch) in try reader.skipValue() }
        case UInt8(ascii: "["): try array { reader throws(Mismatch) in try reader.skipValue() }
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        default: _ = try double()
        }
    }

    public mutating func bool() throws(Mismatch) -> Bool {
        if literal("true") { return true }
        if literal("false") { return false }
        throw Mismatch()
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        for index in 0..<count where bytes[at + index] != word.utf8Start[index] { return false }
        at += count
        return true
    }

    /// An integer written as digits, without fraction or exponent.
    public mutating func int64() throws(Mismatch) -> Int64 {
        skipSpace()
        let negative = current == UInt8(ascii: "-")
        if negative { at += 1 }
        let start = at
        var value: Int64 = 0
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { throw Mismatch() }
            value = sum
            at += 1
        }
        // No digits, a leading zero, "-0", or a fraction or exponent after the digits: leave them to JSONDecoder.
        guard at > start, bytes[start] != UInt8(ascii: "0") || at == start + 1, !(negative && value == 0) else { throw Mismatch() }
        if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { throw Mismatch() }
        return value
    }

    /// Any JSON number, read as the nearest double.
    public mutating func double() throws(Mismatch) -> Double {
        skipSpace()
        let start = at
        if current == UInt8(ascii: "-") { at += 1 }
        if current == UInt8(ascii: "0") {
            at += 1
            guard digits() == 0 else { throw Mismatch() }
        } else {
            guard digits() > 0 else { throw Mismatch() }
        }
        if current == UInt8(ascii: ".") {
            at += 1
            guard digits() > 0 else { throw Mismatch() }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            at += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { throw Mismatch() }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Mismatch() }
        return value
    }

    /// Takes a run of digits and says how many.
    private mutating func digits() -> Int {
        let start = at
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { at += 1 }
        return at - start
    }

    /// A string, its escapes resolved. Unescaped control characters, lone surrogates and invalid UTF-8 are mismatches.
    public mutating func string() throws(Mismatch) -> String {
        try require(UInt8(ascii: "\""))
        let start = at
        var bits: UInt8 = 0
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw Mismatch() }
            bits |= byte
            at += 1
        }
        guard let stop = current else { throw Mismatch() }
        if stop == UInt8(ascii: "\"") {
            at += 1
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at - 1]), as: UTF8.self)
            // ASCII is valid UTF-8; anything else is valid if decoding it repaired nothing.
            guard bits < 0x80 || text.utf8.elementsEqual(bytes[start..<at - 1]) else { throw Mismatch() }
            return text
        }
        var unescaped = Array(bytes[start..<at])
        while true {
            guard let byte = current else { throw Mismatch() }
            at += 1
            switch byte {
            case UInt8(ascii: "\""):
                let text = String(decoding: unescaped, as: UTF8.self)
                guard text.utf8.elementsEqual(unescaped) else { throw Mismatch() }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = current else { throw Mismatch() }
                at += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard take(UInt8(ascii: "\\")), current == UInt8(ascii: "u") else { throw Mismatch() }
                        at += 1
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Mismatch() }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw Mismatch() }
                    unescaped.append(contentsOf: UTF8.encode(scalar)!)
                default: throw Mismatch()
                }
            case 0..<0x20: throw Mismatch()
            default: unescaped.append(byte)
            }
        }
    }

    private mutating func hex4() throws(Mismatch) -> UInt32 {
        guard at + 4 <= bytes.count else { throw Mismatch() }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[at]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Mismatch()
            }
            code = code << 4 | UInt32(digit)
            at += 1
        }
        return code
    }
}

private typealias Mismatch = JSONReader.Mismatch

extension SyncRecord {
    /// A record read from a `JSONReader`; see `decode(_:)`.
    public init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var recordName: String?
        var recordType: String?
        var zoneID: ZoneID?
        var recordChangeTag: String?
        var fields: [String: FieldValue]?
        var created: Stamp?
        var modified: Stamp?
        var deleted: Bool?
        try reader.object { key, reader throws(Mismatch) in
            switch key {
            case "recordName": try JSONReader.set(&recordName, reader.string())
            case "recordType": try JSONReader.set(&recordType, reader.string())
            case "zoneID": try JSONReader.set(&zoneID, ZoneID(reading: &reader))
            case "recordChangeTag": try JSONReader.set(&recordChangeTag, reader.string())
            case "fields":
                var values: [String: FieldValue] = [:]
                try reader.object { name, reader throws(Mismatch) in
                    guard values.updateValue(try FieldValue(reading: &reader), forKey: name) == nil else { throw Mismatch() }
                }
                try JSONReader.set(&fields, values)
            case "created": try JSONReader.set(&created, Stamp(reading: &reader))
            case "modified": try JSONReader.set(&modified, Stamp(reading: &reader))
            case "deleted": try JSONReader.set(&deleted, reader.bool())
            default: throw Mismatch()
            }
        }
        guard let recordName, let zoneID else { throw Mismatch() }
        self.init(
            recordName: recordName,
            recordType: recordType ?? "",
            zoneID: zoneID,
            recordChangeTag: recordChangeTag,
            fields: fields ?? [:],
            created: created,
            modified: modified,
            deleted: deleted ?? false
        )
    }

    /// A record from its JSON: read by `JSONReader` when it can, else by `JSONDecoder`, whose errors it throws.
    public static func decode(_ data: Data) throws -> SyncRecord {
        if let record = JSONReader.read(data, { reader throws(Mismatch) in try SyncRecord(reading: &reader) }) { return record }
        return try JSONDecoder().decode(SyncRecord.self, from: data)
    }
}

extension SyncRecord {
    /// Fields from `fieldsJSON(_:)`'s JSON (or `JSONEncoder`'s): read by `JSONReader` when it can, else by
    /// `JSONDecoder`, whose errors it throws.
    public static func decodeFields(_ data: Data) throws -> [String: FieldValue] {
        let read = JSONReader.read(data) { reader throws(Mismatch) in
            var values: [String: FieldValue] = [:]
            try reader.object { name, reader throws(Mismatch) in
                guard values.updateValue(try FieldValue(reading: &reader), forKey: name) == nil else { throw Mismatch() }
            }
            return values
        }
        if let read { return read }
        return try JSONDecoder().decode([String: FieldValue].self, from: data)
    }
}

extension JSONReader {
    /// A JSON object of strings, or nil when the data is anything else.
    public static func strings(_ data: Data) -> [String: String]? {
        if let read = read(
            data,
            { reader throws(Mismatch) in
                var values: [String: String] = [:]
                try reader.object { name, reader throws(Mismatch) in
                    guard values.updateValue(try reader.string(), forKey: name) == nil else { throw Mismatch() }
                }
                return values
            }
        ) {
            return read
        }
        return try? JSONDecoder().decode([String: String].self, from: data)
    }
}

extension ZoneID {
    public init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var zoneName: String?
        try reader.object { key, reader throws(Mismatch) in
            guard key == "zoneName" else { throw Mismatch() }
            try JSONReader.set(&zoneName, reader.string())
        }
        guard let zoneName else { throw Mismatch() }
        self.init(zoneName)
    }
}

extension Stamp {
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var timestamp: Int64?
        var site: String?
        try reader.object { key, reader throws(Mismatch) in
            switch key {
            case "timestamp": try JSONReader.set(&timestamp, reader.int64())
            case "site": try JSONReader.set(&site, reader.string())
            default: throw Mismatch()
            }
        }
        guard let timestamp, let site else { throw Mismatch() }
        self.init(timestamp: timestamp, site: site)
    }
}

extension FieldValue {
    /// `{"type": …, "value": …}`. `JSONEncoder` may put the value first; it is then read once the type is known.
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var type: String?
        var value: FieldValue?
        var valueAt: Int?
        try reader.object { key, reader throws(Mismatch) in
            switch key {
            case "type": try JSONReader.set(&type, reader.string())
            case "value":
                try JSONReader.set(&valueAt, reader.position)
                if let type {
                    value = try Self.value(of: type, reading: &reader)
                } else {
                    try reader.skipValue()
                }
            default: throw Mismatch()
            }
        }
        if type == "NULL", valueAt == nil {
            self = .null
            return
        }
        guard let type, let valueAt else { throw Mismatch() }
        if let value {
            self = value
        } else {
            self = try reader.reading(at: valueAt) { reader throws(Mismatch) in try Self.value(of: type, reading: &reader) }
        }
    }

    private static func value(of type: String, reading reader: inout JSONReader) throws(JSONReader.Mismatch) -> FieldValue {
        switch type {
        case "STRING": return .string(try reader.string())
        case "INT64": return .int64(try reader.int64())
        case "DOUBLE": return .double(try reader.double())
        case "DECIMAL":
            let text = try reader.string()
            guard isDecimal(text) else { throw Mismatch() }
            return .decimal(text)
        case "TIMESTAMP": return .timestamp(try reader.int64())
        case "BYTES":
            guard let data = Data(base64Encoded: try reader.string()) else { throw Mismatch() }
            return .bytes(data)
        case "REFERENCE":
            var recordName: String?
            var zoneName: String?
            try reader.object { key, reader throws(Mismatch) in
                switch key {
                case "recordName": try JSONReader.set(&recordName, reader.string())
                case "zoneName": try JSONReader.set(&zoneName, reader.string())
                default: throw Mismatch()
                }
            }
            guard let recordName else { throw Mismatch() }
            return .reference(RecordReference(recordName: recordName, zoneName: zoneName))
        case "ASSET":
            var sha256: String?
            var size: Int64?
            var contentType: String?
            try reader.object { key, reader throws(Mismatch) in
                switch key {
                case "sha256": try JSONReader.set(&sha256, reader.string())
                case "size": try JSONReader.set(&size, reader.int64())
                case "contentType": try JSONReader.set(&contentType, reader.string())
                default: throw Mismatch()
                }
            }
            guard let sha256, let size else { throw Mismatch() }
            return .asset(AssetReference(sha256: sha256, size: size, contentType: contentType))
        case "LIST":
            var items: [FieldValue] = []
            try reader.array { reader throws(Mismatch) in items.append(try FieldValue(reading: &reader)) }
            return .list(items)
        default: throw Mismatch()
        }
    }
}
