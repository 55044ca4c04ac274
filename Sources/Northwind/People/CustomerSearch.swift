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
