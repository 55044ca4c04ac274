import Foundation
import NorthwindStore

extension ReportDefinition {
    /// Every classic view and procedure of Microsoft's `instnwnd.sql`, in the order the script defines them.
    /// How each reproduces SQL Server's arithmetic (float32 `real` steps, money rounding, inclusive dates) is written
    /// beside its query in `Reports/reports.sql`.
    public static let catalogue: [ReportDefinition] = {
        func year(_ defaultYear: Int) -> ReportParameter {
            ReportParameter(
                name: "year",
                kind: .year,
                defaultValue: String(defaultYear),
                help: "The year (the original is fixed to \(defaultYear))."
            )
        }
        let range = [
            ReportParameter(name: "from", kind: .date, defaultValue: nil, help: "The first day, e.g. 1996-07-01."),
            ReportParameter(name: "to", kind: .date, defaultValue: nil, help: "The last day, included, e.g. 1996-07-31."),
        ]
        let customer = ReportParameter(name: "customer", kind: .customer, defaultValue: nil, help: "The customer's code, e.g. ALFKI.")
        func view(_ name: String, _ summary: String, _ parameters: [ReportParameter] = [], money: [String] = []) -> ReportDefinition {
            ReportDefinition(
                name: slug(name),
                original: "view \"\(name)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: key(name)
            )
        }
        func procedure(
            _ name: String,
            _ summary: String,
            _ parameters: [ReportParameter] = [],
            money: [String] = [],
            key query: String? = nil
        ) -> ReportDefinition {
            // SalesByCategory would take the view "Sales by Category"'s name; it keeps its query's key instead.
            ReportDefinition(
                name: query.map { $0.replacingOccurrences(of: "_", with: "-") } ?? slug(name),
                original: "procedure \"\(name)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: query ?? key(name)
            )
        }
        return [
            view("Alphabetical list of products", "Products still sold, with their category.", money: ["UnitPrice"]),
            view("Current Product List", "The id and name of every product still sold."),
            view("Products Above Average Price", "Products priced above the average, dearest first.", money: ["UnitPrice"]),
            view("Products by Category", "Products still sold, by category."),
            view("Customer and Suppliers by City", "Every customer and supplier, by city."),
            view("Invoices", "Every line of every order, with what an invoice prints.", money: ["UnitPrice", "ExtendedPrice", "Freight"]),
            view("Order Details Extended", "Every order line with its discounted amount.", money: ["UnitPrice", "ExtendedPrice"]),
            view("Order Subtotals", "Each order's total before freight.", money: ["Subtotal"]),
            view("Orders Qry", "Every order with its customer's address.", money: ["Freight"]),
            view("Quarterly Orders", "Customers who ordered in a year.", [year(1997)]),
            view("Product Sales for 1997", "Sales per product of orders shipped in a year.", [year(1997)], money: ["ProductSales"]),
            view("Category Sales for 1997", "Sales per category of orders shipped in a year.", [year(1997)], money: ["CategorySales"]),
            view("Sales by Category", "Sales per product and category of orders placed in a year.", [year(1997)], money: ["ProductSales"]),
            view("Sales Totals by Amount", "Orders shipped in a year worth more than 2,500.", [year(1997)], money: ["SaleAmount"]),
            view("Summary of Sales by Quarter", "Every shipped order with its subtotal.", money: ["Subtotal"]),
            view("Summary of Sales by Year", "Every shipped order with its subtotal.", money: ["Subtotal"]),
            procedure("Ten Most Expensive Products", "The ten dearest products.", money: ["UnitPrice"]),
            procedure("CustOrderHist", "How many of each product a customer has ordered.", [customer]),
            procedure(
                "CustOrdersDetail",
                "An order's lines.",
                [ReportParameter(name: "order", kind: .order, defaultValue: nil, help: "The order's number, e.g. 10248.")],
                money: ["UnitPrice", "ExtendedPrice"]
            ),
            procedure("CustOrdersOrders", "A customer's orders.", [customer]),
            procedure("Employee Sales by Country", "Each employee's shipped orders in a period.", range, money: ["SaleAmount"]),
            procedure("Sales by Year", "Orders shipped in a period, with their subtotals.", range, money: ["Subtotal"]),
            procedure(
                "SalesByCategory",
                "A category's sales per product in a year, in whole currency units.",
                [
                    ReportParameter(name: "category", kind: .category, defaultValue: nil, help: "The category's name, e.g. Beverages."),
                    year(1998),
                ],
                money: ["TotalPurchase"],
                key: "sales_by_category_proc"
            ),
        ] + managersReports
    }()

