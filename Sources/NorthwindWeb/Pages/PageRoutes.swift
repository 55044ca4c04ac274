import Foundation
import Hummingbird
import Logging
import Mustache
import Northwind
import NorthwindStore

/// The shop-floor pages, rendered on the server. Mustache escapes every `{{value}}`, so no markup is built from
/// strings here.
struct PageRoutes: Sendable {
    let env: WebEnvironment
    init(_ env: WebEnvironment) { self.env = env }
    var backoffice: Backoffice { env.backoffice }

    func register(on router: Router<WebContext>) {
        router.get("signin", use: signInPage)
        router.post("signin", use: signIn)
        let pages = router.group().add(middleware: PageErrors(env: env)).add(middleware: RequirePageSignIn())
            .add(middleware: CSRFCheck())
        pages.post("signout", use: signOut)
        pages.get("/", use: home)
        pages.get("events", use: EventStream(feed: env.feed).stream)
        // HEAD answers with the stream's headers without subscribing to the feed.
        pages.head("events") { _, _ in Response(status: .ok, headers: EventStream.headers) }
        pages.get("products", use: products)
        pages.get("products/new", use: newProduct)
        pages.post("products", use: createProduct)
        pages.get("products/:id", use: product)
        pages.post("products/:id", use: saveProduct)
        pages.get("orders", use: orders)
        pages.get("orders/new", use: newOrder)
        pages.post("orders", use: createOrder)
        pages.get("orders/:number", use: order)
        pages.post("orders/:number/execute", use: executeOrder)
        pages.post("orders/:number/cancel", use: cancelOrder)
        registerReports(on: pages)
        pages.get("categories", use: categories)
        pages.get("categories/:id", use: category)
        pages.get("categories/:id/picture", use: categoryPicture)
        pages.get("customers", use: customers)
        pages.get("customers/:code", use: customer)
        pages.get("employees", use: employees)
        pages.get("employees/:id", use: employee)
        pages.get("employees/:id/photo", use: employeePhoto)
    }

    // MARK: Sign-in

    @Sendable func signInPage(_ request: Request, context: WebContext) async throws -> Response {
        signInForm(next: Self.safeNext(request.query("next")), login: "", error: nil, status: .ok, context: context)
    }

    /// The sign-in form with a fresh double-submit token (see `SignInToken`).
    func signInForm(next: String, login: String, error: String?, status: HTTPResponse.Status, context: WebContext) -> Response {
        let token = SignInToken.make()
        var data: [String: Any] = ["next": next, "login": login, "signinToken": token]
        if let error { data["error"] = error }
        var response = render("signin", data, status: status, context: context)
        response.setCookie(SignInToken.cookie(token, secure: env.options.secureCookies))
        return response
    }

    @Sendable func signIn(_ request: Request, context: WebContext) async throws -> Response {
        var request = request
        let form = FormData(String(buffer: try await request.collectBody(upTo: 64 * 1024)))
        let next = Self.safeNext(form["next"])
        let login = form["login"] ?? ""
        guard SignInToken.matches(form: form["_csrf"], cookie: request.cookies[SignInToken.cookieName]?.value) else {
            return signInForm(
                next: next,
                login: login,
                error: "This sign-in form had expired. Please sign in again.",
                status: .forbidden,
                context: context
            )
        }
        if let wait = env.throttle.wait(for: login) {
            let minutes = max(1, Int((wait.components.seconds + 59) / 60))
            return signInForm(
                next: next,
                login: login,
                error: "Too many wrong passwords for \(login). "
                    + "Try again in \(minutes) minute\(minutes == 1 ? "" : "s").",
                status: .tooManyRequests,
                context: context
            )
        }
        do {
            let (token, _) = try await backoffice.signIn(login: login, password: form["password"] ?? "")
            env.throttle.succeeded(login)
            var response = Response.redirect(to: next, type: .found)
            response.setCookie(SessionCookie.make(token: token, secure: env.options.secureCookies))
            response.setCookie(SignInToken.cookie("", secure: env.options.secureCookies))
            return response
        } catch {
            env.throttle.failed(login)
            return signInForm(next: next, login: login, error: error.description, status: .unauthorized, context: context)
        }
    }

