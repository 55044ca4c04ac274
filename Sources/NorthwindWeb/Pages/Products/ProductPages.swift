import Foundation
import Hummingbird
import Mustache
import Northwind
import NorthwindStore

/// The product list: search, filters, sort and a page of products.
struct ProductsPage: PageModel {
    struct Query {
        var q: String
        var lowStock: Bool
        var discontinued: Bool
    }
    var query: Query
    /// The category filter's options, rendered by their own template and cached (see `categoryOptions`).
    var categoryOptions: String
    var sorts: [SelectOption]
    var products: [ProductView]
    var resultText: String
    var pager: Pager?
    var me: PageUser?
}

/// The category filter's options, rendered alone.
struct CategoryOptions {
    var categories: [ChoiceOption]
}

/// One product, as the list and the product page show it.
struct ProductView {
    var id: Int64
    var name: String
    var categoryID: Int64?
    var categoryName: String
    var supplierName: String
    var quantityPerUnit: String
    var unitPrice: String
    var unitsInStock: Int
    var unitsOnOrder: Int
    var reorderLevel: Int
    var discontinued: Bool
    var lowStock: Bool
    var version: Int

    init(_ row: ProductRow) {
        let product = row.product
        id = product.id ?? 0
        name = product.name
        categoryID = product.categoryID
        categoryName = row.categoryName ?? ""
        supplierName = row.supplierName ?? ""
        quantityPerUnit = product.quantityPerUnit ?? ""
        unitPrice = product.unitPrice.shown
        unitsInStock = product.unitsInStock
        unitsOnOrder = product.unitsOnOrder
        reorderLevel = product.reorderLevel
        discontinued = product.discontinued
        lowStock = row.isLowStock
        version = product.version
    }
}

/// A moment to the minute, as a person reads it: "2026-11-23 09:41".
private func toTheMinute(_ moment: Timestamp) -> String {
    String(moment.description.prefix(16)).replacingOccurrences(of: "T", with: " ")
}

/// One stock movement on the product page.
struct MovementView {
    var createdAt: String
    var reason: String
    var delta: String
    var note: String
    var orderNumber: String?

    init(_ movement: StockMovement, orderNumber: String?) {
        createdAt = toTheMinute(movement.createdAt)
        reason = movement.reason.rawValue
        delta = movement.delta > 0 ? "+\(movement.delta)" : "\(movement.delta)"
        note = movement.note ?? ""
        self.orderNumber = orderNumber
    }
}

/// A transfer of this product still on its way, sent from here or to here.
struct TransitView {
    var id: Int64
    var units: Int
    var from: String
    var to: String
    var sentAt: String
    /// Sent to here: this location books it in.
    var canReceive: Bool

    init(_ status: TransferStatus, here: String) {
        id = status.transfer.id ?? 0
        units = status.transfer.quantity
        from = status.transfer.fromLocation
        to = status.transfer.toLocation
        sentAt = toTheMinute(status.transfer.sentAt)
        canReceive = status.transfer.toLocation == here
    }
}

/// A product with its recent movements, and the edit form for a manager.
struct ProductPage: PageModel {
    var product: ProductView
    /// Every location's stock, when other installations share this catalogue (after `northwind sync join`).
    var locations: [LocationStock]
    var hasLocations: Bool
    /// Transfers of this product sent from or to here and not yet received.
    var transit: [TransitView]
    var hasTransit: Bool
    /// Where this shelf can send units: the other locations (after `northwind sync join`).
    var destinations: [String]
    var hasDestinations: Bool
    /// What the last transfer form did: an error to show, or what was sent or received.
    var transferError: String?
    var transferDone: String?
    var movements: [MovementView]
    var hasMovements: Bool
    var canEdit: Bool
    var saved: Bool
    var conflict: String?
    var form: ProductForm.View?
    var me: PageUser?
}

