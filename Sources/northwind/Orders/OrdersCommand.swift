import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindWeb

struct OrdersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orders",
        abstract: "Take, check, execute (ship) and cancel orders.",
        subcommands: [List.self, Show.self, New.self, EditLines.self, Check.self, Execute.self, Cancel.self]
    )

    static func print(_ detail: OrderDetail) {
        let o = detail.order
        Swift.print(
            """
            Order \(o.number) — \(o.status.rawValue)\(detail.isSupplyable || o.status != .new ? "" : " (cannot be supplied now)")
              Customer:  \(detail.customer.companyName) (\(detail.customer.code))
              Employee:  \(detail.employee?.fullName ?? "")
              Ordered:   \(o.orderDate)   Required: \(o.requiredDate?.description ?? "")   Shipped: \(o.shippedDate?.description ?? "")
              Ship via:  \(detail.shipper?.companyName ?? "")
              Ship to:   \([o.shipName, o.shipAddress, o.shipCity, o.shipPostalCode, o.shipCountry].compactMap { $0 }.joined(separator: ", "))
            """
        )
        var table = TextTable("Product", "Name", "Unit price", "Qty", "Discount", "Total", "In stock", "Short")
        for line in detail.lines {
            table.add(
                String(line.line.productID),
                line.productName,
                line.line.unitPrice.description,
                String(line.line.quantity),
                discountText(line.line.discount),
                line.total.description,
                String(line.inStock),
                o.status == .new && line.short > 0 ? String(line.short) : ""
            )
        }
        Swift.print(table.render())
        Swift.print("Subtotal \(detail.subtotal)   Freight \(o.freight)   Total \(detail.total)")
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List orders: new (unshipped), shipped or cancelled, by customer, employee or date."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "new, shipped or cancelled.") var status: OrderStatus?
        @Option(help: "A customer code, e.g. VINET.") var customer: String?
        @Option(help: "An employee id.") var employee: Int64?
        @Option(help: "Ordered on or after this day (YYYY-MM-DD).") var from: LocalDate?
        @Option(help: "Ordered on or before this day (YYYY-MM-DD).") var to: LocalDate?
        @Option(help: "Rows per page (1–1000).") var limit = 50
        @Option(help: "Rows to skip.") var offset = 0

        func run() async throws {
            var query = OrderQuery(status: status)
            (query.customerCode, query.employeeID, query.from, query.to) = (customer, employee, from, to)
            (query.limit, query.offset) = (limit, offset)
            let page = try await storeOptions.open().orders.list(query)
            if output.json { return try printJSON(Wire.orders(page)) }
            var table = TextTable("Number", "Customer", "Employee", "Ordered", "Required", "Status", "Total", "Supplyable")
            for s in page.items {
                table.add(
                    s.order.number,
                    "\(s.customerName) (\(s.customerCode))",
                    text(s.employeeName),
                    s.order.orderDate.description,
                    s.order.requiredDate?.description ?? "",
                    s.order.status.rawValue,
                    s.total.description,
                    s.order.status == .new ? (s.isSupplyable ? "yes" : "NO") : ""
                )
            }
            Swift.print(table.render())
            Swift.print(pageFooter(page))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an order with its lines and totals.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "\(orderNumberHelp)") var number: String

        func run() async throws {
            let detail = try await storeOptions.open().orders.order(number: number)
            if output.json { return try printJSON(Wire.order(detail)) }
            OrdersCommand.print(detail)
        }
    }

    /// PRODUCT:QUANTITY[:DISCOUNT], e.g. 11:12 or 42:10:0.15.
    struct LineArgument: ExpressibleByArgument {
        var draft: OrderLineDraft
        init?(argument: String) {
            let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count), let product = Int64(parts[0]), let quantity = Int(parts[1]) else { return nil }
            var discount = 0.0
            if parts.count == 3 {
                guard let value = Double(parts[2]) else { return nil }
                discount = value
            }
            draft = OrderLineDraft(productID: product, quantity: quantity, discount: discount)
        }
    }

    struct New: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a new order (the phone order).")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "The customer's code, e.g. VINET.") var customer: String
        @Option(help: "The employee taking the order.") var employee: Int64?
        @Option(help: "Order date (default today).") var date: LocalDate?
        @Option(help: "Required date.") var required: LocalDate?
        @Option(help: "Shipper id.") var shipVia: Int64?
        @Option(help: "Freight, e.g. 32.38.") var freight: Money = .zero
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY[:DISCOUNT], e.g. 11:12 or 42:10:0.15 (repeatable).")
        var lines: [LineArgument] = []

        func validate() throws {
            if lines.isEmpty { throw ValidationError("An order needs at least one --line PRODUCT:QUANTITY[:DISCOUNT].") }
        }

        func run() async throws {
            let draft = OrderDraft(
                customerCode: customer,
                employeeID: employee,
                orderDate: date,
                requiredDate: required,
                shipVia: shipVia,
                freight: freight,
                lines: lines.map(\.draft)
            )
            let detail = try await storeOptions.open().orders.create(draft)
            if output.json { return try printJSON(Wire.order(detail)) }
            OrdersCommand.print(detail)
        }
    }

    struct EditLines: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit-lines", abstract: "Replace the lines of an unshipped order.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "\(orderNumberHelp)") var number: String
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY[:DISCOUNT] (repeatable); the new lines replace all old ones.")
        var lines: [LineArgument] = []

        func validate() throws {
            if lines.isEmpty { throw ValidationError("Give the order's new lines with --line PRODUCT:QUANTITY[:DISCOUNT].") }
        }

        func run() async throws {
            let detail = try await storeOptions.open().orders.updateLines(number: number, lines: lines.map(\.draft))
            if output.json { return try printJSON(Wire.order(detail)) }
            OrdersCommand.print(detail)
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check whether stock covers every line of an order.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "\(orderNumberHelp)") var number: String

        func run() async throws {
            let lines = try await storeOptions.open().orders.availability(number: number)
            if output.json { return try printJSON(lines) }
            var table = TextTable("Product", "Name", "Ordered", "In stock", "Status")
            for line in lines {
                table.add(
                    String(line.productID),
                    line.productName,
                    String(line.ordered),
                    String(line.inStock),
                    line.short == 0 ? "available" : "short by \(line.short)"
                )
            }
            Swift.print(table.render())
            let short = lines.filter { $0.short > 0 }.count
            Swift.print(short == 0 ? "Every line can be supplied." : "\(short) line\(short == 1 ? "" : "s") cannot be supplied.")
        }
    }

    struct Execute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ship an order: takes the stock and sets the shipped date, or changes nothing if any line is short."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "\(orderNumberHelp)") var number: String
        @Option(help: "The employee shipping it (default: who took it).") var employee: Int64?

        func run() async throws {
            let detail = try await storeOptions.open().orders.execute(number: number, employeeID: employee)
            if output.json { return try printJSON(Wire.order(detail)) }
            OrdersCommand.print(detail)
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel an order that has not shipped.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "\(orderNumberHelp)") var number: String

        func run() async throws {
            let detail = try await storeOptions.open().orders.cancel(number: number)
            if output.json { return try printJSON(Wire.order(detail)) }
            Swift.print("Cancelled order \(detail.order.number).")
        }
    }
}

/// Staff say the sequence alone on the phone; the domain finds this installation's order by it.
private let orderNumberHelp = "The order number, e.g. 7KQ2XM-831, or 831 alone for an order taken here."
