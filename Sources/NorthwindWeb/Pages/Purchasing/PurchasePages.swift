import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// The purchase order list: open ones first, by status, for one supplier or all.
struct PurchasesPage: PageModel {
    var tabs: [OrdersPage.Tab]
    var tab: String
    var suppliers: [ChoiceOption]
    var orders: [PurchaseSummaryView]
    var resultText: String
    var pager: Pager?
    var me: PageUser?
}

/// One purchase order in a list (the list, a supplier's page).
struct PurchaseSummaryView {
    var number: String
    var supplierID: Int64
    var supplierName: String
    var status: String
    var statusLabel: String
    var created: String
    var expectedDate: String
    var lineCount: Int
    var outstanding: Int
    var total: String
    var isLate: Bool
    var uncosted: Bool
    var opening: Bool

    init(_ summary: PurchaseOrderSummary) {
        number = summary.order.number
        supplierID = summary.order.supplierID
        supplierName = summary.supplierName
        status = summary.order.status.rawValue
        statusLabel = summary.order.status.label
        created = LocalDate(summary.order.createdAt.date).description
        expectedDate = summary.order.expectedDate?.description ?? ""
        lineCount = summary.lineCount
        outstanding = summary.outstanding
        total = summary.uncostedLines == summary.lineCount ? "no cost" : summary.total.shown
        isLate = summary.isLate
        uncosted = summary.uncostedLines > 0 && summary.uncostedLines < summary.lineCount
        opening = summary.order.opening
    }
}

/// One purchase order: its lines with what arrived and what is awaited, its receipts, and what may be done next.
struct PurchasePage: PageModel {
    struct Header {
        var number: String
        var status: String
        var statusLabel: String
        var supplierID: Int64
        var supplierName: String
        var created: String
        var sent: String
        var closed: String
        var expectedDate: String
        var note: String
        var opening: Bool
        var isLate: Bool
        var version: Int
    }
    struct Line {
        var productID: Int64
        var productName: String
        var quantity: Int
        var unitCost: String
        /// As the draft's form shows it: blank when there is none.
        var costInput: String
        var received: Int
        var outstanding: Int
        var total: String
    }
    struct Receipt {
        var id: Int64
        var date: String
        var productName: String
        var quantity: Int
        var isReversal: Bool
        var unitCost: String
        var note: String
        /// Optional, as Mustache takes an empty string for present.
        var overReceipt: String?
        var reversed: Bool
        var reversible: Bool
    }
    var order: Header
    var lines: [Line]
    var receipts: [Receipt]
    var hasReceipts: Bool
    var total: String
    var outstanding: Int
    var isDraft: Bool
    var canSend: Bool
    var canCancel: Bool
    var canReceive: Bool
    var printable: Bool
    var awaitingFullSync: Bool
    var requestKey: String
    var receivedBefore: Int
    var error: String?
    var me: PageUser?
}

/// A hand-written purchase order: a supplier, then a quantity and cost for any of its products.
struct NewPurchasePage: PageModel {
    struct Line {
        var productID: Int64
        var productName: String
        var unitsInStock: Int
        var unitsOnOrder: Int
        var reorderLevel: Int
        var quantity: String
        var unitCost: String
    }
    var suppliers: [ChoiceOption]
    var supplierID: Int64?
    var supplierName: String
    var expectedDate: String
    var note: String
    var lines: [Line]
    var hasLines: Bool
    var errors: [String]
    var hasErrors: Bool
    var awaitingFullSync: Bool
    var me: PageUser?
}

/// The reorder proposal: what to order, by supplier, and one action that makes the drafts.
struct ProposalPage: PageModel {
    struct Group {
        var supplierID: Int64
        var supplierName: String
        var leadTime: String
        var lines: [Line]
    }
    struct Line {
        var productID: Int64
        var productName: String
        var unitsInStock: Int
        var unitsOnOrder: Int
        var reorderLevel: Int
        var quantity: Int
        var lastCost: String
    }
    var groups: [Group]
    var isEmpty: Bool
    var targetCover: String
    var awaitingFullSync: Bool
    var me: PageUser?
}

extension PurchaseOrderStatus {
    /// As a badge or a tab shows it.
    var label: String {
        switch self {
        case .draft: "Draft"
        case .sent: "Sent"
        case .partiallyReceived: "Partly received"
        case .received: "Received"
        case .cancelled: "Cancelled"
        }
    }
}

