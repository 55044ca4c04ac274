import Foundation
import GRDB
import NorthwindStore

extension People {
    /// Customers whose code or company name contains `text`, codes that start with it first: the phone-order lookup.
    public func searchCustomers(_ text: String, limit: Int = 20) async throws(NorthwindError) -> [Customer] {
        try checkPaging(limit: limit, offset: 0)
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return try await read { db in
            if trimmed.isEmpty {
                return try Customer.order(Customer.Columns.companyName).limit(limit).fetchAll(db)
            }
            let pattern = "%" + Self.escapeLike(trimmed) + "%"
            return try Customer.fetchAll(
                db,
                sql: """
                    SELECT * FROM customers
                    WHERE code LIKE ? ESCAPE '\\' OR companyName LIKE ? ESCAPE '\\' OR contactName LIKE ? ESCAPE '\\'
                    ORDER BY code LIKE ? ESCAPE '\\' DESC, companyName
                    LIMIT ?
                    """,
                arguments: [pattern, pattern, pattern, Self.escapeLike(trimmed) + "%", limit]
            )
        }
    }

    /// Escapes LIKE's wildcards so that a user's `%` or `_` match themselves.
    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

extension Orders {
    /// The orders of one customer, newest first: the customer page's history.
    public func history(customerID: Int64, limit: Int = 50) async throws(NorthwindError) -> [OrderSummary] {
        try await read { db in
            try Order.filter(Order.Columns.customerID == customerID)
                .order(Order.Columns.orderDate.desc, Order.Columns.id.desc).limit(limit).fetchAll(db)
                .map { try Self.summary($0, db) }
        }
    }
}

extension Catalogue {
    /// The products of one category, by name.
    public func products(categoryID: Int64) async throws(NorthwindError) -> [Product] {
        try await read { db in
            try Product.filter(Product.Columns.categoryID == categoryID).order(Product.Columns.name).fetchAll(db)
        }
    }
}
