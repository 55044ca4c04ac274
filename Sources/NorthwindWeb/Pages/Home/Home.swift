import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// The home page: what needs doing today, and for a manager, this month's figures.
struct HomePage: PageModel {
    struct Figures {
        var monthToDate: String
        var orders: String
        var lastMonthToDate: String
        var lastMonth: String
        var change: String?
        var chart: ReportChart.View?
        var stockValue: String
        var uncosted: String?
        var purchases: String
        var late: String?
    }
    var summary: ShopSummary
    var dashboard: Figures?
    /// "2 backordered orders can now ship in full", or nil.
    var backordersReady: String?
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func home(_ request: Request, context: WebContext) async throws -> Response {
        let ready = try await backoffice.orders.backorderedOrdersFillableNow()
        let backordersReady =
            ready == 0 ? nil : ready == 1 ? "1 backordered order can now ship in full" : "\(ready) backordered orders can now ship in full"
        guard let me = context.identity, env.policy.isManager(me.employee) else {
            let summary = try await backoffice.reports.summary()
            return render("home", HomePage(summary: summary, dashboard: nil, backordersReady: backordersReady), context: context)
        }
        let board = try await backoffice.reports.dashboard()
        let dashboard = HomePage.Figures(
            monthToDate: board.monthToDate.shown,
            orders: board.ordersMonthToDate == 1 ? "1 order" : "\(board.ordersMonthToDate) orders",
            lastMonthToDate: board.lastMonthToDate.shown,
            lastMonth: board.lastMonth.shown,
            change: board.changePercent.map { $0 > 0 ? "up \($0)%" : $0 < 0 ? "down \(-$0)%" : "level" },
            chart: board.categories.isEmpty
                ? nil
                : ReportChart(title: "Sales by category this month", bars: board.categories.map { ($0.name, $0.sales.cents) }).view,
            stockValue: board.stockValue?.shown ?? "no cost",
            uncosted: board.unitsWithoutCost > 0 ? "\(board.unitsWithoutCost) units have no cost yet" : nil,
            purchases: board.openPurchaseOrders == 1 ? "1 purchase order" : "\(board.openPurchaseOrders) purchase orders",
            late: board.latePurchaseOrders > 0 ? "\(board.latePurchaseOrders) late" : nil
        )
        let summary = ShopSummary(newOrders: board.newOrders, lowStockProducts: board.lowStockProducts)
        return render("home", HomePage(summary: summary, dashboard: dashboard, backordersReady: backordersReady), context: context)
    }
}
