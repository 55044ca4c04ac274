import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// The order list, by status.
struct OrdersPage: PageModel {
    struct Tab {
        var href: String
        var label: String
        var current: Bool
    }
    var tabs: [Tab]
    var status: String
    var q: String
    var orders: [OrderSummaryView]
    var resultText: String
    var pager: Pager?
    var me: PageUser?
}

/// One order in a list (the order list, a customer's history).
struct OrderSummaryView {
    var number: String
    var customerName: String
    var employeeName: String
    var orderDate: String
    var requiredDate: String
    var total: String
    var isNew: Bool
    var supplyable: Bool
    var status: String

    init(_ summary: OrderSummary) {
        number = summary.order.number
        customerName = summary.customerName
        employeeName = summary.employeeName ?? ""
        orderDate = summary.order.orderDate.description
        requiredDate = summary.order.requiredDate?.description ?? ""
        total = summary.total.shown
        isNew = summary.order.status == .new
        supplyable = summary.isSupplyable
        status = summary.order.status.rawValue
    }
}

/// One order: its lines with what stock can cover, its totals, and the buttons that execute or cancel it.
struct OrderPage: PageModel {
    struct Header {
        var number: String
        var status: String
        var statusLabel: String
        var orderDate: String
        var requiredDate: String
        var shippedDate: String
        var shipName: String
        var shipCity: String
        var shipCountry: String
    }
    struct CustomerRef {
        var code: String
        var companyName: String
    }
    struct Line {
        var productID: Int64
        var productName: String
        var unitPrice: String
        var quantity: Int
        var discount: String
        var total: String
        var isShort: Bool
        var short: Int
        var inStock: Int
        var shipped: Int
        /// Nothing is left to ship of it.
        var done: Bool
    }
    struct ShipmentRef {
        var sequence: Int
        var shippedDate: String
        var contents: String
        var invoice: InvoiceLink?
    }
    var order: Header
    /// Open: new, or shipped in part.
    var isNew: Bool
    var supplyable: Bool
    var hasShipments: Bool
    var shipments: [ShipmentRef]
    /// "Ship available" is offered: some open line is short, the shelf can fill some of another, and the customer
    /// takes partial shipments.
    var canShipAvailable: Bool
    var completeShipmentsOnly: Bool
    /// The "Ship available" form's own key: pressed twice, or sent again, it ships once.
    var requestKey: String
    /// A restored store, before its first full sync: neither Execute nor Cancel.
    var awaitingFullSync: Bool
    /// Execute can be pressed: the shelf can fill it, and the store is not waiting for a full sync.
    var actionable: Bool
    var shortText: String
    var customer: CustomerRef
    var employeeName: String
    var shipperName: String
    var lines: [Line]
    var subtotal: String
    var freight: String
    var total: String
    var error: String?
    var me: PageUser?
}

/// The phone-order form.
struct NewOrderPage: PageModel {
    struct Form {
        var customer: String
        var requiredDate: String
        var freight: String
        var lines: [NewOrderForm.Line]
    }
    var form: Form
    var employees: [ChoiceOption]
    var shippers: [ChoiceOption]
    var errors: [String]
    var hasErrors: Bool
    /// A restored store, before its first full sync, takes no order.
    var awaitingFullSync: Bool
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func orders(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let status = OrderStatus(rawValue: request.query("status") ?? "new") ?? .new
        var query = OrderQuery(status: status)
        query.search = request.query("q")
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        query.limit = pageSize
        query.offset = (page - 1) * pageSize
        let result = try await backoffice.orders.list(query)
        let tabs = [(OrderStatus.new, "New"), (.shipped, "Shipped"), (.cancelled, "Cancelled")].map { tab in
            OrdersPage.Tab(href: "/orders?status=\(tab.0.rawValue)", label: tab.1, current: tab.0 == status)
        }
        let model = OrdersPage(
            tabs: tabs,
            status: status.rawValue,
            q: query.search ?? "",
            orders: result.items.map(OrderSummaryView.init),
            resultText: result.total == 1 ? "1 order" : "\(result.total) orders",
            pager: pager(request, page: page, total: result.total, pageSize: pageSize)
        )
        return render("orders", model, context: context)
    }

    @Sendable func order(_ request: Request, context: WebContext) async throws -> Response {
        try await renderOrder(number: try context.pathString("number"), error: nil, context: context)
    }

