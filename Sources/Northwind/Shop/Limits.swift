import Foundation
import NorthwindStore

/// The ranges that input may set, in one place. Every way in (the API, the pages, the CLI, the import and later
/// sync) goes through the domain's validation, which checks them, so out-of-range values never reach the store.
/// Within them no sum or product of stored values comes near `Int.max`; outside them (a store written by hand or by
/// an older version) the arithmetic saturates instead of trapping, see `Money`.
public enum Limits {
    /// Prices and freight: 0.00 to 9,999,999.99.
    public static let money = Money.zero...Money(cents: 999_999_999)
    /// Units in stock, on order, at which to reorder, received or counted: 0 to 1,000,000,000.
    public static let units = 0...1_000_000_000
    /// Units on one order line: 1 to 1,000,000.
    public static let lineQuantity = 1...1_000_000
    /// Rows per page of a list: 1 to 1,000.
    public static let pageSize = 1...1000
    /// Rows a list may skip: 0 to 100,000,000, more than any store holds.
    public static let offset = 0...100_000_000

    /// Characters of text fields, by kind (`RecordRules` says which field is which): names of companies, products
    /// and people; short fields (a city, a phone number, a title); an address; a description or notes; a note on a
    /// movement or a transfer. The classic data's longest values fit with room to spare; none lets one request
    /// write more than a few kilobytes.
    public static let nameLength = 100
    public static let shortTextLength = 100
    public static let addressLength = 200
    public static let longTextLength = 4000
    public static let noteLength = 500
    /// A quote version's content (JSON): far below the sync server's 1 MiB per record.
    public static let documentLength = 512 * 1024
    /// Lines on one quote.
    public static let quoteLines = 500

    /// "must be from 0.00 to 9,999,999.99", or nil when `value` is in range.
    public static func check(_ value: Money, _ range: ClosedRange<Money> = money, _ field: String) -> NorthwindError.FieldError? {
        range.contains(value) ? nil : .init(field, "must be from \(grouped(range.lowerBound)) to \(grouped(range.upperBound))")
    }

    /// "must be a whole number from 0 to 1,000,000,000", or nil when `value` is in range.
    public static func check(_ value: Int, _ range: ClosedRange<Int>, _ field: String) -> NorthwindError.FieldError? {
        range.contains(value) ? nil : outOfRange(range, field)
    }

    /// The error for a whole number outside `range`, or too large for any integer; `given` adds what was sent.
    public static func outOfRange(_ range: ClosedRange<Int>, _ field: String, given: String? = nil) -> NorthwindError.FieldError {
        .init(
            field,
            "must be a whole number from \(grouped(range.lowerBound)) to \(grouped(range.upperBound))"
                + (given.map { ", not '\($0)'" } ?? "")
        )
    }

    /// 1000000000 as "1,000,000,000", as people read limits.
    public static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    public static func grouped(_ value: Money) -> String {
        let text = value.description
        let whole = Int(text.prefix { $0 != "." }) ?? 0
        return grouped(whole) + text.drop { $0 != "." }
    }
}