    @Sendable func signOut(_ request: Request, context: WebContext) async throws -> Response {
        if let token = request.cookies[SessionCookie.name]?.value {
            try await backoffice.signOut(token: token)
        }
        var response = Response.redirect(to: "/signin", type: .found)
        response.setCookie(SessionCookie.cleared(secure: env.options.secureCookies))
        return response
    }

    /// Only a path on this site, so a crafted link cannot bounce a user elsewhere after signing in: one leading
    /// slash, then printable ASCII without a backslash. Browsers drop tabs and line breaks from a URL and read "\\" as
    /// "/", which is how "/\t/evil.example" became "//evil.example", another origin.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"),
            next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" })
        else { return "/" }
        return next
    }

    // MARK: Home

    @Sendable func home(_ request: Request, context: WebContext) async throws -> Response {
        guard let me = context.identity, env.options.policy.isManager(me.employee) else {
            let summary = try backoffice.shopSummary()
            return render(
                "home",
                ["summary": ["newOrders": summary.newOrders, "lowStockProducts": summary.lowStockProducts]],
                context: context
            )
        }
        let board = try backoffice.dashboard()
        let change = board.changePercent.map { $0 > 0 ? "up \($0)%" : $0 < 0 ? "down \(-$0)%" : "level" }
        var dashboard: [String: Any] = [
            "monthToDate": board.monthToDate.description, "orders": board.ordersMonthToDate == 1 ? "1 order" : "\(board.ordersMonthToDate) orders",
            "lastMonthToDate": board.lastMonthToDate.description, "lastMonth": board.lastMonth.description,
        ]
        // Absent keys, not nil values: Mustache would print an Optional wrapped in Any as "nil".
        if let change { dashboard["change"] = change }
        if !board.categories.isEmpty {
            dashboard["chart"] =
                ReportChart(
                    title: "Sales by category this month",
                    bars: board.categories.map { ($0.name, $0.sales.cents) }
                ).view
        }
        return render(
            "home",
            [
                "summary": ["newOrders": board.newOrders, "lowStockProducts": board.lowStockProducts], "dashboard": dashboard,
            ],
            context: context
        )
    }

    // MARK: Products

    static let pageSize = 25

    @Sendable func products(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        var query = ProductQuery()
        query.categoryID = parser.id(request.query("category"), "category")
        query.lowStock = request.query("lowStock") != nil
        if request.query("discontinued") != nil { query.discontinued = true }
        query.sort = request.query("sort").flatMap(ProductQuery.Sort.init(rawValue:)) ?? .name
        query.descending = request.query("desc") != nil
        let page = parser.page(request)
        try parser.throwIfAny()
        query.limit = Self.pageSize
        query.offset = (page - 1) * Self.pageSize
        let text = request.query("q")
        let rows: [ProductRow]
        let total: Int
        if let text {
            // Search ranks by relevance; filters still apply to what it found.
            rows = try backoffice.searchProducts(text, limit: 200).filter { row in
                (query.categoryID == nil || row.product.categoryID == query.categoryID)
                    && (!query.lowStock || row.product.isLowStock)
                    && (query.discontinued == nil || row.product.discontinued)
            }
            total = rows.count
        } else {
            let result = try backoffice.listProducts(query)
            (rows, total) = (result.items, result.total)
        }
        let shown = text == nil ? rows : Array(rows.dropFirst(query.offset).prefix(Self.pageSize))
        let data: [String: Any] = [
            "query": ["q": text ?? "", "lowStock": query.lowStock, "discontinued": query.discontinued == true],
            "categoryOptions": try categoryOptions(selected: query.categoryID),
            "sorts": ProductQuery.Sort.allCases.map { ["value": $0.rawValue, "label": $0.rawValue.capitalized, "selected": $0 == query.sort] },
            "products": shown.map(productView),
            "resultText": total == 1 ? "1 product" : "\(total) products",
            "pager": pager(request, page: page, total: total) as Any,
        ]
        return render("products", data, context: context)
    }

    /// The category filter's options, rendered (and escaped) by their own template and kept until the store changes.
    /// With hundreds of categories, rendering them was most of the products page's time, the same on every request.
    func categoryOptions(selected: Int64?) throws -> String {
        let fragment = try env.cache.body(for: "fragment categoryoptions \(selected ?? 0)") {
            let categories = try backoffice.choices(NorthwindStore.Category.self)
            let data = ["categories": categories.map { ["id": $0.id, "name": $0.name, "selected": $0.id == selected] }]
            return ByteBuffer(string: env.templates.render(data, withTemplate: "categoryoptions") ?? "")
        }
        return String(buffer: fragment)
    }

    @Sendable func product(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        return try renderProduct(id: id, form: nil, context: context)
    }

    func renderProduct(
        id: Int64,
        form: ProductForm?,
        conflict: String? = nil,
        saved: Bool = false,
        status: HTTPResponse.Status = .ok,
        context: WebContext
    ) throws -> Response {
        let row = try backoffice.product(id: id)
        let movements = try backoffice.stockMovements(productID: id, limit: 20)
        let canEdit = context.identity.map { env.options.policy.isManager($0.employee) } ?? false
        var data: [String: Any] = [
            "product": productView(row),
            "movements": try movements.map(movementView),
            "hasMovements": !movements.isEmpty,
            "canEdit": canEdit,
            "saved": saved,
        ]
        if let conflict { data["conflict"] = conflict }
        if canEdit {
            data["form"] = try (form ?? ProductForm(row.product)).view(action: "/products/\(id)", backoffice: backoffice)
        }
        return render("product", data, status: status, context: context)
    }

    @Sendable func newProduct(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.options.policy, to: "add products")
        let form = try ProductForm(Product(name: "")).view(action: "/products", backoffice: backoffice)
        return render("productnew", ["form": form], context: context)
    }

    @Sendable func createProduct(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireManager(env.options.policy, to: "add products")
        let form = ProductForm(try await FormData.read(request, context: context))
        do {
            let product = try form.product(base: Product(name: ""), allowStock: true)
            let created = try await backoffice.createProduct(product, employeeID: me.employeeID)
            return Response.redirect(to: "/products/\(created.id ?? 0)", type: .normal)
        } catch {
            guard case let .invalid(fields) = error else { throw error }
            var form = form
            form.errors = fields
            let view = try form.view(action: "/products", backoffice: backoffice)
            return render("productnew", ["form": view], status: .unprocessableContent, context: context)
        }
    }

    @Sendable func saveProduct(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.options.policy, to: "edit products")
        let id = try context.pathID()
        var form = ProductForm(try await FormData.read(request, context: context))
        do {
            let current = try backoffice.product(id: id).product
            let edited = try form.product(base: current, allowStock: false)
            _ = try await backoffice.updateProduct(edited)
        } catch {
            switch error {
            case let .invalid(fields):
                form.errors = fields
                return try renderProduct(id: id, form: form, status: .unprocessableContent, context: context)
            case let .conflict(message):
                return try renderProduct(id: id, form: form, conflict: message, status: .conflict, context: context)
            default:
                throw error
            }
        }
        return try renderProduct(id: id, form: nil, saved: true, context: context)
    }

    // MARK: Orders

    @Sendable func orders(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let status = OrderStatus(rawValue: request.query("status") ?? "new") ?? .new
        var query = OrderQuery(status: status)
        query.search = request.query("q")
        let page = parser.page(request)
        try parser.throwIfAny()
        query.limit = Self.pageSize
        query.offset = (page - 1) * Self.pageSize
        let result = try backoffice.listOrders(query)
        let tabs = [(OrderStatus.new, "New"), (.shipped, "Shipped"), (.cancelled, "Cancelled")].map { tab in
            ["href": "/orders?status=\(tab.0.rawValue)", "label": tab.1, "current": tab.0 == status] as [String: Any]
        }
        let data: [String: Any] = [
            "tabs": tabs,
            "status": status.rawValue,
            "q": query.search ?? "",
            "orders": result.items.map(orderSummaryView),
            "resultText": result.total == 1 ? "1 order" : "\(result.total) orders",
            "pager": pager(request, page: page, total: result.total) as Any,
        ]
        return render("orders", data, context: context)
    }

    @Sendable func order(_ request: Request, context: WebContext) async throws -> Response {
        try renderOrder(number: try context.pathString("number"), error: nil, context: context)
    }

    func renderOrder(number: String, error: String?, status: HTTPResponse.Status = .ok, context: WebContext) throws -> Response {
        let detail = try backoffice.order(number: number)
        let short = detail.lines.filter { $0.short > 0 }
        var data: [String: Any] = [
            "order": [
                "number": detail.order.number, "status": detail.order.status.rawValue,
                "statusLabel": detail.order.status.rawValue.capitalized,
                "orderDate": detail.order.orderDate.description, "requiredDate": detail.order.requiredDate?.description ?? "",
                "shippedDate": detail.order.shippedDate?.description ?? "", "shipName": detail.order.shipName ?? "",
                "shipCity": detail.order.shipCity ?? "", "shipCountry": detail.order.shipCountry ?? "",
            ],
            "isNew": detail.order.status == .new,
            "supplyable": detail.isSupplyable,
            "shortText": short.map { "\($0.productName) is short by \($0.short)" }.joined(separator: ", "),
            "customer": ["code": detail.customer.code, "companyName": detail.customer.companyName],
            "employeeName": detail.employee?.fullName ?? "",
            "shipperName": detail.shipper?.companyName ?? "",
            "lines": detail.lines.map { line -> [String: Any] in
                [
                    "productID": line.line.productID, "productName": line.productName,
                    "unitPrice": line.line.unitPrice.description, "quantity": line.line.quantity,
                    "discount": Self.percent(line.line.discount), "total": line.total.description,
                    // Mustache counts 0 as present, so the section needs a Bool.
                    "isShort": line.short > 0, "short": line.short, "inStock": line.inStock,
                ]
            },
            "subtotal": detail.subtotal.description,
            "freight": detail.order.freight.description,
            "total": detail.total.description,
        ]
        if let error { data["error"] = error }
        return render("order", data, status: status, context: context)
    }

    @Sendable func executeOrder(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.pathString("number")
        do {
            _ = try await backoffice.executeOrder(number: number, employeeID: me.employeeID)
            return Response.redirect(to: "/orders/\(number)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try renderOrder(number: number, error: error.description, status: .conflict, context: context)
        }
    }

    @Sendable func cancelOrder(_ request: Request, context: WebContext) async throws -> Response {
        let number = try context.pathString("number")
        do {
            _ = try await backoffice.cancelOrder(number: number)
            return Response.redirect(to: "/orders/\(number)", type: .normal)
        } catch {
            if case .notFound = error { throw error }
            return try renderOrder(number: number, error: error.description, status: .conflict, context: context)
        }
    }

    @Sendable func newOrder(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let form = NewOrderForm(customer: request.query("customer") ?? "", employeeID: me.employeeID)
        return try renderNewOrder(form, errors: [], status: .ok, context: context)
    }

    func renderNewOrder(_ form: NewOrderForm, errors: [String], status: HTTPResponse.Status, context: WebContext) throws -> Response {
        let employees = try backoffice.choices(Employee.self)
        let shippers = try backoffice.choices(Shipper.self)
        var lines = form.lines.map { line -> [String: Any] in
            ["product": line.product, "productID": line.productID, "quantity": line.quantity, "discount": line.discount]
        }
        if lines.isEmpty { lines = [["product": "", "productID": "", "quantity": "1", "discount": "0"]] }
        let data: [String: Any] = [
            "form": [
                "customer": form.customer, "requiredDate": form.requiredDate, "freight": form.freight, "lines": lines,
            ],
            "employees": employees.map { ["id": $0.id, "name": $0.name, "selected": $0.id == form.employeeID] },
            "shippers": shippers.map { ["id": $0.id, "name": $0.name, "selected": String($0.id) == form.shipVia] },
            "errors": errors,
            "hasErrors": !errors.isEmpty,
        ]
        return render("neworder", data, status: status, context: context)
    }

    @Sendable func createOrder(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let form = NewOrderForm(try await FormData.read(request, context: context))
        do {
            let draft = try form.draft()
            let created = try await backoffice.createOrder(draft)
            return Response.redirect(to: "/orders/\(created.order.number)", type: .normal)
        } catch {
            let messages: [String]
            if case let .invalid(fields) = error {
                messages = fields.map { "\(NewOrderForm.label($0.field)): \($0.message)" }
            } else {
                messages = [error.description]
            }
            return try renderNewOrder(form, errors: messages, status: .unprocessableContent, context: context)
        }
    }

    // MARK: Categories, customers, employees

    @Sendable func categories(_ request: Request, context: WebContext) async throws -> Response {
        render(
            "categories",
            [
                "categories": try backoffice.categoryListing().map { category -> [String: Any] in
                    ["id": category.id, "name": category.name, "description": category.detail ?? "", "hasPicture": category.hasImage]
                }
            ],
            context: context
        )
    }

    @Sendable func category(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        let category = try backoffice.find(NorthwindStore.Category.self, id: id)
        let products = try backoffice.products(categoryID: id)
        return render(
            "category",
            [
                "category": ["id": id, "name": category.name, "description": category.description ?? ""],
                "hasPicture": try backoffice.categoryHasPicture(id: id),
                "products": products.map {
                    [
                        "id": $0.id ?? 0, "name": $0.name, "unitPrice": $0.unitPrice.description,
                        "unitsInStock": $0.unitsInStock,
                    ]
                },
            ],
            context: context
        )
    }

    @Sendable func categoryPicture(_ request: Request, context: WebContext) async throws -> Response {
        try binary(try backoffice.categoryPicture(categoryID: try context.pathID()))
    }

    @Sendable func customers(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let page = parser.page(request)
        try parser.throwIfAny()
        let customers: [Customer]
        var pagerView: [String: Any]?
        if let text = request.query("q") {
            customers = try backoffice.searchCustomers(text, limit: 100)
        } else {
            let result = try backoffice.list(Customer.self, limit: Self.pageSize, offset: (page - 1) * Self.pageSize)
            customers = result.items
            pagerView = pager(request, page: page, total: result.total)
        }
        return render(
            "customers",
            [
                "q": request.query("q") ?? "",
                "customers": customers.map(customerView),
                "pager": pagerView as Any,
            ],
            context: context
        )
    }

    @Sendable func customer(_ request: Request, context: WebContext) async throws -> Response {
        let customer = try backoffice.customer(code: try context.pathString("code"))
        let orders = try backoffice.orders(customerID: customer.id ?? 0)
        return render(
            "customer",
            [
                "customer": customerView(customer),
                "orders": orders.map(orderSummaryView),
            ],
            context: context
        )
    }

    @Sendable func employees(_ request: Request, context: WebContext) async throws -> Response {
        render(
            "employees",
            [
                "employees": try backoffice.employeeListing().map { employee -> [String: Any] in
                    ["id": employee.id, "name": employee.name, "title": employee.detail ?? "", "hasPhoto": employee.hasImage]
                }
            ],
            context: context
        )
    }

    @Sendable func employee(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        let employee = try backoffice.find(Employee.self, id: id)
        let manager = try employee.reportsTo.map { try backoffice.find(Employee.self, id: $0) }
        return render(
            "employee",
            [
                "employee": [
                    "id": id, "title": employee.title ?? "", "hireDate": employee.hireDate?.description ?? "",
                    "city": employee.city ?? "", "country": employee.country ?? "", "extension": employee.extension ?? "",
                    "notes": employee.notes ?? "",
                ],
                "name": employee.fullName,
                "hasPhoto": try backoffice.employeeHasPhoto(id: id),
                "manager": manager.map { ["id": $0.id ?? 0, "name": $0.fullName] } as Any,
            ],
            context: context
        )
    }

    @Sendable func employeePhoto(_ request: Request, context: WebContext) async throws -> Response {
        try binary(try backoffice.employeePhoto(employeeID: try context.pathID()))
    }

    // MARK: Helpers

    func render(_ template: String, _ data: [String: Any], status: HTTPResponse.Status = .ok, context: WebContext) -> Response {
        var data = data
        if let me = context.identity {
            data["me"] =
                [
                    "name": me.displayName, "firstName": me.employee.firstName, "csrf": me.csrfToken ?? "",
                    "isManager": env.options.policy.isManager(me.employee),
                ] as [String: Any]
        }
        let html = env.templates.render(Self.withoutNils(data), withTemplate: template) ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// Drops absent optionals, which Mustache would otherwise treat as present and print as "nil".
    static func withoutNils(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, item) in dictionary {
                if let optional = item as? any OptionalValue {
                    guard let wrapped = optional.wrappedValue else { continue }
                    result[key] = withoutNils(wrapped)
                } else {
                    result[key] = withoutNils(item)
                }
            }
            return result
        }
        if let array = value as? [[String: Any]] { return array.map(withoutNils) }
        return value
    }

    func binary(_ content: BinaryContent?) throws -> Response {
        guard let content else { throw WebError.notFound("There is no picture.") }
        var headers = HTTPFields()
        headers[.contentType] = content.contentType
        headers[.cacheControl] = "private, max-age=300"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: content.bytes)))
    }

    func pager(_ request: Request, page: Int, total: Int) -> [String: Any]? {
        let pages = max(1, (total + Self.pageSize - 1) / Self.pageSize)
        guard pages > 1 else { return nil }
        func link(_ page: Int) -> String {
            var items = request.uri.queryParameters.map { (String($0.key), String($0.value)) }.filter { $0.0 != "page" }
            items.append(("page", String(page)))
            var components = URLComponents()
            components.path = request.uri.path
            components.queryItems = items.sorted { $0.0 < $1.0 }.map { URLQueryItem(name: $0.0, value: $0.1) }
            return components.string ?? request.uri.path
        }
        return [
            "page": page, "pages": pages,
            "previous": page > 1 ? link(page - 1) : nil as String? as Any,
            "next": page < pages ? link(page + 1) : nil as String? as Any,
        ]
    }

    func productView(_ row: ProductRow) -> [String: Any] {
        let product = row.product
        return [
            "id": product.id ?? 0, "name": product.name, "categoryID": product.categoryID as Any,
            "categoryName": row.categoryName ?? "", "supplierName": row.supplierName ?? "",
            "quantityPerUnit": product.quantityPerUnit ?? "", "unitPrice": product.unitPrice.description,
            "unitsInStock": product.unitsInStock, "unitsOnOrder": product.unitsOnOrder,
            "reorderLevel": product.reorderLevel, "discontinued": product.discontinued,
            "lowStock": product.isLowStock, "version": product.version,
        ]
    }

    func movementView(_ movement: StockMovement) throws -> [String: Any] {
        [
            "createdAt": String(movement.createdAt.description.prefix(16)).replacingOccurrences(of: "T", with: " "),
            "reason": movement.reason.rawValue, "delta": movement.delta > 0 ? "+\(movement.delta)" : "\(movement.delta)",
            "note": movement.note ?? "",
            "orderNumber": try movement.orderID.map { try backoffice.orderNumber(id: $0) } as Any,
        ]
    }

    func orderSummaryView(_ summary: OrderSummary) -> [String: Any] {
        [
            "number": summary.order.number, "customerName": summary.customerName,
            "employeeName": summary.employeeName ?? "", "orderDate": summary.order.orderDate.description,
            "requiredDate": summary.order.requiredDate?.description ?? "", "total": summary.total.description,
            "isNew": summary.order.status == .new, "supplyable": summary.isSupplyable,
            "status": summary.order.status.rawValue,
        ]
    }

    func customerView(_ customer: Customer) -> [String: Any] {
        [
            "code": customer.code, "companyName": customer.companyName, "contactName": customer.contactName ?? "",
            "contactTitle": customer.contactTitle ?? "", "address": customer.address ?? "", "city": customer.city ?? "",
            "region": customer.region ?? "", "postalCode": customer.postalCode ?? "", "country": customer.country ?? "",
            "phone": customer.phone ?? "", "fax": customer.fax ?? "",
        ]
    }

    static func percent(_ discount: Double) -> String {
        discount == 0 ? "" : "\(Int((discount * 100).rounded()))%"
    }
}

/// Lets `withoutNils` see through an optional hidden in `Any` with one cast instead of a `Mirror`.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? { self.map { $0 as Any } }
}
