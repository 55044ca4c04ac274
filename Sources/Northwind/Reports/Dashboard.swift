import Foundation
import GRDB
import NorthwindStore

/// A manager's home page: this month's sales against last month's, what needs doing, and where sales come from.
/// Sales are the lines' ExtendedPrice of orders placed (not cancelled), as in the reports.
public struct Dashboard: Sendable, Codable, Equatable {
    public struct CategorySales: Sendable, Codable, Equatable {
        public var name: String
        public var sales: Money
    }

    public var today: LocalDate
    /// Orders placed from the first of this month to today.
    public var monthToDate: Money
    public var ordersMonthToDate: Int
    /// Last month, from its first day to the same day of the month (or its last day), for a fair comparison.
    public var lastMonthToDate: Money
    /// The whole of last month.
    public var lastMonth: Money
    public var newOrders: Int
    public var lowStockProducts: Int
    /// This month's best categories, then the rest summed as "Other categories".
    public var categories: [CategorySales]
    /// What stock here is worth at its moving average cost; nil when no unit in stock has a cost yet.
    public var stockValue: Money? = nil
    /// Units in stock here that have no cost (never received at one).
    public var unitsWithoutCost = 0
    /// This site's purchase orders still awaiting goods, and how many of them are past their expected date.
    public var openPurchaseOrders = 0
    public var latePurchaseOrders = 0

    /// The change against last month to the same day, in whole percent; nil when last month sold nothing.
    public var changePercent: Int? {
        guard lastMonthToDate.cents != 0 else { return nil }
        // In Double throughout: an out-of-range stored amount must not trap the home page.
        let percent = ((Double(monthToDate.cents) - Double(lastMonthToDate.cents)) / Double(lastMonthToDate.cents) * 100).rounded()
        return Int(exactly: percent) ?? (percent > 0 ? .max : .min)
    }
}

extension Reports {
    /// How many categories the chart names; the rest are one bar.
    static let dashboardCategories = 8

    public func dashboard(today: LocalDate = .today) async throws(NorthwindError) -> Dashboard {
        let lowStockMargin = rules.lowStockMargin
        let first = LocalDate(year: today.year, month: today.month, day: 1)!
        let lastMonthEnd = first.adding(days: -1)
        let lastMonthFirst = LocalDate(year: lastMonthEnd.year, month: lastMonthEnd.month, day: 1)!
        let lastMonthSameDay = LocalDate(year: lastMonthEnd.year, month: lastMonthEnd.month, day: min(today.day, lastMonthEnd.day))!
        return try await read { db in
            // One pass over two months of orders and their kept totals.
            let sums = try Row.fetchOne(
                db,
                sql: """
                    SELECT sum(CASE WHEN o.orderDate >= :first THEN t.amountCents END) AS monthToDate,
                           count(CASE WHEN o.orderDate >= :first THEN t.amountCents END) AS orders,
                           sum(CASE WHEN o.orderDate < :first AND o.orderDate <= :sameDay THEN t.amountCents END) AS lastMonthToDate,
                           sum(CASE WHEN o.orderDate < :first THEN t.amountCents END) AS lastMonth
                    FROM orders o
                    JOIN order_totals t ON t.orderID = o.id
                    WHERE o.status <> 'cancelled' AND o.orderDate BETWEEN :lastMonthFirst AND :today
                    """,
                arguments: [
                    "first": first.description, "sameDay": lastMonthSameDay.description,
                    "lastMonthFirst": lastMonthFirst.description, "today": today.description,
                ]
            )
            let categories = try Row.fetchAll(
                db,
                sql: """
                    SELECT c.name AS name, sum(sold.cents) AS cents
                    FROM (SELECT ol.productID, sum(ol.extendedPriceCents) AS cents
                          FROM orders o JOIN order_lines ol ON ol.orderID = o.id
                          WHERE o.status <> 'cancelled' AND o.orderDate BETWEEN ? AND ?
                          GROUP BY ol.productID) sold
                    JOIN products p ON p.id = sold.productID
                    JOIN categories c ON c.id = p.categoryID
                    GROUP BY c.id
                    ORDER BY cents DESC, c.name
                    """,
                arguments: [first.description, today.description]
            )
            .map { Dashboard.CategorySales(name: $0["name"], sales: Money(cents: $0["cents"])) }
            var shown = Array(categories.prefix(Self.dashboardCategories))
            let others = categories.dropFirst(Self.dashboardCategories).reduce(Money.zero) { $0 + $1.sales }
            if others > .zero { shown.append(.init(name: "Other categories", sales: others)) }
            let summary = try Self.shopSummary(db, lowStockMargin: lowStockMargin)
            var board = Dashboard(
                today: today,
                monthToDate: Money(cents: sums?["monthToDate"] ?? 0),
                ordersMonthToDate: sums?["orders"] ?? 0,
                lastMonthToDate: Money(cents: sums?["lastMonthToDate"] ?? 0),
                lastMonth: Money(cents: sums?["lastMonth"] ?? 0),
                newOrders: summary.newOrders,
                lowStockProducts: summary.lowStockProducts,
                categories: shown
            )
            try Self.addStockAndPurchasing(to: &board, today: today, db)
            return board
        }
    }

    /// What stock here is worth and what this site awaits from suppliers: the manager's second row of tiles.
    private static func addStockAndPurchasing(to board: inout Dashboard, today: LocalDate, _ db: Database) throws {
        // The same average cost as the stock valuation report: the latest a movement here recorded. Summed as a
        // real and capped, so that absurd figures (a poison record) show a huge value rather than stop the page.
        let stock = try Row.fetchOne(
            db,
            sql: """
                SELECT CAST(min(total(units * cost), 9.2e18) AS INTEGER) AS value, count(cost) AS costed,
                  CAST(min(total(CASE WHEN cost IS NULL THEN units ELSE 0 END), 9.2e18) AS INTEGER) AS uncosted
                FROM (SELECT p.unitsInStock AS units,
                        (SELECT m.averageCostCents FROM stock_movements m WHERE m.productID = p.id AND m.location IS NULL
                           AND m.averageCostCents IS NOT NULL ORDER BY m.id DESC LIMIT 1) AS cost
                      FROM products p WHERE p.unitsInStock > 0)
                """
        )
        let purchases = try Row.fetchOne(
            db,
            sql: """
                SELECT count(*) AS open, count(CASE WHEN expectedDate < ? THEN 1 END) AS late
                FROM purchase_orders WHERE location IS NULL AND status IN ('sent', 'partiallyReceived')
                """,
            arguments: [today.description]
        )
        board.stockValue = (stock?["costed"] ?? 0) > 0 ? Money(cents: stock?["value"] ?? 0) : nil
        board.unitsWithoutCost = stock?["uncosted"] ?? 0
        board.openPurchaseOrders = purchases?["open"] ?? 0
        board.latePurchaseOrders = purchases?["late"] ?? 0
    }
}