extension PageRoutes {
    func registerPurchasing(on pages: RouterGroup<WebContext>) {
        pages.get("purchases", use: purchases)
        pages.get("purchases/new", use: newPurchase)
        pages.post("purchases", use: createPurchase)
        pages.get("purchases/proposal", use: proposal)
        pages.post("purchases/proposal", use: draftsFromProposal)
        pages.get("purchases/:number", use: purchase)
        pages.post("purchases/:number/send", use: sendPurchase)
        pages.post("purchases/:number/edit", use: editPurchase)
        pages.post("purchases/:number/cancel", use: cancelPurchase)
        pages.post("purchases/:number/delete", use: deletePurchase)
        pages.post("purchases/:number/receive", use: receivePurchase)
        pages.post("purchases/:number/receipts/:id/reverse", use: reverseReceipt)
        pages.get("purchases/:number/print", use: printPurchase)
        pages.get("purchases/:number/package", use: downloadPurchase)
        pages.get("suppliers", use: suppliers)
        pages.get("suppliers/:id", use: supplier)
    }

    /// The list's tabs: what is awaited first, as a buyer looks.
    private static let purchaseTabs: [(key: String, label: String, status: PurchaseOrderStatus?)] = [
        ("open", "Open", nil), ("draft", "Drafts", .draft), ("received", "Received", .received), ("cancelled", "Cancelled", .cancelled),
        ("all", "All", nil),
    ]

    @Sendable func purchases(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let tab = Self.purchaseTabs.first { $0.key == request.query("status") } ?? Self.purchaseTabs[0]
        let supplierID = parser.id(request.query("supplier"), "supplier")
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        var query = PurchaseOrderQuery(status: tab.status, supplierID: supplierID)
        query.awaiting = tab.key == "open"
        query.limit = pageSize
        query.offset = (page - 1) * pageSize
        let result = try await backoffice.purchasing.list(query)
        let supplierFilter = supplierID.map { "&supplier=\($0)" } ?? ""
        let model = PurchasesPage(
            tabs: Self.purchaseTabs.map {
                OrdersPage.Tab(href: "/purchases?status=\($0.key)\(supplierFilter)", label: $0.label, current: $0.key == tab.key)
            },
            tab: tab.key,
            suppliers: try await backoffice.records.choices(Supplier.self).map {
                ChoiceOption(id: $0.id, name: $0.name, selected: $0.id == supplierID)
            },
            orders: result.items.map(PurchaseSummaryView.init),
            resultText: result.total == 1 ? "1 purchase order" : "\(result.total) purchase orders",
            pager: pager(request, page: page, total: result.total, pageSize: pageSize)
        )
        return render("purchases", model, context: context)
    }

    @Sendable func purchase(_ request: Request, context: WebContext) async throws -> Response {
        try await renderPurchase(number: try context.pathString("number"), error: nil, context: context)
    }

