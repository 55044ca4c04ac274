import Foundation

/// One lexical token of a classic script; it points into the script's bytes instead of copying them, because
/// most tokens (procedure bodies, view definitions) are skipped and never decoded.
struct ClassicToken {
    enum Kind: Equatable {
        /// A bare identifier or keyword.
        case word
        /// A delimited identifier: "name", [name] or `name`; `closing` is the delimiter doubled to escape it.
        case quotedName(closing: UInt8)
        /// A '...' literal (also N'...'); `escapes` marks PostgreSQL E'...' backslash escapes.
        case string(escapes: Bool)
        /// 0x... (`quoted` false) or X'...': the range covers the digits after the prefix, checked only when used.
        case hex(quoted: Bool)
        case number
        /// A PostgreSQL $tag$...$tag$ body; only ever skipped.
        case dollarString
        case punctuation
        case end
    }

    var kind: Kind
    var start: Int
    var end: Int
    var line: Int
    /// Whether nothing but whitespace or comments precedes the token on its line; T-SQL's `GO` counts only there.
    var firstOnLine: Bool
    /// Whether the literal or name contains a doubled delimiter (or a backslash escape) and so needs unescaping.
    var needsUnescaping: Bool
}

/// Splits a script into tokens over its UTF-8 bytes; comments and whitespace vanish, and only unterminated
/// literals or comments and malformed hex are errors, so that unfamiliar statements pass through harmlessly.
struct ClassicLexer {
    let bytes: [UInt8]
    /// T-SQL and PostgreSQL nest block comments; SQLite ends one at the first `*/`.
    let nestedComments: Bool
    /// Only PostgreSQL has $tag$ quoting and E'' strings; elsewhere `$` and `E` are ordinary.
    let postgres: Bool
    private(set) var position = 0
    private(set) var line = 1
    private var tokenOnLine = false

    init(bytes: [UInt8], dialect: ClassicDialect) {
        self.bytes = bytes
        self.nestedComments = dialect != .sqlite
        self.postgres = dialect == .postgres
    }

