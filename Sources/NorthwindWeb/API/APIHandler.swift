import Foundation
import Hummingbird
import Northwind
import NorthwindStore
import OpenAPIHummingbird
import OpenAPIRuntime
import ServerOperations

/// `/api/v1`: everything the pages do, with the same rules and permissions, as JSON. The routes, parameters and
/// bodies are generated from openapi.yaml (`APIProtocol`); each method here only calls the domain. Permissions and
/// strict JSON are `OperationGate`'s, read from the document, before the generated code reads the request. Errors are
/// thrown and become RFC 9457 problem details in `ProblemMiddleware`.
struct APIHandler: APIProtocol {
    let env: WebEnvironment
    init(_ env: WebEnvironment) { self.env = env }
    var backoffice: Backoffice { env.backoffice }
    var policy: AccessPolicy { env.policy }

    func register(on router: Router<WebContext>) throws {
        // Who may do what comes from the contract: a server that cannot read it does not start.
        _ = try Contract.document.get()
        let api = router.group().add(middleware: ProblemMiddleware()).add(middleware: RequireAPISignIn())
            .add(middleware: CSRFCheck()).add(middleware: SingleParameters()).add(middleware: APIRequest.Binding())
        try registerHandlers(
            on: api,
            serverURL: URL(string: "/")!,
            // Compact, as machines read it; sorted, so an answer is the same bytes each time.
            configuration: Configuration(jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
            middlewares: [
                OperationGate(policy: { [env] in env.policy }, searchShortcut: { [self] in try searchAnswer(text: $0, limit: $1, path: $2) }),
                RawAnswer.Middleware(),
            ]
        )
    }

    // MARK: Me and the summary

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let me = try APIRequest.signedIn()
        return .ok(
            .init(
                body: .json(
                    .init(
                        employeeID: Int(me.employeeID),
                        isManager: policy.isManager(me.employee),
                        login: me.login,
                        name: me.displayName,
                        title: me.employee.title
                    )
                )
            )
        )
    }

    func getSummary(_ input: Operations.GetSummary.Input) async throws -> Operations.GetSummary.Output {
        let summary = try await backoffice.reports.summary()
        return .ok(.init(body: .json(.init(lowStockProducts: summary.lowStockProducts, newOrders: summary.newOrders))))
    }

    // MARK: Products

    func listProducts(_ input: Operations.ListProducts.Input) async throws -> Operations.ListProducts.Output {
        let q = input.query
        var query = ProductQuery()
        var errors: [NorthwindError.FieldError] = []
        for (name, id) in [("categoryID", q.categoryID), ("supplierID", q.supplierID)] where (id ?? 1) < 1 {
            errors.append(.init(name, "must be a record id, a whole number from 1"))
        }
        try errors.throwIfAny()
        query.categoryID = q.categoryID.map(Int64.init)
        query.supplierID = q.supplierID.map(Int64.init)
        query.lowStock = q.lowStock ?? false
        query.discontinued = q.discontinued
        if let sort = q.sort { query.sort = ProductQuery.Sort(rawValue: sort.rawValue) ?? .name }
        query.descending = q.desc ?? false
        (query.limit, query.offset) = try Paging.check(limit: q.limit, offset: q.offset, cursor: q.cursor)
        let page = try await backoffice.catalogue.list(query)
        return .ok(.init(body: .json(.init(page, ProductBody.init))))
    }

    /// Sent as `searchAnswer` writes it. A plain query (`q`, and `limit` if any) is answered by the same function
    /// before the generated code reads it (`OperationGate`): every till sends it as people type, and the generated
    /// code's parsing and encoding cost a cached search a fifth of its rate (docs/performance.md).
    func searchProducts(_ input: Operations.SearchProducts.Input) async throws -> Operations.SearchProducts.Output {
        guard let text = nonBlank(input.query.q) else { throw NorthwindError.invalid("q", "is required: part of a product name") }
        let answer = try searchAnswer(text: text, limit: input.query.limit, path: APIRequest.path ?? "")
        return .ok(.init(body: .json(try RawAnswer.send(Array(answer.readableBytesView), standIn: .init(items: [])))))
    }

    /// The search's answer, written by `ProductSearchJSON` and kept in `ResponseCache` until the store changes.
    func searchAnswer(text: String, limit: Int?, path: String) throws -> ByteBuffer {
        let limit = try Paging.limit(limit, default: 20)
        // The low-stock margin is part of the answer, and may change without a write to the store (the file).
        return try env.cache.body(for: "\(backoffice.rules.lowStockMargin) \(path) \(text) \(limit)") {
            ProductSearchJSON.list(try backoffice.catalogue.search(text, limit: limit))
        }
    }

