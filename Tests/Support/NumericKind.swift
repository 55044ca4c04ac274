import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind

/// What a numeric input takes, to tell the values it must refuse from those it may accept.
enum NumericKind: Sendable, CustomStringConvertible {
    case whole(ClosedRange<Int>)
    case money
    case number(ClosedRange<Double>)

    static let fraction = NumericKind.number(0...1)

    /// The values every input is tried with, as JSON: the edges of Int32 and Int64, beyond them, exponents, fractions,
    /// a decimal no integer holds, text and null.
    static let jsonValues = [
        "0", "-1", "1", "2147483648", "9223372036854775807", "9223372036854775808", "1e3", "1.5",
        "1e400", "99999999999999999999999.99", "\"\"", "\"abc\"", "\"12\"", "null",
    ]
    /// The same as a query string or form field would carry them.
    static let textValues = [
        "0", "-1", "1", "2147483648", "9223372036854775807", "9223372036854775808", "1e3", "1.5",
        "99999999999999999999999.99", "abc", "0x10",
    ]

    /// Whether the value is in range; money may also come as a string.
    func accepts(json literal: String) -> Bool {
        if literal.hasPrefix("\"") {
            guard case .money = self else { return false }
            return accepts(text: String(literal.dropFirst().dropLast()))
        }
        guard literal != "null", let number = Decimal(string: literal, locale: Locale(identifier: "en_US_POSIX")), number.isFinite
        else { return false }
        switch self {
        case let .whole(range):
            // Exactly, through the decimal's own digits: 1e3 is 1000, 1.5 is no whole number.
            guard let value = Int("\(number)") else { return false }
            return range.contains(value)
        case .money:
            return Money(parsing: "\(number)").map(Limits.money.contains) ?? false
        case let .number(range):
            return Double("\(number)").map(range.contains) ?? false
        }
    }

    func accepts(text: String) -> Bool {
        switch self {
        case let .whole(range): Int(text).map(range.contains) ?? false
        case .money: Money(parsing: text).map(Limits.money.contains) ?? false
        case let .number(range): Double(text).map(range.contains) ?? false
        }
    }

    var description: String {
        switch self {
        case let .whole(range): "\(range)"
        case .money: "money"
        case let .number(range): "\(range)"
        }
    }
}

let wholeID = NumericKind.whole(Int(Int64.min)...Int(Int64.max))
let units = NumericKind.whole(Limits.units)
