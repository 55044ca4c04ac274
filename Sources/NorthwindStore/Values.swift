import Foundation
import GRDB

/// An exact amount of money in cents.
///
/// Prices are stored as integer cents so that sums never pick up binary floating-point error.
///     Money(cents: 1850).description // "18.50"
///
/// Input is held to `Limits.money`, but a store written by hand or by an older version may hold any integer, so
/// arithmetic on amounts saturates instead of trapping: a server must never die on what it reads.
public struct Money: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var cents: Int

    public init(cents: Int) { self.cents = cents }

    /// Rounds a decimal amount to the nearest cent, halves away from zero (as SQL Server's money conversion does);
    /// nil when the amount does not fit in cents at all.
    public init?(_ amount: Decimal) {
        var value = amount * 100
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        // Decimal's own conversions clamp or wrap out of range; its description is exact, so parse that.
        guard rounded.isFinite, let cents = Int(rounded.description) else { return nil }
        self.cents = cents
    }

    /// Parses "18", "18.5", "18.50", ".5" or "-3.00"; nil for anything else, including more than two decimals that aren't
    /// zero and amounts too large to hold in cents. Plain digits only: no exponent, grouping or spaces inside.
    public init?(parsing text: String) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        let negative = rest.first == "-"
        if negative { rest = rest.dropFirst() }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        let isDigits = { (part: Substring) in part.allSatisfy { $0.isASCII && $0.isNumber } }
        guard !(whole.isEmpty && fraction.isEmpty), isDigits(whole), isDigits(fraction), parts.count == 1 || !fraction.isEmpty,
            fraction.dropFirst(2).allSatisfy({ $0 == "0" })
        else { return nil }
        let cents = String(fraction.prefix(2)).padding(toLength: 2, withPad: "0", startingAt: 0)
        guard let value = Int((negative ? "-" : "") + whole + cents) else { return nil }
        self.cents = value
    }

    public static let zero = Money(cents: 0)
    public var decimal: Decimal { Decimal(cents) / 100 }
    public var description: String {
        let sign = cents < 0 ? "-" : ""
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.cents < rhs.cents }
    /// Saturates at the ends of `Int` (see the type's note).
    public static func + (lhs: Money, rhs: Money) -> Money { Money(cents: lhs.cents.saturatingAdd(rhs.cents)) }

    public init(from decoder: any Decoder) throws {
        cents = try decoder.singleValueContainer().decode(Int.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(cents)
    }
}

extension Int {
    /// `self + other`, held at `Int.min` or `Int.max` instead of trapping.
    public func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self * other`, held at `Int.min` or `Int.max` instead of trapping.
    public func saturatingMultiply(_ other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}

extension Money: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { cents.databaseValue }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Money? {
        Int.fromDatabaseValue(dbValue).map(Money.init(cents:))
    }
}

/// A calendar day without time zone, stored as "yyyy-MM-dd" so that SQL can compare and group it as text.
public struct LocalDate: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init?(year: Int, month: Int, day: Int) {
        // Plain arithmetic: every decoded order date passes here, and Calendar costs microseconds per call.
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, of: year)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Parses "1996-07-04"; a time part after the date ("1996-07-04 00:00:00") is ignored.
    public init?(_ text: String) {
        let datePart = text.prefix(10).split(separator: "-", omittingEmptySubsequences: false)
        guard datePart.count == 3, datePart[0].count == 4, datePart[1].count == 2, datePart[2].count == 2,
            let y = Int(datePart[0]), let m = Int(datePart[1]), let d = Int(datePart[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public init(_ date: Date) {
        let c = Self.calendar.dateComponents([.year, .month, .day], from: date)
        (year, month, day) = (c.year ?? 1970, c.month ?? 1, c.day ?? 1)
    }

    public static var today: LocalDate { LocalDate(Date()) }

    public func adding(days: Int) -> LocalDate {
        LocalDate(Self.calendar.date(byAdding: .day, value: days, to: date) ?? date)
    }

    /// Midnight UTC of this day.
    public var date: Date {
        Self.calendar.date(from: DateComponents(year: year, month: month, day: day)) ?? Date(timeIntervalSince1970: 0)
    }

    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar
    }()
}

extension LocalDate: TextValue {
    public static let textFormat = "is not a yyyy-MM-dd date"
}

/// Binary content with its MIME type, e.g. a category picture.
public struct BinaryContent: Hashable, Sendable {
    public var bytes: Data
    public var contentType: String
    public init(bytes: Data, contentType: String) {
        self.bytes = bytes
        self.contentType = contentType
    }
}

/// A globally unique id for a synced row: a lowercase UUID string.
public func newRecordID() -> String { UUID().uuidString.lowercased() }

/// A moment, in UTC, to the millisecond: the one clock of stock movements, the change log, accounts, the importer
/// and sync.
///
/// Its text, "2026-11-23T09:41:07.123Z", is what the store holds and what the API sends. SQL defaults write the
/// same text (`Timestamp.sqlNow`), so values from Swift and from SQL compare and sort as text in time order.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let milliseconds: Int64

    /// The SQL expression for now, in this format, for column defaults and statements.
    public static let sqlNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// The moment `date` falls in, truncated to the millisecond.
    public init(_ date: Date) {
        milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    public static var now: Timestamp { Timestamp(Date()) }

    /// `time` ("08:00") on a day, in UTC.
    public init(_ day: LocalDate, hour: Int = 0, minute: Int = 0) {
        let days = Self.days(fromCivil: day.year, day.month, day.day)
        milliseconds = ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000
    }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public func adding(seconds: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds + seconds * 1000) }

    /// Parses the stored form, "YYYY-MM-DDTHH:MM:SS.sssZ"; the fraction may be absent or shorter, as text written
    /// before this type (sessions' expiry) has it.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= b.count else { return nil }
            var value: Int64 = 0
            for byte in b[start..<(start + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b.last == 90,
            let day = LocalDate(String(text.prefix(10))),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var millis: Int64 = 0
        if b.count > 20 {
            // ".s", ".ss" or ".sss" before the "Z"
            let fraction = b.count - 21
            guard b[19] == 46, (1...3).contains(fraction), let value = digits(20, fraction) else { return nil }
            millis = value * [100, 10, 1][fraction - 1]
        }
        let days = Self.days(fromCivil: day.year, day.month, day.day)
        milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }

    public var description: String {
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let inDay = milliseconds - days * 86_400_000
        let (year, month, day) = Self.civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3_600_000, 2)):"
            + "\(pad(inDay / 60_000 % 60, 2)):\(pad(inDay / 1000 % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `days(fromCivil:)` (`civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Timestamp: TextValue {
    public static let textFormat = "is not a UTC timestamp like 2026-11-23T09:41:07.123Z"
}

/// `n` in decimal, with leading zeros to `width` digits: how dates and timestamps print their fields.
private func pad(_ n: some BinaryInteger, _ width: Int) -> String {
    let s = String(n)
    return String(repeating: "0", count: max(0, width - s.count)) + s
}

/// A value stored and sent as its text, as dates and timestamps are: one way to read and write it for JSON and SQL.
public protocol TextValue: LosslessStringConvertible, Codable, DatabaseValueConvertible {
    /// Why a text was refused, after the text itself: "is not a yyyy-MM-dd date".
    static var textFormat: String { get }
}

extension TextValue {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' \(Self.textFormat)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public var databaseValue: DatabaseValue { description.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Self? {
        String.fromDatabaseValue(dbValue).flatMap(Self.init)
    }
}
