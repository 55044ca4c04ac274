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
            .add(middleware: CSRFCheck()).add(middleware: NumberFormatMiddleware(env: env))
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
        pages.post("products/:id/transfers", use: sendTransfer)
        pages.post("transfers/:id/receive", use: receiveTransfer)
        pages.get("orders", use: orders)
        pages.get("orders/new", use: newOrder)
        pages.post("orders", use: createOrder)
        pages.get("orders/:number", use: order)
        pages.post("orders/:number/execute", use: executeOrder)
        pages.post("orders/:number/cancel", use: cancelOrder)
        pages.post("orders/:number/shipments", use: shipAvailable)
        pages.get("orders/:number/shipments/:sequence", use: shipmentSlip)
        pages.get("backorders", use: backorders)
        registerInvoices(on: pages)
        registerReports(on: pages)
        pages.get("categories", use: categories)
        pages.get("categories/:id", use: category)
        pages.get("categories/:id/picture", use: categoryPicture)
        pages.get("customers", use: customers)
        pages.get("customers/:code", use: customer)
        pages.get("employees", use: employees)
        pages.get("employees/:id", use: employee)
        pages.get("employees/:id/photo", use: employeePhoto)
        pages.get("settings", use: settingsPage)
        pages.post("settings", use: saveSetting)
        pages.post("settings/reset", use: resetSetting)
        registerQuotes(on: pages)
        registerPurchasing(on: pages)
        registerDocuments(on: pages)
        pages.get("backups", use: backupsPage)
        pages.post("backups", use: createBackup)
    }

    // MARK: Helpers

    /// Renders a page's model in its template, with the signed-in employee for the layout.
    func render(_ template: String, _ model: some PageModel, status: HTTPResponse.Status = .ok, context: WebContext) -> Response {
        var model = model
        if let me = context.identity {
            model.me = PageUser(
                name: me.displayName,
                firstName: me.employee.firstName,
                csrf: me.csrfToken ?? "",
                isManager: env.policy.isManager(me.employee),
                sync: (try? env.backoffice.sync.badge())?.map { PageSync(state: $0.state.rawValue, text: $0.text) },
                density: env.setting("display.density", user: me.login)
            )
        }
        let html = env.templates.render(model, withTemplate: template) ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    func binary(_ content: BinaryContent?) throws -> Response {
        guard let content else { throw WebError.notFound("There is no picture.") }
        var headers = HTTPFields()
        headers[.contentType] = content.contentType
        headers[.cacheControl] = "private, max-age=300"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: content.bytes)))
    }

    func pager(_ request: Request, page: Int, total: Int, pageSize: Int) -> Pager? {
        let pages = max(1, (total + pageSize - 1) / pageSize)
        guard pages > 1 else { return nil }
        func link(_ page: Int) -> String {
            var items = request.uri.queryParameters.map { (String($0.key), String($0.value)) }.filter { $0.0 != "page" }
            items.append(("page", String(page)))
            var components = URLComponents()
            components.path = request.uri.path
            components.queryItems = items.sorted { $0.0 < $1.0 }.map { URLQueryItem(name: $0.0, value: $0.1) }
            return components.string ?? request.uri.path
        }
        return Pager(page: page, pages: pages, previous: page > 1 ? link(page - 1) : nil, next: page < pages ? link(page + 1) : nil)
    }
}