/// The form for a new product.
struct NewProductPage: PageModel {
    var form: ProductForm.View
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func products(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        var query = ProductQuery()
        query.categoryID = parser.id(request.query("category"), "category")
        query.lowStock = request.query("lowStock") != nil
        if request.query("discontinued") != nil { query.discontinued = true }
        query.sort = request.query("sort").flatMap(ProductQuery.Sort.init(rawValue:)) ?? .name
        query.descending = request.query("desc") != nil
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        query.limit = pageSize
        query.offset = (page - 1) * pageSize
        let text = request.query("q")
        // Search applies the filters and the sort to its first `Catalogue.listSearchCap` matches, and says so.
        query.text = text
        let result = try await backoffice.catalogue.list(query)
        let (shown, total) = (result.items, result.total)
        let model = ProductsPage(
            query: .init(q: text ?? "", lowStock: query.lowStock, discontinued: query.discontinued == true),
            categoryOptions: try await categoryOptions(selected: query.categoryID),
            sorts: ProductQuery.Sort.allCases.map { SelectOption(value: $0.rawValue, label: $0.rawValue.capitalized, selected: $0 == query.sort) },
            products: shown.map(ProductView.init),
            resultText: result.capped
                ? "\(total) of the first \(Catalogue.listSearchCap) matches: add a word to narrow them"
                : total == 1 ? "1 product" : "\(total) products",
            pager: pager(request, page: page, total: total, pageSize: pageSize)
        )
        return render("products", model, context: context)
    }

    /// The category filter's options, rendered (and escaped) by their own template and kept until the store changes.
    /// With hundreds of categories, rendering them was most of the products page's time, the same on every request.
    func categoryOptions(selected: Int64?) async throws -> String {
        let fragment = try await env.cache.body(for: "fragment categoryoptions \(selected ?? 0)") {
            let categories = try await backoffice.records.choices(NorthwindStore.Category.self)
            let fragment = CategoryOptions(categories: categories.map { ChoiceOption(id: $0.id, name: $0.name, selected: $0.id == selected) })
            return ByteBuffer(string: env.templates.render(fragment, withTemplate: "categoryoptions") ?? "")
        }
        return fragment.map { String(buffer: $0) } ?? ""
    }

    @Sendable func product(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        return try await renderProduct(id: id, form: nil, context: context)
    }

    func renderProduct(
        id: Int64,
        form: ProductForm?,
        conflict: String? = nil,
        saved: Bool = false,
        transferError: String? = nil,
        transferDone: String? = nil,
        status: HTTPResponse.Status = .ok,
        context: WebContext
    ) async throws -> Response {
        let row = try backoffice.catalogue.product(id: id)
        let movements = try await backoffice.stock.ledger(productID: id, limit: 20)
        let locations = try await backoffice.stock.byLocation(productID: id)
        let transit = try await backoffice.stock.transfers(productID: id, inTransitOnly: true)
        let (here, destinations) = try await backoffice.stock.locations()
        let canEdit = context.identity.map { env.policy.isManager($0.employee) } ?? false
        let model = ProductPage(
            product: ProductView(row),
            locations: locations,
            hasLocations: locations.count > 1,
            transit: transit.map { TransitView($0, here: here) },
            hasTransit: !transit.isEmpty,
            destinations: destinations,
            hasDestinations: !destinations.isEmpty,
            transferError: transferError,
            transferDone: transferDone,
            movements: movements.map { MovementView($0.movement, orderNumber: $0.orderNumber) },
            hasMovements: !movements.isEmpty,
            canEdit: canEdit,
            saved: saved,
            conflict: conflict,
            form: canEdit ? try await (form ?? ProductForm(row.product)).view(action: "/products/\(id)", backoffice: backoffice) : nil
        )
        return render("product", model, status: status, context: context)
    }