    func getProduct(_ input: Operations.GetProduct.Input) async throws -> Operations.GetProduct.Output {
        .ok(.init(body: .json(ProductBody(try backoffice.catalogue.product(id: Int64(input.path.id))))))
    }

    func createProduct(_ input: Operations.CreateProduct.Input) async throws -> Operations.CreateProduct.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        if body.version != nil { throw NorthwindError.invalid("version", "is not a field of a new product: the server gives it") }
        var product = Product(name: body.name ?? "")
        try body.apply(to: &product, creating: true)
        let created = try await backoffice.catalogue.create(product, employeeID: me.employeeID)
        return .created(.init(body: .json(ProductBody(try backoffice.catalogue.product(id: created.id ?? 0)))))
    }

    func updateProduct(_ input: Operations.UpdateProduct.Input) async throws -> Operations.UpdateProduct.Output {
        let id = Int64(input.path.id)
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        guard let version = body.version else {
            throw NorthwindError.invalid("version", "is required: send the version you read, so nobody's edit is lost")
        }
        var product = try backoffice.catalogue.product(id: id).product
        try body.apply(to: &product, creating: false)
        product.version = version
        _ = try await backoffice.catalogue.update(product)
        return .ok(.init(body: .json(ProductBody(try backoffice.catalogue.product(id: id)))))
    }

    func deleteProduct(_ input: Operations.DeleteProduct.Input) async throws -> Operations.DeleteProduct.Output {
        try await backoffice.catalogue.delete(id: Int64(input.path.id))
        return .noContent(.init())
    }

    func listProductMovements(_ input: Operations.ListProductMovements.Input) async throws -> Operations.ListProductMovements.Output {
        let id = Int64(input.path.id)
        _ = try backoffice.catalogue.product(id: id)
        let movements = try await backoffice.stock.movements(productID: id, limit: 100)
        return .ok(.init(body: .json(.init(items: movements.map(MovementBody.init)))))
    }

    func listProductStock(_ input: Operations.ListProductStock.Input) async throws -> Operations.ListProductStock.Output {
        let levels = try await backoffice.stock.byLocation(productID: Int64(input.path.id))
        return .ok(.init(body: .json(.init(items: levels.map { .init(here: $0.isHere, location: $0.location, units: $0.units) }))))
    }

    // MARK: Stock transfers

    func listTransfers(_ input: Operations.ListTransfers.Input) async throws -> Operations.ListTransfers.Output {
        let q = input.query
        let productID = q.productID.map(Int64.init)
        if let productID { _ = try backoffice.catalogue.product(id: productID) }
        let transfers = try await backoffice.stock.transfers(productID: productID, inTransitOnly: q.inTransit == true, limit: q.limit ?? 100)
        return .ok(.init(body: .json(.init(items: transfers.map(TransferBody.init)))))
    }

    func sendTransfer(_ input: Operations.SendTransfer.Input) async throws -> Operations.SendTransfer.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let sent = try await backoffice.stock.send(
            productID: Int64(body.productID),
            quantity: body.quantity,
            to: body.to,
            employeeID: me.employeeID,
            note: body.note
        )
        return .created(.init(body: .json(TransferBody(sent))))
    }

    func receiveTransfer(_ input: Operations.ReceiveTransfer.Input) async throws -> Operations.ReceiveTransfer.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let received = try await backoffice.stock.receiveTransfer(
            id: Int64(input.path.id),
            units: body.units,
            employeeID: me.employeeID,
            note: body.note
        )
        return .ok(.init(body: .json(TransferBody(received))))
    }

    // MARK: Orders

    func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        let q = input.query
        var query = OrderQuery()
        query.status = q.status.flatMap { OrderStatus(rawValue: $0.rawValue) }
        query.search = q.q.flatMap(nonBlank)
        query.customerCode = q.customer.flatMap(nonBlank)
        (query.limit, query.offset) = try Paging.check(limit: q.limit, offset: q.offset, cursor: q.cursor)
        let page = try await backoffice.orders.list(query)
        return .ok(.init(body: .json(.init(page, OrderSummaryBody.init))))
    }

    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        .ok(.init(body: .json(OrderBody(try await backoffice.orders.order(number: input.path.number)))))
    }

    func createOrder(_ input: Operations.CreateOrder.Input) async throws -> Operations.CreateOrder.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let created = try await backoffice.orders.create(try body.draft(defaultEmployee: me.employeeID))
        return .created(.init(body: .json(OrderBody(created))))
    }

    func executeOrder(_ input: Operations.ExecuteOrder.Input) async throws -> Operations.ExecuteOrder.Output {
        let me = try APIRequest.signedIn()
        let executed = try await backoffice.orders.execute(number: input.path.number, employeeID: me.employeeID)
        return .ok(.init(body: .json(OrderBody(executed))))
    }

    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        .ok(.init(body: .json(OrderBody(try await backoffice.orders.cancel(number: input.path.number)))))
    }

    // MARK: Customers, employees and shippers

    func listCustomers(_ input: Operations.ListCustomers.Input) async throws -> Operations.ListCustomers.Output {
        let q = input.query
        let (limit, offset) = try Paging.check(limit: q.limit, offset: q.offset, cursor: q.cursor)
        if let text = q.q.flatMap(nonBlank) {
            // A lookup lists the best matches only, so it has no later pages to skip to.
            guard offset == 0 else { throw NorthwindError.invalid("offset", "must be 0 with q: a lookup has one page") }
            let found = try await backoffice.people.searchCustomers(text, limit: limit)
            return .ok(.init(body: .json(.init(Page(items: found, total: -1, offset: 0, limit: limit), \.body))))
        }
        return .ok(.init(body: .json(.init(try await backoffice.records.list(Customer.self, limit: limit, offset: offset), \.body))))
    }

    func getCustomer(_ input: Operations.GetCustomer.Input) async throws -> Operations.GetCustomer.Output {
        .ok(.init(body: .json(try backoffice.people.customer(code: input.path.code).body)))
    }

    func createCustomer(_ input: Operations.CreateCustomer.Input) async throws -> Operations.CreateCustomer.Output {
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        return .created(.init(body: .json(try await create(Customer.self, from: body).body)))
    }

    func listEmployees(_ input: Operations.ListEmployees.Input) async throws -> Operations.ListEmployees.Output {
        .ok(.init(body: .json(try await page(Employee.self, limit: input.query.limit, offset: input.query.offset, cursor: input.query.cursor))))
    }

    func getEmployee(_ input: Operations.GetEmployee.Input) async throws -> Operations.GetEmployee.Output {
        .ok(.init(body: .json(try backoffice.records.find(Employee.self, id: Int64(input.path.id)).body)))
    }

    func listShippers(_ input: Operations.ListShippers.Input) async throws -> Operations.ListShippers.Output {
        .ok(.init(body: .json(try await page(Shipper.self, limit: input.query.limit, offset: input.query.offset, cursor: input.query.cursor))))
    }

    // MARK: Categories and suppliers (managers change them; `OperationGate` checks)

    func listCategories(_ input: Operations.ListCategories.Input) async throws -> Operations.ListCategories.Output {
        .ok(
            .init(
                body: .json(
                    try await page(NorthwindStore.Category.self, limit: input.query.limit, offset: input.query.offset, cursor: input.query.cursor)
                )
            )
        )
    }

    func getCategory(_ input: Operations.GetCategory.Input) async throws -> Operations.GetCategory.Output {
        .ok(.init(body: .json(try backoffice.records.find(NorthwindStore.Category.self, id: Int64(input.path.id)).body)))
    }

    func createCategory(_ input: Operations.CreateCategory.Input) async throws -> Operations.CreateCategory.Output {
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        return .created(.init(body: .json(try await create(NorthwindStore.Category.self, from: body).body)))
    }

    func updateCategory(_ input: Operations.UpdateCategory.Input) async throws -> Operations.UpdateCategory.Output {
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        return .ok(.init(body: .json(try await update(NorthwindStore.Category.self, id: input.path.id, with: body).body)))
    }

    func deleteCategory(_ input: Operations.DeleteCategory.Input) async throws -> Operations.DeleteCategory.Output {
        try await backoffice.records.delete(NorthwindStore.Category.self, id: Int64(input.path.id))
        return .noContent(.init())
    }

    func listSuppliers(_ input: Operations.ListSuppliers.Input) async throws -> Operations.ListSuppliers.Output {
        .ok(.init(body: .json(try await page(Supplier.self, limit: input.query.limit, offset: input.query.offset, cursor: input.query.cursor))))
    }

    func getSupplier(_ input: Operations.GetSupplier.Input) async throws -> Operations.GetSupplier.Output {
        .ok(.init(body: .json(try backoffice.records.find(Supplier.self, id: Int64(input.path.id)).body)))
    }

    func createSupplier(_ input: Operations.CreateSupplier.Input) async throws -> Operations.CreateSupplier.Output {
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        return .created(.init(body: .json(try await create(Supplier.self, from: body).body)))
    }

    func updateSupplier(_ input: Operations.UpdateSupplier.Input) async throws -> Operations.UpdateSupplier.Output {
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        return .ok(.init(body: .json(try await update(Supplier.self, id: input.path.id, with: body).body)))
    }

    func deleteSupplier(_ input: Operations.DeleteSupplier.Input) async throws -> Operations.DeleteSupplier.Output {
        try await backoffice.records.delete(Supplier.self, id: Int64(input.path.id))
        return .noContent(.init())
    }

    /// A POST body is the new record's fields; the server gives it its ids and first version.
    /// A page of a managed record kind, in its wire shape.
    func page<R: APIRecord>(_ type: R.Type, limit: Int?, offset: Int?, cursor: String?) async throws -> R.PageBody {
        let (limit, offset) = try Paging.check(limit: limit, offset: offset, cursor: cursor)
        return R.PageBody(try await backoffice.records.list(R.self, limit: limit, offset: offset), \.body)
    }

    func create<R: ManagedRecord>(_ type: R.Type, from body: RecordInput) async throws -> R {
        if body.version != nil {
            throw NorthwindError.invalid("version", "is not a field of \(R.entityName) that a client may set")
        }
        var record = R.blank()
        try body.apply(to: &record)
        return try await backoffice.records.create(record)
    }

    /// A PATCH body overlays the current record: fields it leaves out keep their values, null clears an optional
    /// one. It must carry `version`, and may name only the record's own fields (ids are the server's).
    func update<R: ManagedRecord>(_ type: R.Type, id: Int, with body: RecordInput) async throws -> R {
        guard let version = body.version else {
            throw NorthwindError.invalid("version", "is required: send the version you read, so nobody's edit is lost")
        }
        var record = try backoffice.records.find(R.self, id: Int64(id))
        try body.apply(to: &record)
        record.version = version
        return try await backoffice.records.update(record)
    }

    // MARK: Reports (managers; `OperationGate` checks)

    func listReports(_ input: Operations.ListReports.Input) async throws -> Operations.ListReports.Output {
        .ok(.init(body: .json(.init(items: ReportDefinition.catalogue.map(ReportSummaryBody.init)))))
    }

    /// A page of rows as JSON (`limit`, `offset`), or every row as CSV (`format=csv`), sent as it is read.
    func runReport(_ input: Operations.RunReport.Input) async throws -> Operations.RunReport.Output {
        let name = input.path.name
        guard let report = ReportDefinition.named(name) else { throw NorthwindError.notFound(entity: "report", key: name) }
        let q = input.query
        let given = ["year": q.year, "from": q.from, "to": q.to, "customer": q.customer, "order": q.order, "category": q.category]
            .merging(["product": q.product, "top": q.top]) { first, _ in first }
        // Only the report's own parameters count, blank ones left out.
        var parameters: [String: String] = [:]
        for parameter in report.parameters {
            if let value = given[parameter.name] ?? nil, let value = nonBlank(value) { parameters[parameter.name] = value }
        }
        // Checked whatever the format: CSV sends every row, but a bad value is still a mistake to name.
        let limit = try Paging.limit(q.limit, in: 1...10_000, default: 1000)
        let offset = try Paging.offset(q.offset)
        switch q.format ?? .json {
        case .csv:
            let body = try await ReportDownload.body(backoffice, report: report, parameters: parameters)
            // As it is: the generated code would percent-encode it, and a browser would not decode it.
            try RawAnswer.setHeader(.contentDisposition, "attachment; filename=\"\(report.name).csv\"")
            return .ok(
                .init(
                    headers: .init(cacheControl: "no-store"),
                    body: .textCsvCharsetUtf8(body)
                )
            )
        case .json:
            let table = try await backoffice.reports.run(report.name, parameters: parameters, limit: limit, offset: offset)
            return .ok(.init(body: .json(ReportBody(table, offset: offset, limit: limit))))
        }
    }
}

