import Foundation
import GRDB
import GRDBSQLite

/// SQL functions the classic reports need to compute exactly as SQL Server does.
public enum ReportFunctions {
    /// `f32(x)`: `x` rounded to the nearest IEEE-754 binary32 value. SQL Server's `real` is binary32, and the
    /// originals round every real-typed step of an amount to it; Microsoft's published figures depend on that.
    static let f32 = DatabaseFunction("f32", argumentCount: 1, pure: true) { values in
        guard let x = Double.fromDatabaseValue(values[0]) else { return nil }
        return Double(Float(x))
    }

    /// `sqlserver_key(text)`: the sort key of SQL Server's default collation (case- and accent-insensitive), close
    /// enough for ordering names: the text without accents, case, apostrophes and hyphens. The reports sort with
    /// `ORDER BY sqlserver_key(x), x`, so ties break on the exact text. Plain BINARY would put "Pâté chinois" after
    /// "Perth Pasties". A key per row costs far less than a collation that folds both sides of every comparison.
    /// Added through the C API, not as a `DatabaseFunction`: a big report's sort calls it tens of thousands of times,
    /// and an ASCII key is made from the argument's bytes with no `String` or `DatabaseValue` in between.
    public static func addSQLServerKey(to connection: OpaquePointer?) {
        sqlite3_create_function_v2(
            connection,
            "sqlserver_key",
            1,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC,
            nil,
            { context, _, arguments in
                guard let value = arguments?[0] else { return sqlite3_result_null(context) }
                ReportFunctions.sqlServerKey(of: value, into: context)
            },
            nil,
            nil,
            nil
        )
    }

    /// The key of text (or of a blob that is UTF-8, as GRDB reads one as text); NULL for anything else.
    private static func sqlServerKey(of value: OpaquePointer, into context: OpaquePointer?) {
        let type = sqlite3_value_type(value)
        guard type == SQLITE_TEXT || type == SQLITE_BLOB, let text = sqlite3_value_text(value) else {
            return sqlite3_result_null(context)
        }
        let bytes = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            guard let string = String(validating: bytes, as: UTF8.self) else { return sqlite3_result_null(context) }
            return sqlite3_result_text(context, fold(string), -1, transient)
        }
        // `fold`'s ASCII rule, on the bytes.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { key in
            var count = 0
            for byte in bytes where byte != UInt8(ascii: "'") && byte != UInt8(ascii: "-") {
                key[count] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
                count += 1
            }
            key.baseAddress!.withMemoryRebound(to: CChar.self, capacity: count) { start in
                sqlite3_result_text(context, start, CInt(count), transient)
            }
        }
    }

    /// `sqlserver_line_cents(unitPriceCents, quantity, discount)`: a line's ExtendedPrice in cents, as the views of
    /// the original compute `CONVERT(money, UnitPrice*Quantity*(1-Discount)/100)*100`: every step that SQL Server
    /// types `real` rounded to binary32, then money rounding half away from zero from the exact value. The store keeps
    /// it in `order_lines.extendedPriceCents` (triggers hold every write to this), so reports sum integers instead of
    /// calling into Swift per line. NULL when the amount does not fit, which the triggers refuse.
    static let lineCents = DatabaseFunction("sqlserver_line_cents", argumentCount: 3, pure: true) { values in
        guard let price = Int64.fromDatabaseValue(values[0]), let quantity = Int64.fromDatabaseValue(values[1]),
            let discount = Double.fromDatabaseValue(values[2])
        else { return nil }
        return extendedPriceCents(unitPriceCents: price, quantity: quantity, discount: discount)
    }

    // guide: begin extended-price
    /// nil when the amount is out of any range money can have (a negative amount, a discount outside 0...1, or more
    /// cents than `Int64` holds), rather than trapping: a server must never die on a value it is given.
    public static func extendedPriceCents(unitPriceCents: Int64, quantity: Int64, discount: Double) -> Int64? {
        func real(_ x: Double) -> Double { Double(Float(x)) }
        let (cents, overflow) = unitPriceCents.multipliedReportingOverflow(by: quantity)
        guard !overflow, cents >= 0, (0...1).contains(discount) else { return nil }
        let amount = real(Double(cents) / 100)
        let y = real(real(amount * real(1 - real(discount))) / 100)
        // y * 10000 is exact in a double, and truncating y * 10000 + 0.5 rounds half away from zero for y >= 0.
        return Int64(exactly: (y * 10000 + 0.5).rounded(.towardZero))
    }
    // guide: end extended-price

    public static func fold(_ text: String) -> String {
        // Most names are ASCII, and Unicode normalization costs microseconds: the key of a big report's sort.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count)
            for byte in text.utf8 where byte != UInt8(ascii: "'") && byte != UInt8(ascii: "-") {
                bytes.append((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        // Latin letters with accents ("Pâté", "Côte") fold one scalar at a time through a table: NFD only splits a
        // precomposed letter from its marks, and the marks go, so folding each scalar alone gives the same key.
        var folded = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard scalar.value < latinFolds.count else { return foldUnicode(text) }
            folded.append(contentsOf: latinFolds[Int(scalar.value)].unicodeScalars)
        }
        return String(folded)
    }

    /// The key of any text, through Foundation's canonical decomposition.
    static func foldUnicode(_ text: String) -> String {
        let stripped = text.decomposedStringWithCanonicalMapping.unicodeScalars
            .filter { !(0x300...0x36F).contains($0.value) && $0 != "'" && $0 != "-" }
        return String(String.UnicodeScalarView(stripped)).lowercased()
    }

    /// `foldUnicode` of each scalar below U+0250 (Latin-1 and the Latin Extended blocks), computed once.
    static let latinFolds: [String] = (0..<0x250).map { value in
        Unicode.Scalar(UInt32(value)).map { foldUnicode(String(Character($0))) } ?? ""
    }

    /// `line_total_cents(unitPriceCents, quantity, discount)`: a line's exact total (`OrderLine.total`), what an
    /// invoice and a quote charge; the float32 `sqlserver_line_cents` is for the classic reports only.
    static let lineTotalCents = DatabaseFunction("line_total_cents", argumentCount: 3, pure: true) { values in
        guard let price = Int.fromDatabaseValue(values[0]), let quantity = Int.fromDatabaseValue(values[1]),
            let discount = Double.fromDatabaseValue(values[2])
        else { return nil }
        return OrderLine(orderID: 0, productID: 0, unitPrice: Money(cents: price), quantity: quantity, discount: discount).total.cents
    }

    /// Adds them to a connection: the store opens every one with them; a tool that writes the file needs them too.
    public static func register(_ db: Database) {
        db.add(function: f32)
        addSQLServerKey(to: db.sqliteConnection)
        db.add(function: lineCents)
        db.add(function: lineTotalCents)
    }
}
