import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// A shipment's packing slip: what left, to whom, on which day.
struct ShipmentPage: PageModel {
    struct Line {
        var productID: Int64
        var productName: String
        var quantity: Int
    }
    var orderNumber: String
    var sequence: Int
    var shippedDate: String
    var customerName: String
    var customerCode: String
    var shipTo: String
    var orderStatus: String
    var orderStatusLabel: String
    var lines: [Line]
    var invoice: InvoiceLink?
    /// What can still come back, line by line: the return form's rows.
    var returnable: [Returnable]
    /// Stored, as templates read stored properties only.
    var canReturn = false
    var returns: [ReturnRef]
    var hasReturns = false
    /// The return form's own key: sent twice, it books once.
    var requestKey: String
    var error: String?
    var me: PageUser?

    struct Returnable {
        var productID: Int64
        var productName: String
        var left: Int
    }
    struct ReturnRef {
        var sequence: Int
        var returnedDate: String
        var contents: String
        var reason: String?
        var creditNote: InvoiceLink?
    }
}

/// The backorder queue: what customers still wait for, what can ship now, and what is on its way.
struct BackordersPage: PageModel {
    struct Line {
        var orderNumber: String
        var customerName: String
        var requiredDate: String
        var productID: Int64
        var productName: String
        var open: Int
        var fillable: Int
        var fillableAll: Bool
        var fillableSome: Bool
        var coveredBy: CoveringPurchaseView?
        /// Another site ships it.
        var site: String?
    }
    struct CoveringPurchaseView {
        var number: String
        var expectedDate: String?
    }
    var lines: [Line]
    var resultText: String
    /// "2 orders can now ship in full", or nil.
    var fillableOrders: String?
    var pager: Pager?
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func shipmentSlip(_ request: Request, context: WebContext) async throws -> Response {
        guard let sequence = Int(try context.pathString("sequence")) else { throw WebError.notFound("That address names no shipment.") }
        return try await renderShipment(number: try context.pathString("number"), sequence: sequence, error: nil, status: .ok, context: context)
    }

    func renderShipment(number: String, sequence: Int, error: String?, status: HTTPResponse.Status, context: WebContext) async throws -> Response {
        let shipment = try await backoffice.orders.shipment(orderNumber: number, sequence: sequence)
        let detail = try await backoffice.orders.order(number: shipment.orderNumber)
        let issued = try await backoffice.invoicing.invoices(orderNumber: shipment.orderNumber, limit: 1000)
        let returns = try await backoffice.invoicing.returns(orderNumber: shipment.orderNumber).filter { $0.shipmentSequence == sequence }
        func link(_ number: String?) -> InvoiceLink? {
            number.flatMap { number in issued.first { $0.number == number }.map { InvoiceLink(number: number, href: $0.href) } }
        }
        let o = detail.order
        let returnable: [ShipmentPage.Returnable] = shipment.lines.compactMap { line in
            let back = returns.flatMap(\.lines).filter { $0.productID == line.productID }.map(\.quantity).reduce(0, +)
            return line.quantity > back ? .init(productID: line.productID, productName: line.productName, left: line.quantity - back) : nil
        }
        let model = ShipmentPage(
            orderNumber: shipment.orderNumber,
            sequence: shipment.shipment.sequence,
            shippedDate: shipment.shipment.shippedDate.description,
            customerName: detail.customer.companyName,
            customerCode: detail.customer.code,
            shipTo: [o.shipName, o.shipAddress, o.shipCity, o.shipPostalCode, o.shipCountry].compactMap { $0 }.joined(separator: ", "),
            orderStatus: shipment.orderStatus.rawValue,
            orderStatusLabel: shipment.orderStatus.words.prefix(1).uppercased() + shipment.orderStatus.words.dropFirst(),
            lines: shipment.lines.map { .init(productID: $0.productID, productName: $0.productName, quantity: $0.quantity) },
            invoice: link(shipment.invoiceNumber),
            returnable: returnable,
            canReturn: !returnable.isEmpty,
            returns: returns.map {
                .init(
                    sequence: $0.returned.sequence,
                    returnedDate: $0.returned.returnedDate.description,
                    contents: $0.lines.map { "\($0.quantity) × \($0.productName)" }.joined(separator: ", "),
                    reason: $0.returned.reason,
                    creditNote: link($0.creditNoteNumber)
                )
            },
            hasReturns: !returns.isEmpty,
            requestKey: UUID().uuidString.lowercased(),
            error: error
        )
        return render("shipment", model, status: status, context: context)
    }

    @Sendable func backorders(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        let result = try await backoffice.orders.backorders(limit: pageSize, offset: (page - 1) * pageSize)
        let ready = try await backoffice.orders.backorderedOrdersFillableNow()
        let model = BackordersPage(
            lines: result.items.map { item in
                BackordersPage.Line(
                    orderNumber: item.orderNumber,
                    customerName: item.customerName,
                    requiredDate: item.requiredDate?.description ?? "",
                    productID: item.line.productID,
                    productName: item.line.productName,
                    open: item.line.open,
                    fillable: item.line.fillable,
                    fillableAll: item.line.fillable == item.line.open,
                    fillableSome: item.line.fillable > 0,
                    coveredBy: item.coveredBy.map { .init(number: $0.number, expectedDate: $0.expectedDate?.description) },
                    site: item.site
                )
            },
            resultText: result.total == 1 ? "1 backordered line" : "\(result.total) backordered lines",
            fillableOrders: ready == 0 ? nil : ready == 1 ? "1 order can now ship in full" : "\(ready) orders can now ship in full",
            pager: pager(request, page: page, total: result.total, pageSize: pageSize)
        )
        return render("backorders", model, context: context)
    }
}
