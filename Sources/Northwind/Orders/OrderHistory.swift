import Foundation
import GRDB
import NorthwindStore

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