    func renderPurchase(
        number: String,
        error: String?,
        status: HTTPResponse.Status = .ok,
        context: WebContext
    ) async throws -> Response {
        let detail = try await backoffice.purchasing.purchaseOrder(number: number)
        let awaitingFullSync = try await backoffice.sync.awaitsFullSyncAfterRestore()
        let isManager = context.identity.map { env.policy.isManager($0.employee) } ?? false
        let order = detail.order
        let awaiting = order.status == .sent || order.status == .partiallyReceived
        let model = PurchasePage(
            order: .init(
                number: order.number,
                status: order.status.rawValue,
                statusLabel: order.status.label,
                supplierID: order.supplierID,
                supplierName: detail.supplierName,
                created: LocalDate(order.createdAt.date).description,
                sent: order.sentAt.map { LocalDate($0.date).description } ?? "",
                closed: order.closedAt.map { LocalDate($0.date).description } ?? "",
                expectedDate: order.expectedDate?.description ?? "",
                note: order.note ?? "",
                opening: order.opening,
                isLate: detail.isLate,
                version: order.version
            ),
            lines: detail.lines.map { state in
                PurchasePage.Line(
                    productID: state.line.productID,
                    productName: state.productName,
                    quantity: state.line.quantity,
                    unitCost: state.line.unitCost?.shown ?? "no cost",
                    costInput: state.line.unitCost?.description ?? "",
                    received: state.received,
                    outstanding: state.outstanding,
                    total: state.value?.shown ?? ""
                )
            },
            receipts: detail.receipts.map { entry in
                let movement = entry.movement
                return PurchasePage.Receipt(
                    id: movement.id ?? 0,
                    date: LocalDate(movement.createdAt.date).description,
                    productName: entry.productName,
                    quantity: movement.delta,
                    isReversal: movement.reason == .receiptReversal,
                    unitCost: movement.unitCost?.shown ?? "no cost",
                    note: movement.note ?? "",
                    overReceipt: movement.overReceipt,
                    reversed: entry.reversed,
                    reversible: isManager && !awaitingFullSync && movement.reason == .purchaseReceipt && !entry.reversed
                        && order.location == nil
                )
            },
            hasReceipts: !detail.receipts.isEmpty,
            // "no cost" rather than 0 when no line has one (an opening order, a draft not yet priced).
            total: detail.value?.shown ?? "no cost",
            outstanding: detail.outstanding,
            isDraft: order.status == .draft && order.location == nil,
            canSend: order.status == .draft && order.location == nil && isManager && !awaitingFullSync,
            canCancel: (order.status == .draft || awaiting) && order.location == nil && isManager && !awaitingFullSync,
            canReceive: awaiting && !awaitingFullSync && order.location == nil,
            printable: order.sentAt != nil,
            awaitingFullSync: awaitingFullSync,
            requestKey: UUID().uuidString.lowercased(),
            receivedBefore: detail.lines.reduce(0) { $0 + $1.received },
            error: error
        )
        return render("purchase", model, status: status, context: context)
    }