    mutating func next() throws(ClassicScriptError) -> ClassicToken {
        try skipTrivia()
        let count = bytes.count
        guard position < count else {
            return ClassicToken(
                kind: .end,
                start: count,
                end: count,
                line: line,
                firstOnLine: !tokenOnLine,
                needsUnescaping: false
            )
        }
        let first = !tokenOnLine
        tokenOnLine = true
        let startLine = line
        let start = position
        let byte = bytes[start]

        func token(_ kind: ClassicToken.Kind, _ s: Int, _ e: Int, _ unescape: Bool = false) -> ClassicToken {
            ClassicToken(kind: kind, start: s, end: e, line: startLine, firstOnLine: first, needsUnescaping: unescape)
        }

        switch byte {
        case UInt8(ascii: "'"):
            let (end, doubled) = try scanQuoted(
                from: start + 1,
                closing: UInt8(ascii: "'"),
                backslashes: false,
                what: "string literal",
                startLine: startLine
            )
            return token(.string(escapes: false), start + 1, end, doubled)
        // PostgreSQL's brackets are array subscripts, not quotes.
        case UInt8(ascii: "\""), UInt8(ascii: "`"),
            UInt8(ascii: "[") where !postgres:
            let closing = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
            let (end, doubled) = try scanQuoted(
                from: start + 1,
                closing: closing,
                backslashes: false,
                what: "quoted identifier",
                startLine: startLine
            )
            return token(.quotedName(closing: closing), start + 1, end, doubled)
        case UInt8(ascii: "0") where start + 1 < count && (bytes[start + 1] | 0x20) == UInt8(ascii: "x"):
            // Validation waits until the literal is used as a value: procedure text such as `sysstat & 0xf`
            // is not ours to reject.
            var end = start + 2
            while end < count, Self.isWordByte(bytes[end]) { end += 1 }
            position = end
            return token(.hex(quoted: false), start + 2, end)
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            position = scanNumber(from: start)
            return token(.number, start, position)
        case UInt8(ascii: ".") where start + 1 < count && Self.isDigit(bytes[start + 1]):
            position = scanNumber(from: start)
            return token(.number, start, position)
        case UInt8(ascii: "$") where postgres:
            if let (bodyStart, bodyEnd, after) = try scanDollarString(from: start, startLine: startLine) {
                position = after
                return token(.dollarString, bodyStart, bodyEnd)
            }
            position = start + 1
            return token(.punctuation, start, start + 1)
        default:
            guard Self.isWordStart(byte) else {
                position = start + 1
                return token(.punctuation, start, start + 1)
            }
            var end = start + 1
            while end < count, Self.isWordByte(bytes[end]) { end += 1 }
            // A one-letter prefix glued to a quote makes a prefixed literal: N'', X'', E''.
            if end == start + 1, end < count, bytes[end] == UInt8(ascii: "'") {
                switch byte | 0x20 {
                case UInt8(ascii: "n"):
                    let (close, doubled) = try scanQuoted(
                        from: end + 1,
                        closing: UInt8(ascii: "'"),
                        backslashes: false,
                        what: "string literal",
                        startLine: startLine
                    )
                    return token(.string(escapes: false), end + 1, close, doubled)
                case UInt8(ascii: "e") where postgres:
                    let (close, _) = try scanQuoted(
                        from: end + 1,
                        closing: UInt8(ascii: "'"),
                        backslashes: true,
                        what: "string literal",
                        startLine: startLine
                    )
                    return token(.string(escapes: true), end + 1, close, true)
                case UInt8(ascii: "x"):
                    let (close, _) = try scanQuoted(
                        from: end + 1,
                        closing: UInt8(ascii: "'"),
                        backslashes: false,
                        what: "blob literal",
                        startLine: startLine
                    )
                    return token(.hex(quoted: true), end + 1, close)
                default:
                    break
                }
            }
            position = end
            return token(.word, start, end)
        }
    }

