import Foundation
import NorthwindStore

/// A tax rate and its name, as `tax.rates` lists them. Hundredths of a percent keep it exact (2300 is 23 %).
public struct TaxRate: Sendable, Codable, Equatable, Hashable {
    public var basisPoints: Int
    public var name: String

    public init(basisPoints: Int, name: String) { (self.basisPoints, self.name) = (basisPoints, name) }

    /// "23 %", "7.5 %".
    public var percent: String { TaxRates.percentText(basisPoints) }
}

/// The `tax.rates` setting: "23 Standard; 8 Reduced; 5 Super-reduced; 0 Zero".
public enum TaxRates {
    /// The rates the text lists, in its order, or why it cannot be read.
    public static func parse(_ text: String) -> Result<[TaxRate], TaxRatesError> {
        var rates: [TaxRate] = []
        for item in text.split(separator: ";", omittingEmptySubsequences: false) {
            let words = item.trimmingCharacters(in: .whitespaces)
            guard let space = words.firstIndex(of: " ") else {
                return .failure(.init("must list each rate as a percentage and a name, such as '23 Standard', not '\(words)'"))
            }
            let number = words[..<space].trimmingCharacters(in: CharacterSet(charactersIn: "%"))
            let name = words[space...].trimmingCharacters(in: .whitespaces)
            guard let basisPoints = basisPoints(String(number)) else {
                return .failure(.init("must give each rate as a percentage from 0 to 100 with at most two decimals, not '\(number)'"))
            }
            guard !name.isEmpty, name.count <= 40 else { return .failure(.init("must name each rate in 1 to 40 characters")) }
            if rates.contains(where: { $0.basisPoints == basisPoints }) {
                return .failure(.init("lists \(percentText(basisPoints)) twice; each rate once"))
            }
            rates.append(TaxRate(basisPoints: basisPoints, name: name))
        }
        return rates.isEmpty ? .failure(.init("must list at least one rate")) : .success(rates)
    }

    public struct TaxRatesError: Error, Sendable {
        public var message: String
        init(_ message: String) { self.message = message }
    }

    static func problem(_ text: String) -> String? {
        if case .failure(let error) = parse(text) { return error.message }
        return nil
    }

    /// "23" or "7.5" percent as hundredths of a percent, within 0–100 %; nil otherwise.
    public static func basisPoints(_ text: String) -> Int? {
        guard text.wholeMatch(of: /[0-9]{1,3}(\.[0-9]{1,2})?/) != nil,
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        let points = NSDecimalNumber(decimal: value * 100).intValue
        return (0...10_000).contains(points) ? points : nil
    }

    static func percentText(_ basisPoints: Int) -> String {
        let whole = basisPoints / 100
        let rest = basisPoints % 100
        if rest == 0 { return "\(whole) %" }
        return rest % 10 == 0 ? "\(whole).\(rest / 10) %" : "\(whole).\(rest < 10 ? "0" : "")\(rest) %"
    }
}

/// The money arithmetic of an invoice, in whole cents, rounding half up (amounts are never negative).
enum TaxArithmetic {
    /// A line's net: quantity × unit price, less the discount, to the cent.
    static func net(unitPrice: Money, quantity: Int, discountBasisPoints: Int) -> Money {
        Money(cents: halfUp(Int128(unitPrice.cents) * Int128(quantity) * Int128(10_000 - discountBasisPoints), 10_000))
    }

    /// The tax on `net` at `basisPoints`, to the cent.
    static func tax(on net: Money, basisPoints: Int) -> Money {
        Money(cents: halfUp(Int128(net.cents) * Int128(basisPoints), 10_000))
    }

    /// Exact for any line the limits allow: the product is held in 128 bits.
    static func halfUp(_ numerator: Int128, _ denominator: Int128) -> Int { Int((numerator + denominator / 2) / denominator) }

    /// A discount as stored (a fraction, 0.15) in hundredths of a percent.
    static func discountBasisPoints(_ discount: Double) -> Int { Int((discount * 10_000).rounded()) }
}

/// A document number's format, such as `{site}/{year}/{counter:6}`.
public enum NumberFormat {
    /// The number for `counter` in `site`'s series for `year`.
    public static func number(_ format: String, site: String, year: Int, counter: Int) -> String {
        var result = ""
        for part in parts(format) ?? [] {
            switch part {
            case .text(let text): result += text
            case .site: result += site
            case .year: result += String(year)
            case .counter(let width):
                let digits = String(counter)
                result += String(repeating: "0", count: max(width - digits.count, 0)) + digits
            }
        }
        return result
    }

    enum Part: Equatable {
        case text(String)
        case site, year
        case counter(width: Int)
    }

    /// Why the format cannot number a series, or nil.
    static func problem(_ format: String) -> String? {
        guard let parts = parts(format) else {
            return
                "may hold only {site}, {year}, {counter} or {counter:N} (N from 1 to 9) between braces, and letters, digits, '/', '-', '_' or '.' besides"
        }
        if !parts.contains(where: { if case .counter = $0 { true } else { false } }) {
            return "must contain {counter}, the document's place in its series, such as {site}/{year}/{counter:6}"
        }
        if !parts.contains(.year) {
            return "must contain {year}: the counter starts again at 1 each year, so a number without it would repeat"
        }
        if !parts.contains(.site) {
            return "must contain {site}: each site numbers its own series, so a number without it would repeat at another site"
        }
        if number(format, site: String(repeating: "X", count: 12), year: 9999, counter: 999_999_999).count > 80 {
            return "makes numbers longer than 80 characters; shorten it"
        }
        return nil
    }

    static func parts(_ format: String) -> [Part]? {
        var parts: [Part] = []
        var rest = Substring(format)
        while !rest.isEmpty {
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else { return nil }
                let token = rest[rest.index(after: rest.startIndex)..<close]
                switch token {
                case "site": parts.append(.site)
                case "year": parts.append(.year)
                case "counter": parts.append(.counter(width: 1))
                default:
                    // `counter:N`, N from 1 to 9 (by hand: a regex literal is compiled at every call, once per invoice).
                    guard token.hasPrefix("counter:"), token.count == 9, let width = Int(token.suffix(1)), width >= 1 else { return nil }
                    parts.append(.counter(width: width))
                }
                rest = rest[rest.index(after: close)...]
            } else {
                let character = rest.removeFirst()
                guard character.isASCII, character.isLetter || character.isNumber || "/-_.".contains(character) else { return nil }
                if case .text(let text) = parts.last {
                    parts[parts.count - 1] = .text(text + String(character))
                } else {
                    parts.append(.text(String(character)))
                }
            }
        }
        return parts
    }
}
