import Foundation
import GRDB

// guide: begin northwind-error
/// Every failure a caller of the Northwind API can see, each with a message a person can act on.
public enum NorthwindError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A field failed validation; the web layer shows each message beside its field.
    public struct FieldError: Sendable, Equatable, Codable {
        public var field: String
        public var message: String
        public init(_ field: String, _ message: String) {
            self.field = field
            self.message = message
        }
    }
    /// An order line that stock cannot cover.
    public struct Shortage: Sendable, Equatable, Codable {
        public var productID: Int64
        public var productName: String
        public var ordered: Int
        public var inStock: Int
        public var short: Int { ordered - inStock }
        public init(productID: Int64, productName: String, ordered: Int, inStock: Int) {
            self.productID = productID
            self.productName = productName
            self.ordered = ordered
            self.inStock = inStock
        }
    }

    case notFound(entity: String, key: String)
    case invalid([FieldError])
    /// Someone else saved the same record since it was read; `message` tells what they changed.
    case conflict(String)
    /// The record is still referenced and cannot be deleted.
    case inUse(String)
    case insufficientStock(orderNumber: String, [Shortage])
    /// The operation does not fit the record's state, e.g. editing a shipped order.
    case invalidState(String)
    case storeUnavailable(String)
    case importFailed(String)
    // guide: end northwind-error

    public var description: String {
        switch self {
        case let .notFound(entity, key):
            return "No \(entity) \(key) exists."
        case let .invalid(errors):
            return errors.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
        case let .conflict(message), let .inUse(message), let .invalidState(message),
            let .storeUnavailable(message), let .importFailed(message):
            return message
        case let .insufficientStock(number, shortages):
            let lines = shortages.map { "\($0.productName) (ordered \($0.ordered), in stock \($0.inStock), short by \($0.short))" }
            return "Order \(number) cannot be executed: \(lines.joined(separator: ", "))."
        }
    }

    public static func invalid(_ field: String, _ message: String) -> NorthwindError {
        .invalid([FieldError(field, message)])
    }
}

extension NorthwindError {
    /// A database error as the user should read it: which rule a change broke, or that the store is busy.
    public static func translating(_ error: any Error) -> NorthwindError {
        if let error = error as? NorthwindError { return error }
        if let error = error as? DatabaseError {
            switch error.extendedResultCode {
            case .SQLITE_CONSTRAINT_FOREIGNKEY:
                return .inUse("The change refers to a record that does not exist, or removes one that others still refer to.")
            case .SQLITE_CONSTRAINT_CHECK:
                if let refused = gateRefusal(error.message) { return .invalid(refused.errors) }
                return .invalid([.init("record", "A value is out of range: \(error.message ?? "check failed").")])
            case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY:
                // "UNIQUE constraint failed: customers.code" names the field; say it as a person would.
                let column = error.message?.split(separator: ":").last?.split(separator: ",").first?.split(separator: ".").last
                return .invalid([
                    .init(
                        column.map { $0.trimmingCharacters(in: .whitespaces) } ?? "record",
                        "is already used by another record"
                    )
                ])
            case .SQLITE_CONSTRAINT_TRIGGER:
                if let message = error.message, message.hasPrefix("northwind-ledger: ") {
                    let text = message.dropFirst("northwind-ledger: ".count)
                    return .inUse(text.prefix(1).uppercased() + text.dropFirst() + ".")
                }
                return .invalid([.init("record", "The store refused the change: \(error.message ?? "a rule failed").")])
            case .SQLITE_CONSTRAINT_NOTNULL:
                return .invalid([.init("record", "A required value is missing (\(error.message ?? "not null")).")])
            default:
                if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                    return .storeUnavailable("The store is busy with another writer; try again in a moment.")
                }
                return .storeUnavailable("The store failed: \(error.message ?? "\(error)").")
            }
        }
        return .storeUnavailable("The store failed: \(error).")
    }
}

extension NorthwindError {
    /// What the domain's write gate puts before the fields a write broke ("northwind-gate:products:[…]").
    package static let gateMarker = "northwind-gate:"

    /// The table and field errors of the write gate's refusal, or nil for any other message.
    package static func gateRefusal(_ message: String?) -> (table: String, errors: [FieldError])? {
        guard let message, let start = message.range(of: gateMarker) else { return nil }
        let rest = message[start.upperBound...]
        guard let colon = rest.firstIndex(of: ":"),
            let errors = try? JSONDecoder().decode([FieldError].self, from: Data(rest[rest.index(after: colon)...].utf8))
        else { return nil }
        return (String(rest[..<colon]), errors)
    }
}