    /// Skips whitespace and comments, counting lines.
    private mutating func skipTrivia() throws(ClassicScriptError) {
        let count = bytes.count
        while position < count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                tokenOnLine = false
                position += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), 0x0B, 0x0C:
                position += 1
            case UInt8(ascii: "-") where position + 1 < count && bytes[position + 1] == UInt8(ascii: "-"):
                position += 2
                while position < count, bytes[position] != UInt8(ascii: "\n") { position += 1 }
            case UInt8(ascii: "/") where position + 1 < count && bytes[position + 1] == UInt8(ascii: "*"):
                let startLine = line
                var depth = 1
                position += 2
                while depth > 0 {
                    guard position < count else {
                        throw ClassicScriptError(line: startLine, message: "unterminated block comment starting here")
                    }
                    let c = bytes[position]
                    if c == UInt8(ascii: "*"), position + 1 < count, bytes[position + 1] == UInt8(ascii: "/") {
                        depth -= 1
                        position += 2
                    } else if nestedComments, c == UInt8(ascii: "/"), position + 1 < count,
                        bytes[position + 1] == UInt8(ascii: "*")
                    {
                        depth += 1
                        position += 2
                    } else {
                        if c == UInt8(ascii: "\n") {
                            line += 1
                            tokenOnLine = false
                        }
                        position += 1
                    }
                }
            default:
                return
            }
        }
    }

    /// Scans to the closing delimiter (a doubled one is content) and returns the content end and whether any
    /// doubled delimiter or backslash escape was seen.
    private mutating func scanQuoted(
        from: Int,
        closing: UInt8,
        backslashes: Bool,
        what: String,
        startLine: Int
    ) throws(ClassicScriptError) -> (end: Int, escaped: Bool) {
        let count = bytes.count
        var index = from
        var escaped = false
        var lines = 0
        while index < count {
            let c = bytes[index]
            if c == closing {
                if index + 1 < count, bytes[index + 1] == closing {
                    escaped = true
                    index += 2
                    continue
                }
                line += lines
                position = index + 1
                return (index, escaped)
            }
            if c == UInt8(ascii: "\n") {
                lines += 1
            } else if backslashes, c == UInt8(ascii: "\\"), index + 1 < count {
                escaped = true
                if bytes[index + 1] == UInt8(ascii: "\n") { lines += 1 }
                index += 2
                continue
            }
            index += 1
        }
        throw ClassicScriptError(line: startLine, message: "unterminated \(what) starting here")
    }

    private func scanNumber(from start: Int) -> Int {
        let count = bytes.count
        var index = start
        while index < count, Self.isDigit(bytes[index]) { index += 1 }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, Self.isDigit(bytes[index]) { index += 1 }
        }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            var probe = index + 1
            if probe < count, bytes[probe] == UInt8(ascii: "+") || bytes[probe] == UInt8(ascii: "-") { probe += 1 }
            if probe < count, Self.isDigit(bytes[probe]) {
                index = probe
                while index < count, Self.isDigit(bytes[index]) { index += 1 }
            }
        }
        return index
    }

    /// Recognises `$tag$ ... $tag$`; returns nil when the `$` starts no such quote (e.g. a `$1` parameter).
    private mutating func scanDollarString(
        from start: Int,
        startLine: Int
    ) throws(ClassicScriptError) -> (Int, Int, Int)? {
        let count = bytes.count
        var index = start + 1
        if index < count, Self.isDigit(bytes[index]) { return nil }
        while index < count, Self.isWordByte(bytes[index]), bytes[index] != UInt8(ascii: "$") { index += 1 }
        guard index < count, bytes[index] == UInt8(ascii: "$") else { return nil }
        let tag = bytes[start...index]
        let bodyStart = index + 1
        var probe = bodyStart
        var lines = 0
        while probe < count {
            if bytes[probe] == UInt8(ascii: "$"), probe + tag.count <= count,
                bytes[probe..<(probe + tag.count)].elementsEqual(tag)
            {
                line += lines
                return (bodyStart, probe, probe + tag.count)
            }
            if bytes[probe] == UInt8(ascii: "\n") { lines += 1 }
            probe += 1
        }
        throw ClassicScriptError(line: startLine, message: "unterminated dollar-quoted string starting here")
    }

    // MARK: Byte classes and hex

    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    static func isWordStart(_ b: UInt8) -> Bool {
        let lower = b | 0x20
        return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || b == UInt8(ascii: "_")
            || b == UInt8(ascii: "@") || b == UInt8(ascii: "#") || b >= 0x80
    }

    static func isWordByte(_ b: UInt8) -> Bool { isWordStart(b) || isDigit(b) || b == UInt8(ascii: "$") }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func checkHex(_ bytes: [UInt8], _ start: Int, _ end: Int, line: Int) throws(ClassicScriptError) {
        var newlines = 0
        for index in start..<end where hexValue(bytes[index]) == nil {
            // Report the line of the offending digit, which may lie below the literal's start.
            for i in start..<index where bytes[i] == UInt8(ascii: "\n") { newlines += 1 }
            throw ClassicScriptError(
                line: line + newlines,
                message: "invalid character \(describe(bytes[index])) in hex literal"
            )
        }
        if (end - start) % 2 != 0 {
            throw ClassicScriptError(line: line, message: "hex literal has an odd number of digits (\(end - start))")
        }
    }

    /// Decodes hex digits already validated by `checkHex`.
    static func decodeHex(_ bytes: [UInt8], _ start: Int, _ end: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity((end - start) / 2)
        var index = start
        while index + 1 < end {
            let high = hexValue(bytes[index]) ?? 0
            let low = hexValue(bytes[index + 1]) ?? 0
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    static func describe(_ b: UInt8) -> String {
        if b >= 0x20 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x" + String(b, radix: 16, uppercase: true)
    }
}