    func renderOrder(number: String, error: String?, status: HTTPResponse.Status = .ok, context: WebContext) async throws -> Response {
        let detail = try await backoffice.orders.order(number: number)
        let state = try await backoffice.orders.fulfilment(number: number)
        let issued = try await backoffice.invoicing.invoices(orderNumber: number, limit: 1000)
        let awaitingFullSync = try await backoffice.sync.awaitsFullSyncAfterRestore()
        let isOpen = state.status == .new || state.status == .partlyShipped
        let short = state.lines.filter { $0.fillable < $0.open }
        let supplyable = short.isEmpty
        let order = detail.order
        let model = OrderPage(
            order: .init(
                number: order.number,
                status: state.status == .partlyShipped ? "partlyShipped" : order.status.rawValue,
                statusLabel: state.status.words.prefix(1).uppercased() + state.status.words.dropFirst(),
                orderDate: order.orderDate.description,
                requiredDate: order.requiredDate?.description ?? "",
                shippedDate: order.shippedDate?.description ?? "",
                shipName: order.shipName ?? "",
                shipCity: order.shipCity ?? "",
                shipCountry: order.shipCountry ?? ""
            ),
            isNew: isOpen,
            supplyable: supplyable,
            hasShipments: !state.shipments.isEmpty,
            shipments: state.shipments.map { shipment in
                .init(
                    sequence: shipment.shipment.sequence,
                    shippedDate: shipment.shipment.shippedDate.description,
                    contents: shipment.lines.map { "\($0.quantity) × \($0.productName)" }.joined(separator: ", "),
                    invoice: issued.first { $0.number == shipment.invoiceNumber }.map { InvoiceLink(number: $0.number, href: $0.href) }
                )
            },
            canShipAvailable: isOpen && !supplyable && !state.completeShipmentsOnly && !awaitingFullSync && state.lines.contains { $0.fillable > 0 },
            completeShipmentsOnly: state.completeShipmentsOnly,
            requestKey: UUID().uuidString.lowercased(),
            awaitingFullSync: awaitingFullSync,
            actionable: supplyable && !awaitingFullSync,
            shortText: short.map { "\($0.productName) is short by \($0.open - $0.fillable)" }.joined(separator: ", "),
            customer: .init(code: detail.customer.code, companyName: detail.customer.companyName),
            employeeName: detail.employee?.fullName ?? "",
            shipperName: detail.shipper?.companyName ?? "",
            lines: detail.lines.compactMap { line in
                // Two reads: a line cancelled in between is left out rather than paired with another's figures.
                state.lines.first { $0.orderLineID == line.line.id }.map { Self.orderLine(line, $0) }
            },
            subtotal: detail.subtotal.shown,
            freight: order.freight.shown,
            total: detail.total.shown,
            error: error
        )
        return render("order", model, status: status, context: context)
    }

    static func orderLine(_ line: OrderLineDetail, _ state: LineFulfilment) -> OrderPage.Line {
        OrderPage.Line(
            productID: line.line.productID,
            productName: line.productName,
            unitPrice: line.line.unitPrice.shown,
            quantity: line.line.quantity,
            discount: discountText(line.line.discount),
            total: line.total.shown,
            // Mustache counts 0 as present, so the section needs a Bool.
            isShort: state.fillable < state.open,
            short: state.open - state.fillable,
            inStock: line.inStock,
            shipped: state.shipped,
            done: state.open == 0
        )
    }

    @Sendable func executeOrder(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.pathString("number")
        do {
            _ = try await backoffice.orders.execute(number: number, employeeID: me.employeeID)
            return Response.redirect(to: "/orders/\(number)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try await renderOrder(number: number, error: error.description, status: .conflict, context: context)
        }
    }

    @Sendable func shipAvailable(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.pathString("number")
        let form = try await FormData.read(request, context: context)
        do {
            let shipped = try await backoffice.orders.shipAvailable(number: number, employeeID: me.employeeID, requestKey: form.text("requestKey"))
            return Response.redirect(to: "/orders/\(shipped.orderNumber)/shipments/\(shipped.shipment.sequence)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try await renderOrder(number: number, error: error.description, status: .conflict, context: context)
        }
    }

    @Sendable func cancelOrder(_ request: Request, context: WebContext) async throws -> Response {
        let number = try context.pathString("number")
        do {
            _ = try await backoffice.orders.cancel(number: number)
            return Response.redirect(to: "/orders/\(number)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try await renderOrder(number: number, error: error.description, status: .conflict, context: context)
        }
    }

    @Sendable func newOrder(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        var form = NewOrderForm(customer: request.query("customer") ?? "", employeeID: me.employeeID)
        // The shop's defaults: a shipper number of 0 is none.
        if let shipper = Int(env.setting("orders.defaultShipper")), shipper > 0 { form.shipVia = String(shipper) }
        form.freight = env.setting("orders.defaultFreight")
        return try await renderNewOrder(form, errors: [], status: .ok, context: context)
    }

    func renderNewOrder(_ form: NewOrderForm, errors: [String], status: HTTPResponse.Status, context: WebContext) async throws -> Response {
        let employees = try await backoffice.records.choices(Employee.self)
        let shippers = try await backoffice.records.choices(Shipper.self)
        let blank = NewOrderForm.Line(product: "", productID: "", quantity: "1", discount: "0")
        let model = NewOrderPage(
            form: .init(
                customer: form.customer,
                requiredDate: form.requiredDate,
                freight: form.freight,
                lines: form.lines.isEmpty ? [blank] : form.lines
            ),
            employees: employees.map { ChoiceOption(id: $0.id, name: $0.name, selected: $0.id == form.employeeID) },
            shippers: shippers.map { ChoiceOption(id: $0.id, name: $0.name, selected: String($0.id) == form.shipVia) },
            errors: errors,
            hasErrors: !errors.isEmpty,
            awaitingFullSync: try await backoffice.sync.awaitsFullSyncAfterRestore()
        )
        return render("neworder", model, status: status, context: context)
    }

    @Sendable func createOrder(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let form = NewOrderForm(try await FormData.read(request, context: context))
        do {
            let draft = try form.draft()
            let created = try await backoffice.orders.create(draft)
            return Response.redirect(to: "/orders/\(created.order.number)", type: .normal)
        } catch {
            let messages: [String]
            if case let .invalid(fields) = error {
                messages = fields.map { "\(NewOrderForm.label($0.field)): \($0.message)" }
            } else {
                messages = [error.description]
            }
            return try await renderNewOrder(form, errors: messages, status: .unprocessableContent, context: context)
        }
    }
}