    /// Reports of our own, for running the business; `reports.sql` states their rules.
    static let managersReports: [ReportDefinition] = {
        let period = [
            ReportParameter(name: "from", kind: .date, defaultValue: "", help: "The first order date, e.g. 2026-01-01; empty for the beginning."),
            ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last order date, included; empty for no end."),
        ]
        let top = ReportParameter(name: "top", kind: .count, defaultValue: "10", help: "How many to list, e.g. 10.")
        func report(
            _ title: String,
            _ summary: String,
            _ parameters: [ReportParameter] = [],
            money: [String] = [],
            chart: ChartSum? = nil
        ) -> ReportDefinition {
            ReportDefinition(
                name: slug(title),
                original: "Northwind report \"\(title)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: key(title),
                chartSum: chart
            )
        }
        return [
            report("Reorder list", "Products to reorder, by supplier, with a suggested quantity."),
            report("Order backlog", "Open orders, the most urgent first, each supplyable or blocked.", money: ["Amount"]),
            report("Top customers", "The customers who bought most in a period.", period + [top], money: ["Sales", "AverageOrder"]),
            report("Top products", "The products that sold most in a period.", period + [top], money: ["Sales"]),
            report("Sales per employee", "Orders taken and sales per employee in a period.", period, money: ["Sales", "AverageOrder"]),
            report(
                "Stock movements",
                "Every change to stock, for a product or a period.",
                [
                    ReportParameter(name: "product", kind: .product, defaultValue: "", help: "A product's id or exact name; empty for all."),
                    ReportParameter(name: "from", kind: .date, defaultValue: "", help: "The first day, e.g. 2026-01-01; empty for the beginning."),
                    ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last day, included; empty for no end."),
                ]
            ),
            report(
                "Stock valuation",
                "What stock is worth at its moving average cost, by location and category.",
                money: ["Value"],
                chart: ChartSum(label: "CategoryName", value: "Value")
            ),
            report(
                "Open purchase orders",
                "Purchase orders still awaiting goods, by supplier, with what is late.",
                money: ["OutstandingValue"],
                chart: ChartSum(label: "Supplier", value: "OutstandingValue")
            ),
            report("Supplier performance", "Each supplier's deliveries: received, on time, complete, and the lead time."),
            report(
                "Gross margin",
                "Sales against their cost at the time of sale, per product and category, for orders shipped in a period.",
                [
                    ReportParameter(
                        name: "from",
                        kind: .date,
                        defaultValue: "",
                        help: "The first shipped day, e.g. 2026-01-01; empty for the beginning."
                    ),
                    ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last shipped day, included; empty for no end."),
                ],
                money: ["Sales", "Cost", "Margin"],
                chart: ChartSum(label: "CategoryName", value: "Margin")
            ),
        ] + accountantsReports
    }()

    /// Reports on invoices and fulfilment (issue 40): what an accountant and the people who pack need.
    static let accountantsReports: [ReportDefinition] = {
        let issued = [
            ReportParameter(name: "from", kind: .date, defaultValue: "", help: "The first day of issue, e.g. 2026-01-01; empty for the beginning."),
            ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last day of issue, included; empty for no end."),
        ]
        func report(_ title: String, _ summary: String, _ parameters: [ReportParameter] = [], money: [String] = []) -> ReportDefinition {
            ReportDefinition(
                name: slug(title),
                original: "Northwind report \"\(title)\"",
                summary: summary,
                parameters: parameters,
                moneyColumns: money,
                query: key(title)
            )
        }
        return [
            report(
                "Sales by invoice date",
                "What was invoiced per day and site, credit notes deducted.",
                issued,
                money: ["Net", "Tax", "Gross"]
            ),
            report(
                "Tax by rate and month",
                "Net and tax per month, site and rate, as issued, credit notes deducted: for the tax return.",
                issued,
                money: ["Net", "Tax", "Gross"]
            ),
            report("Backorder ageing", "Backordered lines by how long their order has waited.", money: ["Value"]),
            report(
                "Fill rate",
                "Per month of order, the share of ordered units shipped within a number of days.",
                [
                    ReportParameter(name: "days", kind: .count, defaultValue: "7", help: "The promise, in days, e.g. 7."),
                    ReportParameter(name: "from", kind: .date, defaultValue: "", help: "The first order date; empty for the beginning."),
                    ReportParameter(name: "to", kind: .date, defaultValue: "", help: "The last order date, included; empty for no end."),
                ]
            ),
        ]
    }()

    /// By its name, or by the original's (`SalesByCategory`, `Sales by Category`), ignoring case.
    public static func named(_ name: String) -> ReportDefinition? {
        let lowered = name.lowercased()
        return catalogue.first { $0.name == lowered }
            ?? catalogue.first { $0.original.lowercased().hasSuffix("\"\(lowered)\"") }
            ?? catalogue.first { $0.name == slug(name) }
    }

    /// `Category Sales for 1997` → `category-sales-for-1997`; `CustOrderHist` → `cust-order-hist`.
    static func slug(_ name: String) -> String {
        words(name).joined(separator: "-")
    }

    static func key(_ name: String) -> String { words(name).joined(separator: "_") }

    private static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in name {
            if character.isLetter || character.isNumber {
                if character.isUppercase, let last = current.last, last.isLowercase {
                    words.append(current)
                    current = ""
                }
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words.map { $0.lowercased() }
    }
}
