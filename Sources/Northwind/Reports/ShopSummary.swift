import Foundation
import GRDB
import NorthwindStore

/// The figures on the home page: what needs doing today.
public struct ShopSummary: Sendable, Codable, Equatable {
    public var newOrders: Int
    public var lowStockProducts: Int
    public init(newOrders: Int, lowStockProducts: Int) {
        self.newOrders = newOrders
        self.lowStockProducts = lowStockProducts
    }
}

extension Reports {
    public func summary() async throws(NorthwindError) -> ShopSummary {
        let margin = rules.lowStockMargin
        return try await read { db in try Self.shopSummary(db, lowStockMargin: margin) }
    }

    static func shopSummary(_ db: Database, lowStockMargin: Int) throws -> ShopSummary {
        ShopSummary(
            newOrders: try Int.fetchOne(db, sql: "SELECT count(*) FROM orders WHERE status = 'new'") ?? 0,
            lowStockProducts: try Int.fetchOne(db, sql: "SELECT count(*) FROM products WHERE \(Product.lowStockSQL)", arguments: [lowStockMargin])
                ?? 0
        )
    }
}
