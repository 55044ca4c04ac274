import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// `/api/v1`: everything the pages do, with the same rules and permissions, as JSON. Money is a decimal string
/// ("18.00") so no client rounds it through binary floating point. Errors are RFC 9457 problem details.
struct APIRoutes: Sendable {
    let env: WebEnvironment
    init(_ env: WebEnvironment) { self.env = env }
    var backoffice: Backoffice { env.backoffice }
    var policy: AccessPolicy { env.options.policy }

    func register(on api: RouterGroup<WebContext>) {
        let v1 = api.group("v1").add(middleware: ProblemMiddleware()).add(middleware: RequireAPISignIn())
            .add(middleware: CSRFCheck()).add(middleware: SingleParameters())
        v1.get("me") { _, context in try me(context) }
        v1.get("summary") { _, _ in try Summary(backoffice.shopSummary()) }

        registerReports(on: v1)
        v1.get("products", use: listProducts)
        v1.get("products/search", use: searchProducts)
        v1.get("products/:id") { _, context in ProductBody(try backoffice.product(id: try context.pathID())) }
        v1.post("products", use: createProduct)
        v1.patch("products/:id", use: updateProduct)
        v1.delete("products/:id") { _, context -> Response in
            _ = try context.requireManager(policy, to: "delete products")
            try await backoffice.deleteProduct(id: try context.pathID())
            return Response(status: .noContent)
        }
        v1.get("products/:id/movements") { _, context in
            let id = try context.pathID()
            _ = try backoffice.product(id: id)
            return Items(items: try backoffice.stockMovements(productID: id, limit: 100).map(MovementBody.init))
        }

        v1.get("orders", use: listOrders)
        v1.get("orders/:number") { _, context in OrderBody(try backoffice.order(number: try context.pathString("number"))) }
        v1.post("orders", use: createOrder)
        v1.post("orders/:number/execute") { _, context in
            let me = try context.requireSignIn()
            return OrderBody(try await backoffice.executeOrder(number: try context.pathString("number"), employeeID: me.employeeID))
        }
        v1.post("orders/:number/cancel") { _, context in
            OrderBody(try await backoffice.cancelOrder(number: try context.pathString("number")))
        }

        v1.get("customers") { request, _ in
            let (limit, offset) = (try limitParameter(request), try offsetParameter(request))
            if let text = request.query("q") {
                // A lookup lists the best matches only, so it has no later pages to skip to.
                guard offset == 0 else { throw NorthwindError.invalid("offset", "must be 0 with q: a lookup has one page") }
                let found = try backoffice.searchCustomers(text, limit: limit).map(RecordBody.init)
                return ItemsPage(Page(items: found, total: -1, offset: 0, limit: limit))
            }
            return ItemsPage(try backoffice.list(Customer.self, limit: limit, offset: offset).map(RecordBody.init))
        }
        v1.get("customers/:code") { _, context in RecordBody(try backoffice.customer(code: try context.pathString("code"))) }
        v1.post("customers") { request, context -> EditedResponse<RecordBody<Customer>> in
            let customer: Customer = try await decodeNew(request, context: context)
            return EditedResponse(status: .created, response: RecordBody(try await backoffice.create(customer)))
        }

        registerManaged(NorthwindStore.Category.self, path: "categories", on: v1, managersOnly: true)
        registerManaged(Supplier.self, path: "suppliers", on: v1, managersOnly: true)
        v1.get("employees") { request, _ in
            ItemsPage(
                try backoffice.list(Employee.self, limit: try limitParameter(request), offset: try offsetParameter(request)).map(RecordBody.init)
            )
        }
        v1.get("employees/:id") { _, context in RecordBody(try backoffice.find(Employee.self, id: try context.pathID())) }
        v1.get("shippers") { request, _ in
            ItemsPage(
                try backoffice.list(Shipper.self, limit: try limitParameter(request), offset: try offsetParameter(request)).map(RecordBody.init)
            )
        }
    }

    // MARK: Products