    @Sendable func newProduct(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "add products")
        let form = try await ProductForm(Product(name: "")).view(action: "/products", backoffice: backoffice)
        return render("productnew", NewProductPage(form: form), context: context)
    }

    @Sendable func createProduct(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireManager(env.policy, to: "add products")
        let form = ProductForm(try await FormData.read(request, context: context))
        do {
            let product = try form.product(base: Product(name: ""), allowStock: true)
            let created = try await backoffice.catalogue.create(product, employeeID: me.employeeID)
            return Response.redirect(to: "/products/\(created.id ?? 0)", type: .normal)
        } catch {
            guard case let .invalid(fields) = error else { throw error }
            var form = form
            form.errors = fields
            let view = try await form.view(action: "/products", backoffice: backoffice)
            return render("productnew", NewProductPage(form: view), status: .unprocessableContent, context: context)
        }
    }

    @Sendable func saveProduct(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "edit products")
        let id = try context.pathID()
        var form = ProductForm(try await FormData.read(request, context: context))
        do {
            let current = try backoffice.catalogue.product(id: id).product
            let edited = try form.product(base: current, allowStock: false)
            _ = try await backoffice.catalogue.update(edited)
        } catch {
            switch error {
            case let .invalid(fields):
                form.errors = fields
                return try await renderProduct(id: id, form: form, status: .unprocessableContent, context: context)
            case let .conflict(message):
                return try await renderProduct(id: id, form: form, conflict: message, status: .conflict, context: context)
            default:
                throw error
            }
        }
        return try await renderProduct(id: id, form: nil, saved: true, context: context)
    }
}

extension PageRoutes {
    /// Sends units of the product from this shelf to another location (any signed-in employee, as for execution).
    @Sendable func sendTransfer(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let id = try context.pathID()
        let form = try await FormData.read(request, context: context)
        let sent: TransferStatus
        do throws(NorthwindError) {
            var parser = FieldParser()
            let quantity = parser.int(form.text("quantity"), "quantity", required: true)
            try parser.throwIfAny()
            sent = try await backoffice.stock.send(
                productID: id,
                quantity: quantity ?? 0,
                to: form.text("to") ?? "",
                employeeID: me.employeeID,
                note: form.text("note")
            )
        } catch {
            if case .notFound = error { throw error }
            return try await renderProduct(id: id, form: nil, transferError: error.description, status: .unprocessableContent, context: context)
        }
        let done = "Sent \(sent.transfer.quantity) units to \(sent.transfer.toLocation) (transfer #\(sent.transfer.id ?? 0))."
        return try await renderProduct(id: id, form: nil, transferDone: done, context: context)
    }

    /// Books in a transfer sent to this location, on its product's page.
    @Sendable func receiveTransfer(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let id = try context.pathID()
        let form = try await FormData.read(request, context: context)
        let transfer = try await backoffice.stock.transfer(id: id)
        let received: TransferStatus
        do throws(NorthwindError) {
            var parser = FieldParser()
            let units = parser.int(form.text("units"), "units", required: true)
            try parser.throwIfAny()
            received = try await backoffice.stock.receiveTransfer(id: id, units: units ?? 0, employeeID: me.employeeID, note: form.text("note"))
        } catch {
            if case .notFound = error { throw error }
            return try await renderProduct(
                id: transfer.transfer.productID,
                form: nil,
                transferError: error.description,
                status: { if case .invalid = error { .unprocessableContent } else { .conflict } }(),
                context: context
            )
        }
        let short = received.shortBy > 0 ? ", short by \(received.shortBy)" : ""
        let done = "Received \(received.received ?? 0) units from \(transfer.transfer.fromLocation) (transfer #\(id)\(short))."
        return try await renderProduct(id: transfer.transfer.productID, form: nil, transferDone: done, context: context)
    }
}

// The products page is the busiest page: Mustache finds these by name without reflection, which halves its cost
// (`Mirror` on every variable of every row was most of the render; see docs/performance.md).
extension ProductsPage: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "query": query
        case "categoryOptions": categoryOptions
        case "sorts": sorts
        case "products": products
        case "resultText": resultText
        case "pager": pager
        case "me": me
        default: nil
        }
    }
}

extension ProductsPage.Query: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "q": q
        case "lowStock": lowStock
        case "discontinued": discontinued
        default: nil
        }
    }
}

extension ProductView: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "id": id
        case "name": self.name
        case "categoryID": categoryID
        case "categoryName": categoryName
        case "supplierName": supplierName
        case "quantityPerUnit": quantityPerUnit
        case "unitPrice": unitPrice
        case "unitsInStock": unitsInStock
        case "unitsOnOrder": unitsOnOrder
        case "reorderLevel": reorderLevel
        case "discontinued": discontinued
        case "lowStock": lowStock
        case "version": version
        default: nil
        }
    }
}
