import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// An invoice or credit note as issued, in the app's frame; its printable rendition is one link away.
struct InvoicePage: PageModel {
    var document: InvoiceRendition
    var path: String
    /// The invoice a credit note corrects, and the credit notes of an invoice, with their pages.
    var correctsLink: InvoiceLink?
    var creditNotes: [InvoiceLink]
    /// Stored, as templates read stored properties only.
    var hasCreditNotes = false
    var me: PageUser?
}

/// A link to an issued document: its number and its page.
struct InvoiceLink {
    var number: String
    var href: String
}

/// Invoices and credit notes: all of them, or one customer's.
struct InvoicesPage: PageModel {
    struct Row {
        var kind: String
        var number: String
        var href: String
        var issuedDate: String
        var orderNumber: String
        var customerCode: String
        var customerName: String
        var net: String
        var tax: String
        var gross: String
        var corrects: String?
    }
    var heading: String
    var customerCode: String?
    var rows: [Row]
    var hasRows = false
    var pager: Pager?
    var me: PageUser?
}

extension InvoiceSummary {
    /// The page of the document.
    var href: String { InvoicePaths.path(kind: kind, site: site, year: year, counter: counter) }
}

enum InvoicePaths {
    static func path(kind: InvoiceKind, site: String, year: Int, counter: Int) -> String {
        let escaped = site.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? site
        return "/invoices/\(kind == .invoice ? "invoice" : "credit-note")/\(escaped)/\(year)/\(counter)"
    }
}

extension PageRoutes {
    func registerInvoices(on pages: RouterGroup<WebContext>) {
        pages.get("invoices", use: invoices)
        pages.get("customers/:code/invoices", use: invoices)
        pages.get("invoices/:kind/:site/:year/:counter", use: invoicePage)
        pages.get("invoices/:kind/:site/:year/:counter/print", use: printInvoice)
        pages.get("invoices/:kind/:site/:year/:counter/package", use: downloadInvoice)
        pages.post("orders/:number/shipments/:sequence/returns", use: takeReturn)
    }

    func invoiceKey(_ context: WebContext) throws -> (InvoiceKind, String, Int, Int) {
        let kind: InvoiceKind
        switch try context.pathString("kind") {
        case "invoice": kind = .invoice
        case "credit-note": kind = .creditNote
        default: throw WebError.notFound("That address names no invoice or credit note.")
        }
        guard let year = Int(try context.pathString("year")), let counter = Int(try context.pathString("counter")) else {
            throw WebError.notFound("That address names no invoice or credit note.")
        }
        return (kind, try context.pathString("site"), year, counter)
    }

    @Sendable func invoicePage(_ request: Request, context: WebContext) async throws -> Response {
        let (kind, site, year, counter) = try invoiceKey(context)
        let detail = try await backoffice.invoicing.invoice(kind: kind, site: site, year: year, counter: counter)
        let related = try await backoffice.invoicing.invoices(orderNumber: detail.orderNumber, limit: 1000)
        func link(_ number: String) -> InvoiceLink? {
            related.first { $0.number == number }.map { InvoiceLink(number: number, href: $0.href) }
        }
        let model = InvoicePage(
            document: InvoiceRendition(detail),
            path: InvoicePaths.path(kind: kind, site: site, year: year, counter: counter),
            correctsLink: detail.corrects.flatMap(link),
            creditNotes: detail.creditNotes.compactMap(link),
            hasCreditNotes: !detail.creditNotes.isEmpty
        )
        return render("invoice", model, context: context)
    }

    /// The rendition stored when the document was issued, byte for byte.
    @Sendable func printInvoice(_ request: Request, context: WebContext) async throws -> Response {
        let (kind, site, year, counter) = try invoiceKey(context)
        let html = try await backoffice.invoicing.rendition(kind: kind, site: site, year: year, counter: counter)
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        // The rendition has no script; it may not load one either.
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: html)))
    }

    @Sendable func downloadInvoice(_ request: Request, context: WebContext) async throws -> Response {
        let (kind, site, year, counter) = try invoiceKey(context)
        let number = try await backoffice.invoicing.invoice(kind: kind, site: site, year: year, counter: counter).invoice.number
        let name = "\(kind == .invoice ? "invoice" : "credit-note")-\(site)-\(year)-\(counter).nwdoc"
        return try await download(name, kind: kind == .invoice ? .invoice : .creditNote) { file in
            try await backoffice.documents.exportInvoice(number: number, kind: kind, to: file)
        }
    }

    @Sendable func invoices(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        let code = context.parameters.get("code") ?? request.query("customer")
        let customer = try code.map { code throws(NorthwindError) in try backoffice.people.customer(code: code) }
        // One more than a page says whether another page follows.
        let list = try await backoffice.invoicing.invoices(customerCode: customer?.code, limit: pageSize + 1, offset: (page - 1) * pageSize)
        let model = InvoicesPage(
            heading: customer.map { "Invoices of \($0.companyName)" } ?? "Invoices and credit notes",
            customerCode: customer?.code,
            rows: list.prefix(pageSize).map {
                InvoicesPage.Row(
                    kind: $0.kind.words,
                    number: $0.number,
                    href: $0.href,
                    issuedDate: $0.issuedDate.description,
                    orderNumber: $0.orderNumber,
                    customerCode: $0.customerCode,
                    customerName: $0.customerName,
                    net: $0.net.description,
                    tax: $0.tax.description,
                    gross: $0.gross.description,
                    corrects: $0.corrects
                )
            },
            hasRows: !list.isEmpty,
            pager: pager(request, page: page, total: (page - 1) * pageSize + list.count, pageSize: pageSize)
        )
        return render("invoices", model, context: context)
    }

    @Sendable func takeReturn(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.pathString("number")
        guard let sequence = Int(try context.pathString("sequence")) else { throw WebError.notFound("That address names no shipment.") }
        let form = try await FormData.read(request, context: context)
        let shipment = try await backoffice.orders.shipment(orderNumber: number, sequence: sequence)
        var lines: [ShipLine] = []
        var errors: [NorthwindError.FieldError] = []
        for line in shipment.lines {
            let text = form.text("quantity-\(line.productID)")?.trimmingCharacters(in: .whitespaces) ?? ""
            guard !text.isEmpty, text != "0" else { continue }
            guard let quantity = Int(text), quantity > 0 else {
                errors.append(.init("quantity-\(line.productID)", "must be a whole number of units, not '\(text)'"))
                continue
            }
            lines.append(ShipLine(productID: line.productID, quantity: quantity))
        }
        do throws(NorthwindError) {
            try errors.throwIfAny()
            if lines.isEmpty { throw .invalid("lines", "say how many units of at least one product came back") }
            let returned = try await backoffice.invoicing.takeReturn(
                orderNumber: number,
                shipmentSequence: sequence,
                lines: lines,
                reason: form.text("reason"),
                employeeID: me.employeeID,
                requestKey: form.text("requestKey")
            )
            return Response.redirect(to: "/orders/\(returned.orderNumber)/shipments/\(sequence)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try await renderShipment(
                number: number,
                sequence: sequence,
                error: error.description,
                status: .unprocessableContent,
                context: context
            )
        }
    }
}