    @Sendable func listProducts(_ request: Request, context: WebContext) async throws -> ItemsPage<ProductBody> {
        var query = ProductQuery()
        var parser = FieldParser()
        query.categoryID = parser.id(request.parameter("categoryID"), "categoryID", blankAllowed: false)
        query.supplierID = parser.id(request.parameter("supplierID"), "supplierID", blankAllowed: false)
        query.lowStock = try bool(request, "lowStock") ?? false
        query.discontinued = try bool(request, "discontinued")
        if let sort = request.parameter("sort") {
            guard let value = ProductQuery.Sort(rawValue: sort) else {
                throw NorthwindError.invalid("sort", "must be one of \(ProductQuery.Sort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            query.sort = value
        }
        query.descending = try bool(request, "desc") ?? false
        try parser.throwIfAny()
        query.limit = try limitParameter(request)
        query.offset = try offsetParameter(request)
        let page = try backoffice.listProducts(query)
        return ItemsPage(Page(items: page.items.map(ProductBody.init), total: page.total, offset: page.offset, limit: page.limit))
    }

    /// Answers from `ResponseCache` while the store is unchanged: every till asks for the same prefixes.
    @Sendable func searchProducts(_ request: Request, context: WebContext) async throws -> Response {
        guard let text = request.query("q") else { throw NorthwindError.invalid("q", "is required: part of a product name") }
        let limit = try limitParameter(request, default: 20)
        let body = try env.cache.body(for: "products/search \(limit) \(text)") {
            ByteBuffer(bytes: try JSONEncoder().encode(Items(items: try backoffice.searchProducts(text, limit: limit).map(ProductBody.init))))
        }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    @Sendable func createProduct(_ request: Request, context: WebContext) async throws -> EditedResponse<ProductBody> {
        let me = try context.requireManager(policy, to: "add products")
        let input = try await request.decodeStrictly(as: ProductInput.self, context: context)
        if input.version != nil { throw NorthwindError.invalid("version", "is not a field of a new product: the server gives it") }
        var product = Product(name: input.name ?? "")
        try input.apply(to: &product, creating: true)
        let created = try await backoffice.createProduct(product, employeeID: me.employeeID)
        return EditedResponse(status: .created, response: ProductBody(try backoffice.product(id: created.id ?? 0)))
    }

    @Sendable func updateProduct(_ request: Request, context: WebContext) async throws -> ProductBody {
        _ = try context.requireManager(policy, to: "edit products")
        let id = try context.pathID()
        let input = try await request.decodeStrictly(as: ProductInput.self, context: context)
        guard let version = input.version else {
            throw NorthwindError.invalid("version", "is required: send the version you read, so nobody's edit is lost")
        }
        var product = try backoffice.product(id: id).product
        try input.apply(to: &product, creating: false)
        product.version = version
        _ = try await backoffice.updateProduct(product)
        return ProductBody(try backoffice.product(id: id))
    }

    // MARK: Orders

    @Sendable func listOrders(_ request: Request, context: WebContext) async throws -> ItemsPage<OrderSummaryBody> {
        var query = OrderQuery()
        if let status = request.parameter("status") {
            guard let value = OrderStatus(rawValue: status) else {
                throw NorthwindError.invalid("status", "must be one of new, shipped, cancelled")
            }
            query.status = value
        }
        query.search = request.query("q")
        query.customerCode = request.query("customer")
        query.limit = try limitParameter(request)
        query.offset = try offsetParameter(request)
        let page = try backoffice.listOrders(query)
        return ItemsPage(
            Page(
                items: page.items.map(OrderSummaryBody.init),
                total: page.total,
                offset: page.offset,
                limit: page.limit
            )
        )
    }

    @Sendable func createOrder(_ request: Request, context: WebContext) async throws -> EditedResponse<OrderBody> {
        let me = try context.requireSignIn()
        let input = try await request.decodeStrictly(as: OrderInput.self, context: context)
        let created = try await backoffice.createOrder(try input.draft(defaultEmployee: me.employeeID))
        return EditedResponse(status: .created, response: OrderBody(created))
    }

    // MARK: Categories and suppliers

    func registerManaged<R: ManagedRecord>(
        _ type: R.Type,
        path: String,
        on group: RouterGroup<WebContext>,
        managersOnly: Bool
    ) {
        let plural = path
        group.get(RouterPath(path)) { request, _ in
            ItemsPage(try backoffice.list(R.self, limit: try limitParameter(request), offset: try offsetParameter(request)).map(RecordBody.init))
        }
        group.get(RouterPath(path + "/:id")) { _, context in RecordBody(try backoffice.find(R.self, id: try context.pathID())) }
        group.post(RouterPath(path)) { request, context -> EditedResponse<RecordBody<R>> in
            if managersOnly { _ = try context.requireManager(policy, to: "add \(plural)") }
            let record: R = try await decodeNew(request, context: context)
            return EditedResponse(status: .created, response: RecordBody(try await backoffice.create(record)))
        }
        group.patch(RouterPath(path + "/:id")) { request, context -> RecordBody<R> in
            if managersOnly { _ = try context.requireManager(policy, to: "edit \(plural)") }
            let id = try context.pathID()
            let current = try backoffice.find(R.self, id: id)
            let merged: R = try await merge(current, with: request, context: context)
            return RecordBody(try await backoffice.update(merged))
        }
        group.delete(RouterPath(path + "/:id")) { _, context -> Response in
            if managersOnly { _ = try context.requireManager(policy, to: "delete \(plural)") }
            try await backoffice.delete(R.self, id: try context.pathID())
            return Response(status: .noContent)
        }
    }

    /// A PATCH body overlays the current record: fields it leaves out keep their values, null clears an optional
    /// one. It must carry `version`, and may name only the record's own fields (ids are the server's).
    func merge<R: ManagedRecord>(_ current: R, with request: Request, context: WebContext) async throws -> R {
        let body = try await request.decodeStrictly(as: RecordInput.self, context: context)
        guard let version = body.version else {
            throw NorthwindError.invalid("version", "is required: send the version you read, so nobody's edit is lost")
        }
        var record = current
        try record.set(body.fields)
        record.version = version
        return record
    }

    /// A POST body is the new record's fields; the server gives it its ids and first version.
    func decodeNew<R: ManagedRecord>(_ request: Request, context: WebContext) async throws -> R {
        let body = try await request.decodeStrictly(as: RecordInput.self, context: context)
        if body.version != nil {
            throw NorthwindError.invalid("version", "is not a field of \(R.entityName) that a client may set")
        }
        var record = R.blank()
        try record.set(body.fields)
        return record
    }

    // MARK: Parameters

    func me(_ context: WebContext) throws -> MeBody {
        let me = try context.requireSignIn()
        return MeBody(
            employeeID: me.employeeID,
            name: me.displayName,
            login: me.login,
            title: me.employee.title,
            isManager: policy.isManager(me.employee)
        )
    }

    func limitParameter(_ request: Request, default value: Int = 50) throws(NorthwindError) -> Int {
        var errors: [NorthwindError.FieldError] = []
        let limit = request.wholeNumber("limit", in: Limits.pageSize, errors: &errors)
        try errors.throwIfAny()
        return limit ?? value
    }

    /// `cursor` (a `nextCursor`) or `offset`: both count rows to skip.
    func offsetParameter(_ request: Request) throws(NorthwindError) -> Int {
        var errors: [NorthwindError.FieldError] = []
        let offset =
            request.wholeNumber("cursor", in: Limits.offset, errors: &errors)
            ?? request.wholeNumber("offset", in: Limits.offset, errors: &errors)
        try errors.throwIfAny()
        return offset ?? 0
    }

    /// `true` or `false`, as the API document says; nothing else is taken for either.
    func bool(_ request: Request, _ name: String) throws -> Bool? {
        guard let text = request.parameter(name) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default: throw NorthwindError.invalid(name, "must be true or false, not '\(text)'")
        }
    }
}
