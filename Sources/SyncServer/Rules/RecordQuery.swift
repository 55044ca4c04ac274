import Foundation
import SyncAPI
import SyncProtocol

/// `records/query`'s filters and sorts, over typed field values.
struct RecordQuery {
    let query: Components.Schemas.Query
    init(_ query: Components.Schemas.Query) { self.query = query }

    func run(_ records: [SyncRecord]) throws(SyncError) -> [SyncRecord] {
        let filters = query.filterBy ?? []
        let sorts = query.sortBy ?? []
        if filters.count > 20 || sorts.count > 5 { throw SyncError(.limitExceeded, "a query has at most 20 filters and 5 sorts") }
        var matched: [SyncRecord] = []
        for record in records {
            var keep = true
            for filter in filters where keep {
                keep = try Self.matches(record.fields[filter.fieldName], filter.comparator, filter.fieldValue, field: filter.fieldName)
            }
            if keep { matched.append(record) }
        }
        return matched.sorted { a, b in
            for sort in sorts {
                let order = Self.compare(a.fields[sort.fieldName], b.fields[sort.fieldName])
                if order != .orderedSame { return (sort.ascending ?? true) ? order == .orderedAscending : order == .orderedDescending }
            }
            return a.recordName < b.recordName
        }
    }

    /// Whether a record passes every filter; a filter that cannot apply to it (wrong type) does not match.
    static func matches(_ record: SyncRecord, _ filters: [Components.Schemas.Filter]) -> Bool {
        filters.allSatisfy { filter in
            (try? matches(record.fields[filter.fieldName], filter.comparator, filter.fieldValue, field: filter.fieldName)) ?? false
        }
    }

    private static func matches(
        _ value: FieldValue?,
        _ comparator: Components.Schemas.Filter.ComparatorPayload,
        _ wanted: FieldValue,
        field: String
    ) throws(SyncError) -> Bool {
        guard let value else { return comparator == .notEquals }
        if value.typeName != wanted.typeName {
            throw SyncError(.badRequest, "the filter on \(field) compares a \(wanted.typeName) with a \(value.typeName) field")
        }
        let order = compare(value, wanted)
        switch comparator {
        case .equals: return value == wanted
        case .notEquals: return value != wanted
        case .lessThan: return order == .orderedAscending
        case .lessThanOrEquals: return order != .orderedDescending
        case .greaterThan: return order == .orderedDescending
        case .greaterThanOrEquals: return order != .orderedAscending
        case .beginsWith:
            guard case .string(let text) = value, case .string(let prefix) = wanted else {
                throw SyncError(.badRequest, "BEGINS_WITH applies to STRING fields; \(field) is \(value.typeName)")
            }
            return text.hasPrefix(prefix)
        }
    }

    /// Orders two values of one type; a missing field sorts last.
    static func compare(_ a: FieldValue?, _ b: FieldValue?) -> ComparisonResult {
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedDescending
        case (_, nil): return .orderedAscending
        case (.string(let x), .string(let y)): return ordered(x, y)
        case (.int64(let x), .int64(let y)), (.timestamp(let x), .timestamp(let y)): return ordered(x, y)
        case (.double(let x), .double(let y)): return ordered(x, y)
        case (.decimal(let x), .decimal(let y)): return ordered(Decimal(string: x) ?? 0, Decimal(string: y) ?? 0)
        case (.reference(let x), .reference(let y)): return ordered(x.recordName, y.recordName)
        default: return ordered(a!.typeName, b!.typeName)
        }
    }

    private static func ordered<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }
}
