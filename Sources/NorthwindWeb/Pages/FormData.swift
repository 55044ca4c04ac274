import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// A submitted `application/x-www-form-urlencoded` form. Keeps repeated fields (order lines) in order.
struct FormData: Sendable {
    var pairs: [(String, String)]

    init(_ body: String) {
        pairs = body.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    subscript(_ name: String) -> String? {
        pairs.first { $0.0 == name }?.1
    }

    func all(_ name: String) -> [String] {
        pairs.filter { $0.0 == name }.map(\.1)
    }

    /// The value trimmed, or nil when missing or blank.
    func text(_ name: String) -> String? {
        guard let value = self[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// Reads a form posted by one of our pages; `CSRFCheck` has checked its token before any handler runs.
    static func read(_ request: Request, context: WebContext) async throws -> FormData {
        var request = request
        return FormData(String(buffer: try await request.collectBody(upTo: context.maxUploadSize)))
    }
}

/// Parses form and query fields into domain values, collecting a message per bad field instead of stopping at
/// the first, so the page can show each one beside its field.
struct FieldParser {
    var errors: [NorthwindError.FieldError] = []

    mutating func money(_ text: String?, _ field: String, required: Bool = false) -> Money? {
        guard let text, !text.isEmpty else {
            if required { errors.append(.init(field, "is required")) }
            return nil
        }
        guard let value = Money(parsing: text) else {
            errors.append(.init(field, "must be an amount such as 18.00, not '\(text)'"))
            return nil
        }
        if let error = Limits.check(value, Limits.money, field) { errors.append(error) }
        return value
    }

    /// A whole number; with a `range`, one outside it (even beyond what `Int` holds) gets a message that names it.
    mutating func int(_ text: String?, _ field: String, required: Bool = false, in range: ClosedRange<Int>? = nil) -> Int? {
        guard let text, !text.isEmpty else {
            if required { errors.append(.init(field, "is required")) }
            return nil
        }
        guard let value = Int(text) else {
            let isNumber = text.drop { $0 == "-" }.allSatisfy { $0.isASCII && $0.isNumber }
            if let range, isNumber {
                errors.append(Limits.outOfRange(range, field))
            } else {
                errors.append(.init(field, "must be a whole number, not '\(text)'"))
            }
            return nil
        }
        if let range, let error = Limits.check(value, range, field) {
            errors.append(error)
            return nil
        }
        return value
    }

    /// A list's `page`: from 1 to the last page a list of `Limits.offset` rows has; 1 when absent.
    mutating func page(_ request: Request, pageSize: Int) -> Int {
        let last = Limits.offset.upperBound / pageSize + 1
        return int(request.query("page"), "page", in: 1...last) ?? 1
    }

    /// A record's id; blank is none, unless `blankAllowed` is false (the API's typed parameters).
    mutating func id(_ text: String?, _ field: String, blankAllowed: Bool = true) -> Int64? {
        guard let text, !text.isEmpty || !blankAllowed else { return nil }
        guard let value = Int64(text), value > 0 else {
            errors.append(.init(field, "must be a record number, not '\(text)'"))
            return nil
        }
        return value
    }

    mutating func date(_ text: String?, _ field: String) -> LocalDate? {
        guard let text, !text.isEmpty else { return nil }
        guard let value = LocalDate(text) else {
            errors.append(.init(field, "must be a date such as 2026-11-22, not '\(text)'"))
            return nil
        }
        return value
    }

    func throwIfAny() throws(NorthwindError) {
        if !errors.isEmpty { throw .invalid(errors) }
    }
}

extension Request {
    /// A query parameter exactly as sent, nil only when absent: the API's typed parameters take no blank value,
    /// where a page's form may leave a filter blank.
    func parameter(_ name: String) -> String? {
        uri.queryParameters.get(name)
    }

    /// A whole-number API parameter within `range`, or nil when absent; a bad one, blank included, adds an error that
    /// names the parameter and the range.
    func wholeNumber(_ name: String, in range: ClosedRange<Int>, errors: inout [NorthwindError.FieldError]) -> Int? {
        guard let text = parameter(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            errors.append(Limits.outOfRange(range, name, given: text))
            return nil
        }
        return value
    }

    /// A query parameter, or nil when absent or blank.
    func query(_ name: String) -> String? {
        guard let value = uri.queryParameters.get(name)?.trimmingCharacters(in: .whitespaces),
            !value.isEmpty
        else { return nil }
        return value
    }
}
