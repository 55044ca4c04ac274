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
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar
    }()

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = LocalDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a yyyy-MM-dd date")
        }
        self = value
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension LocalDate: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { description.databaseValue }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> LocalDate? {
        String.fromDatabaseValue(dbValue).flatMap(LocalDate.init)
    }
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