/// Query text that says something; blank counts as not given.
func nonBlank(_ text: String) -> String? {
    text.trimmingCharacters(in: .whitespaces).isEmpty ? nil : text
}

/// The paging parameters the generator has read as numbers, checked against the document's limits, with messages
/// that name them.
enum Paging {
    static func limit(_ value: Int?, in range: ClosedRange<Int> = Limits.pageSize, default fallback: Int = 50) throws(NorthwindError) -> Int {
        guard let value else { return fallback }
        guard range.contains(value) else { throw NorthwindError.invalid([Limits.outOfRange(range, "limit", given: String(value))]) }
        return value
    }

    static func offset(_ value: Int?, name: String = "offset") throws(NorthwindError) -> Int {
        guard let value else { return 0 }
        guard Limits.offset.contains(value) else { throw NorthwindError.invalid([Limits.outOfRange(Limits.offset, name, given: String(value))]) }
        return value
    }

    /// `cursor` (a `nextCursor`) or `offset`: both count rows to skip.
    static func check(limit: Int?, offset: Int?, cursor: String?) throws(NorthwindError) -> (limit: Int, offset: Int) {
        let limit = try self.limit(limit)
        guard let cursor else { return (limit, try self.offset(offset)) }
        guard let skip = Int(cursor) else { throw NorthwindError.invalid([Limits.outOfRange(Limits.offset, "cursor", given: cursor)]) }
        return (limit, try self.offset(skip, name: "cursor"))
    }
}
