import Foundation

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
