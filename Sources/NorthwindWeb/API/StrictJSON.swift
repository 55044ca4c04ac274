import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Request bodies as the API document describes them, strictly. Foundation's JSON readers accept a trailing comma
/// and let the first (JSONDecoder) or last (JSONSerialization) of two equal keys win, so a body is first checked
/// against RFC 8259 here; the typed inputs then refuse fields the document does not name.
enum StrictJSON {
    struct SyntaxError: Error { var message: String }

    /// Nesting deeper than any body of ours, so a hostile body cannot exhaust the stack.
    static let maxDepth = 32

    /// Throws a 400 naming the first place where `bytes` is not one strict JSON value.
    static func validate(_ bytes: some Collection<UInt8>) throws(WebError) {
        var reader = Reader(bytes: Array(bytes))
        do throws(SyntaxError) {
            reader.skipSpace()
            try reader.value(depth: 0)
            reader.skipSpace()
            guard reader.index == reader.bytes.count else { throw reader.error("unexpected text after the JSON value") }
        } catch {
            throw .badRequest("The body is not valid JSON: \(error.message).")
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        func error(_ message: String) -> SyntaxError { SyntaxError(message: "\(message) at byte \(index)") }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ literal: String) throws(SyntaxError) {
            for byte in literal.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw error("expected '\(literal)'") }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) {
            guard depth < StrictJSON.maxDepth else { throw error("nested too deeply") }
            guard index < bytes.count else { throw error("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"): try expect("true")
            case UInt8(ascii: "f"): try expect("false")
            case UInt8(ascii: "n"): try expect("null")
            default: try number()
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) {
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            var keys = Set<String>()
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                let keyStart = index
                let raw = try string()
                // Escapes can spell one key two ways ("a" and "\u0061"), so compare keys as decoded.
                let key =
                    raw.contains(UInt8(ascii: "\\"))
                    ? (try? JSONDecoder().decode(String.self, from: Data(bytes[keyStart..<index]))) ?? ""
                    : String(decoding: raw, as: UTF8.self)
                guard keys.insert(key).inserted else {
                    index = keyStart
                    throw error("the key \"\(key)\" appears twice")
                }
                skipSpace()
                try expect(":")
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return
                }
                try expect(",")
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) {
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return
                }
                try expect(",")
            }
        }

        /// The string's raw bytes between the quotes, escapes as written.
        mutating func string() throws(SyntaxError) -> [UInt8] {
            index += 1
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return Array(bytes[start..<index - 1])
                }
                guard byte >= 0x20 else { throw error("a control character inside a string") }
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.count else { break }
                    switch bytes[index] {
                    case UInt8(ascii: "u"):
                        let hex = bytes[(index + 1)...].prefix(4)
                        guard hex.count == 4, hex.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
                        else { throw error("a bad \\u escape") }
                        // The store's text ends at a NUL: a value holding one would not be kept as sent.
                        guard !hex.allSatisfy({ $0 == UInt8(ascii: "0") }) else { throw error("a NUL character (\\u0000), which text may not hold,") }
                        index += 4
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    default: throw error("a bad escape")
                    }
                }
                index += 1
            }
            throw error("an unterminated string")
        }

        mutating func number() throws(SyntaxError) {
            func digits() -> Int {
                let start = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                return index - start
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let start = index
            let whole = digits()
            guard whole > 0 else { throw error("expected a value") }
            guard whole == 1 || bytes[start] != UInt8(ascii: "0") else { throw error("a number with a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error("a number without digits after the point") }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw error("a number without digits in its exponent") }
            }
        }
    }
}

/// A key as the body spells it, whatever the type's own keys are: to find the ones it does not know.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// "lines[0].quantity": where a field sits in the body, as a 422 names it.
func fieldName(_ path: [any CodingKey]) -> String {
    path.reduce(into: "") { name, key in
        if let index = key.intValue { name += "[\(index)]" } else { name += (name.isEmpty ? "" : ".") + key.stringValue }
    }
}

extension Decoder {
    /// Refuses a field the API document does not name, with a 422 that names it.
    func rejectUnknownKeys<Key: CodingKey & CaseIterable>(_ keys: Key.Type, of entity: String) throws {
        let known = Set(Key.allCases.map(\.stringValue))
        let sent = try container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue)
        let unknown = sent.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw NorthwindError.invalid(
                unknown.map {
                    .init(
                        fieldName(codingPath + [AnyCodingKey(stringValue: $0)]),
                        "is not a field of \(entity)"
                    )
                }
            )
        }
    }
}

extension KeyedDecodingContainer {
    /// A field that may be left out, but not sent as null (the document does not allow it).
    func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) {
            throw NorthwindError.invalid(fieldName(codingPath + [key]), "must not be null; leave it out to keep its value")
        }
        return try decode(T.self, forKey: key)
    }

    /// A field that may be left out (keeps its value) or sent as null (clears it).
    func nullable<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T?? {
        guard contains(key) else { return nil }
        return .some(try decodeIfPresent(T.self, forKey: key))
    }

    /// A whole number within `range`; a number outside it, even beyond what `Int` holds, gets a 422 that names the
    /// field and the limit rather than a decoding error.
    func wholeNumber(_ key: Key, in range: ClosedRange<Int>) throws -> Int? {
        guard let number = try optional(Double.self, key) else { return nil }
        guard let value = try? decode(Int.self, forKey: key), range.contains(value) else {
            throw NorthwindError.invalid([
                Limits.outOfRange(
                    range,
                    fieldName(codingPath + [key]),
                    given: number.rounded() == number ? nil : "\(number)"
                )
            ])
        }
        return value
    }
}