    /// Runs an action on a purchase order and shows the order again: on success by redirect, on a refusal with
    /// the message (409, or 422 for a bad field).
    private func purchaseAction(
        _ number: String,
        context: WebContext,
        _ action: () async throws(NorthwindError) -> Void
    ) async throws -> Response {
        do {
            try await action()
            return Response.redirect(to: "/purchases/\(number)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            let status: HTTPResponse.Status = if case .invalid = error { .unprocessableContent } else { .conflict }
            // A fresh form key: the refused request booked nothing under its own.
            return try await renderPurchase(number: number, error: error.description, status: status, context: context)
        }
    }

    @Sendable func sendPurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "send purchase orders")
        let number = try context.pathString("number")
        return try await purchaseAction(number, context: context) { () throws(NorthwindError) in
            _ = try await backoffice.purchasing.send(number: number)
        }
    }

    /// A draft's lines, date and note as edited on its page: a quantity left blank (or 0) drops the line. The
    /// version read with the page refuses a save over someone else's.
    @Sendable func editPurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let number = try context.pathString("number")
        let form = try await FormData.read(request, context: context)
        var parser = FieldParser()
        let expected = parser.date(form.text("expectedDate"), "expected date")
        let version = parser.int(form.text("version"), "version", required: true, in: 0...Int.max)
        let lines = Self.lines(form, &parser)
        return try await purchaseAction(number, context: context) { () throws(NorthwindError) in
            try parser.throwIfAny()
            let current = try await backoffice.purchasing.purchaseOrder(number: number).order
            let draft = PurchaseOrderDraft(supplierID: current.supplierID, expectedDate: expected, note: form.text("note"), lines: lines)
            _ = try await backoffice.purchasing.update(number: number, draft, expectedVersion: version)
        }
    }

    /// The lines a purchase order form holds: `productID`, `quantity` and `unitCost` by row; a row with no quantity is
    /// no line. Errors name the row as the form shows it.
    static func lines(_ form: FormData, _ parser: inout FieldParser) -> [PurchaseLineDraft] {
        let quantities = form.all("quantity")
        let costs = form.all("unitCost")
        var lines: [PurchaseLineDraft] = []
        for (index, product) in form.all("productID").enumerated() {
            let quantityText = index < quantities.count ? quantities[index].trimmingCharacters(in: .whitespaces) : ""
            guard let productID = Int64(product), !quantityText.isEmpty, quantityText != "0" else { continue }
            let name = "line \(index + 1)"
            let quantity = parser.int(quantityText, name + " quantity", required: true, in: Limits.lineQuantity)
            let cost = parser.money(index < costs.count ? costs[index] : "", name + " unit cost")
            if let quantity { lines.append(PurchaseLineDraft(productID: productID, quantity: quantity, unitCost: cost)) }
        }
        return lines
    }

    @Sendable func cancelPurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "cancel purchase orders")
        let number = try context.pathString("number")
        return try await purchaseAction(number, context: context) { () throws(NorthwindError) in
            _ = try await backoffice.purchasing.cancel(number: number)
        }
    }

    @Sendable func deletePurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let number = try context.pathString("number")
        do {
            try await backoffice.purchasing.delete(number: number)
            return Response.redirect(to: "/purchases?status=draft", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try await renderPurchase(number: number, error: error.description, status: .conflict, context: context)
        }
    }

    /// A delivery counted in: a quantity per product (blank is none), a reason where it is more than awaited, the
    /// form's own key, so a second click books nothing more, and what the order had received when the form was
    /// read, so a colleague's delivery booked meanwhile is not booked again against a stale "awaited".
    @Sendable func receivePurchase(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.pathString("number")
        let form = try await FormData.read(request, context: context)
        let key = form.text("requestKey") ?? ""
        var parser = FieldParser()
        let receivedBefore = parser.int(form.text("receivedBefore"), "receivedBefore", in: 0...Int.max)
        var lines: [ReceiptLine] = []
        var names: [String] = []
        let detail = try await backoffice.purchasing.purchaseOrder(number: number)
        for state in detail.lines {
            let id = state.line.productID
            guard let quantity = parser.int(form.text("quantity-\(id)"), state.productName, in: 0...Limits.lineQuantity.upperBound), quantity > 0
            else { continue }
            lines.append(ReceiptLine(productID: id, quantity: quantity, overReceipt: form.text("overReceipt-\(id)")))
            names.append(state.productName)
        }
        if parser.errors.isEmpty && lines.isEmpty { parser.errors.append(.init("Arrived", "enter what arrived on at least one line")) }
        return try await purchaseAction(number, context: context) { () throws(NorthwindError) in
            try parser.throwIfAny()
            do throws(NorthwindError) {
                _ = try await backoffice.purchasing.receive(
                    number: number,
                    lines: lines,
                    requestKey: key,
                    employeeID: me.employeeID,
                    note: form.text("note"),
                    receivedBefore: receivedBefore
                )
            } catch {
                // The domain names lines by their place among those booked: the page names the product.
                guard case .invalid(let fields) = error else { throw error }
                throw NorthwindError.invalid(
                    fields.map { field in
                        guard let match = field.field.firstMatch(of: /^lines\[(\d+)\]\.(\w+)$/), let index = Int(match.1), index < names.count
                        else { return field }
                        return .init(match.2 == "overReceipt" ? "\(names[index]) (reason)" : names[index], field.message)
                    }
                )
            }
        }
    }

    @Sendable func reverseReceipt(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireManager(env.policy, to: "reverse receipts")
        let number = try context.pathString("number")
        let id = try context.pathID()
        let form = try await FormData.read(request, context: context)
        guard try await backoffice.purchasing.purchaseOrder(number: number).receipts.contains(where: { $0.movement.id == id }) else {
            throw WebError.notFound("Purchase order \(number) has no receipt #\(id).")
        }
        return try await purchaseAction(number, context: context) { () throws(NorthwindError) in
            _ = try await backoffice.purchasing.reverse(receiptID: id, employeeID: me.employeeID, note: form.text("note"))
        }
    }

    @Sendable func printPurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let html = try await backoffice.documents.purchaseOrderRendition(number: try context.pathString("number"))
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        // The rendition has no script; it may not load one either.
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: html)))
    }

    @Sendable func downloadPurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let number = try context.pathString("number")
        return try await download("purchase-order-\(number).nwdoc", kind: .purchaseOrder) { file in
            try await backoffice.documents.exportPurchaseOrder(number: number, to: file)
        }
    }

    // MARK: Writing one by hand, and from the proposal

    @Sendable func newPurchase(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        var parser = FieldParser()
        let supplierID = parser.id(request.query("supplier"), "supplier")
        try parser.throwIfAny()
        return try await renderNewPurchase(supplierID: supplierID, form: nil, errors: [], status: .ok, context: context)
    }

    func renderNewPurchase(
        supplierID: Int64?,
        form: FormData?,
        errors: [String],
        status: HTTPResponse.Status,
        context: WebContext
    ) async throws -> Response {
        let suppliers = try await backoffice.records.choices(Supplier.self)
        var lines: [NewPurchasePage.Line] = []
        var supplierName = ""
        if let supplierID {
            supplierName = try backoffice.records.find(Supplier.self, id: supplierID).companyName
            var query = ProductQuery()
            query.supplierID = supplierID
            query.discontinued = false
            query.limit = 200
            let typed = Dictionary(
                zip(form?.all("productID") ?? [], zip(form?.all("quantity") ?? [], form?.all("unitCost") ?? [])),
                uniquingKeysWith: { first, _ in first }
            )
            lines = try await backoffice.catalogue.list(query).items.map { row in
                let id = row.product.id ?? 0
                return NewPurchasePage.Line(
                    productID: id,
                    productName: row.product.name,
                    unitsInStock: row.product.unitsInStock,
                    unitsOnOrder: row.product.unitsOnOrder,
                    reorderLevel: row.product.reorderLevel,
                    quantity: typed[String(id)]?.0 ?? "",
                    unitCost: typed[String(id)]?.1 ?? ""
                )
            }
        }
        let model = NewPurchasePage(
            suppliers: suppliers.map { ChoiceOption(id: $0.id, name: $0.name, selected: $0.id == supplierID) },
            supplierID: supplierID,
            supplierName: supplierName,
            expectedDate: form?.text("expectedDate") ?? LocalDate.today.adding(days: 14).description,
            note: form?.text("note") ?? "",
            lines: lines,
            hasLines: !lines.isEmpty,
            errors: errors,
            hasErrors: !errors.isEmpty,
            awaitingFullSync: try await backoffice.sync.awaitsFullSyncAfterRestore()
        )
        return render("purchasenew", model, status: status, context: context)
    }

    @Sendable func createPurchase(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let form = try await FormData.read(request, context: context)
        var parser = FieldParser()
        let supplierID = parser.id(form.text("supplierID"), "supplier", blankAllowed: false)
        let expected = parser.date(form.text("expectedDate"), "expected date")
        let lines = Self.lines(form, &parser)
        if parser.errors.isEmpty && lines.isEmpty && supplierID != nil {
            parser.errors.append(.init("lines", "enter a quantity for at least one product"))
        }
        let send = form.text("send") != nil
        do {
            try parser.throwIfAny()
            if send { _ = try context.requireManager(env.policy, to: "send purchase orders") }
            let draft = PurchaseOrderDraft(supplierID: supplierID ?? 0, expectedDate: expected, note: form.text("note"), lines: lines)
            let created = try await backoffice.purchasing.create(draft, employeeID: me.employeeID, send: send)
            return Response.redirect(to: "/purchases/\(created.order.number)", type: .normal)
        } catch let error as NorthwindError {
            let messages: [String] =
                if case let .invalid(fields) = error {
                    fields.map { "\($0.field.prefix(1).uppercased() + $0.field.dropFirst()): \($0.message)" }
                } else {
                    [error.description]
                }
            return try await renderNewPurchase(supplierID: supplierID, form: form, errors: messages, status: .unprocessableContent, context: context)
        }
    }

    @Sendable func proposal(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let groups = try await backoffice.purchasing.proposal().map { proposal in
            ProposalPage.Group(
                supplierID: proposal.supplierID,
                supplierName: proposal.supplierName,
                leadTime: proposal.leadTimeDays.map { String(format: "%.1f days", $0) } ?? "not known yet",
                lines: proposal.lines.map { line in
                    ProposalPage.Line(
                        productID: line.productID,
                        productName: line.productName,
                        unitsInStock: line.unitsInStock,
                        unitsOnOrder: line.unitsOnOrder,
                        reorderLevel: line.reorderLevel,
                        quantity: line.quantity,
                        lastCost: line.lastCost?.shown ?? "no cost"
                    )
                }
            )
        }
        let model = ProposalPage(
            groups: groups,
            isEmpty: groups.isEmpty,
            targetCover: env.setting("purchasing.targetCover"),
            awaitingFullSync: try await backoffice.sync.awaitsFullSyncAfterRestore()
        )
        return render("proposal", model, context: context)
    }

    @Sendable func draftsFromProposal(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        _ = try await backoffice.purchasing.draftsFromProposal(employeeID: me.employeeID)
        return Response.redirect(to: "/purchases?status=draft", type: .normal)
    }
}
