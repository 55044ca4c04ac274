import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

@Suite("CSRF on every page that changes something")
struct CSRFCoverageTests {
    /// Every POST, PUT, PATCH and DELETE route of the pages, as the router has them, with real values for its parameters.
    static func changingPageRoutes(_ fixture: WebFixture, order: String) async throws -> [(HTTPRequest.Method, String)] {
        let environment = try await WebApp.environment(backoffice: fixture.store.backoffice, options: WebOptions(port: 0))
        let router = Router(context: WebContext.self)
        PageRoutes(environment).register(on: router)
        return router.routes.filter { ![.get, .head].contains($0.method) }.map { route in
            let path = route.path.description.replacingOccurrences(of: "{id}", with: String(fixture.world.chai.key))
                .replacingOccurrences(of: "{number}", with: order).replacingOccurrences(of: "{name}", with: "invoices")
            return (route.method, path)
        }
    }

    @Test(arguments: [nil, "wrong"] as [String?])
    func everyChangingPageRouteRefusesAMissingOrWrongToken(token: String?) async throws {
        // Given a signed-in manager, an open order, and every page route that changes something
        let fixture = try await WebFixture.make()
        let order = try await fixture.store.backoffice.orders.create(
            .init(customerCode: "VINET", employeeID: fixture.world.nancy.id, lines: [.init(productID: fixture.world.chai.key, quantity: 1)])
        )
        let routes = try await Self.changingPageRoutes(fixture, order: order.order.number)
        #expect(routes.count >= 7 && routes.contains { $0.1 == "/signout" }, "\(routes)")
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            for (method, path) in routes {
                // When each is sent without the page's token, or with a wrong one, as a form and as a script would
                let form = "name=Forged&unitPrice=1.00&customer=VINET&productID=1&quantity=1" + (token.map { "&_csrf=\($0)" } ?? "")
                let asForm = try await client.execute(
                    uri: path,
                    method: method,
                    headers: [.cookie: session.cookie, .contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: form)
                )
                var headers: HTTPFields = [.cookie: session.cookie, .contentType: "application/json"]
                if let token { headers[.csrfToken] = token }
                let asScript = try await client.execute(uri: path, method: method, headers: headers, body: ByteBuffer(string: "{}"))
                // Then each is refused
                #expect(asForm.status == .forbidden, "\(method) \(path) as a form: \(asForm.status)")
                #expect(asScript.status == .forbidden, "\(method) \(path) as a script: \(asScript.status)")
            }
        }
        // And nothing changed
        #expect(try fixture.store.count("SELECT count(*) FROM products WHERE name = 'Forged'") == 0)
        #expect(try await fixture.store.backoffice.orders.order(number: order.order.number).order.status == .new)
    }
}
