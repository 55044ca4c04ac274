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

extension WebTests {
    @Test func onlyManagersChangeTheCatalogue() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai.key
        try await fixture.test { client in
            let patch = ByteBuffer(string: #"{"unitPrice": "19.00", "version": 1}"#)
            let refused = try await client.execute(uri: "/api/v1/products/\(chai)", method: .patch, headers: bearer(fixture.repToken), body: patch)
            #expect(refused.status == .forbidden)
            #expect((try json(refused)["detail"] as? String)?.contains("Only managers") == true)
            let category = try await client.execute(
                uri: "/api/v1/categories",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(string: #"{"name": "Snacks"}"#)
            )
            #expect(category.status == .forbidden)

            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let page = try await session.post(client, "/products/\(chai)", [("version", "1"), ("name", "Chai"), ("unitPrice", "1.00")])
            #expect(page.status == .forbidden)
            let productPage = String(buffer: try await client.execute(uri: "/products/\(chai)", method: .get, headers: session.headers).body)
            #expect(!productPage.contains("<h2>Edit</h2>"))

            let allowed = try await client.execute(
                uri: "/api/v1/products/\(chai)",
                method: .patch,
                headers: bearer(fixture.managerToken),
                body: patch
            )
            #expect(allowed.status == .ok)
            #expect(try json(allowed)["unitPrice"] as? String == "19.00")
            #expect(try json(allowed)["version"] as? Int == 2)
            let created = try await client.execute(
                uri: "/api/v1/categories",
                method: .post,
                headers: bearer(fixture.managerToken),
                body: ByteBuffer(string: #"{"name": "Snacks"}"#)
            )
            #expect(created.status == .created)
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: chai).product.unitPrice == Money(cents: 1900))
    }

    @Test func productFormShowsErrorsBesideFieldsAndRefusesStaleSaves() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let fields: [(String, String)] = [
                ("version", "1"), ("name", "Chai"), ("unitPrice", "abc"), ("reorderLevel", "x"),
                ("categoryID", String(fixture.world.beverages.id ?? 0)),
            ]
            let invalid = try await session.post(client, "/products/\(chai.key)", fields)
            #expect(invalid.status == .unprocessableContent)
            let html = String(buffer: invalid.body)
            #expect(html.contains(#"<p class="field-error" id="unitPrice-error">Must be an amount such as 18.00, not &#39;abc&#39;</p>"#))
            #expect(html.contains(#"id="reorderLevel-error">Must be a whole number"#))
            #expect(html.contains(#"value="abc""#), "what was typed is kept")

            // Someone else saves first; this page's save is refused and shows their change.
            var theirs = chai
            theirs.unitPrice = Money(cents: 2100)
            _ = try await fixture.store.backoffice.catalogue.update(theirs)
            let stale = try await session.post(
                client,
                "/products/\(chai.key)",
                [("version", "1"), ("name", "Chai"), ("unitPrice", "19.50"), ("reorderLevel", "20")]
            )
            #expect(stale.status == .conflict)
            #expect(String(buffer: stale.body).contains("unit price is now 21.00"))

            let fresh = try await session.post(
                client,
                "/products/\(chai.key)",
                [
                    ("version", "2"), ("name", "Chai"), ("unitPrice", "19.50"), ("reorderLevel", "20"),
                    ("categoryID", String(fixture.world.beverages.id ?? 0)),
                ]
            )
            #expect(fresh.status == .ok)
            #expect(String(buffer: fresh.body).contains(#"id="current-price">19.50"#))
        }
        let saved = try fixture.store.backoffice.catalogue.product(id: chai.key).product
        #expect(saved.unitPrice == Money(cents: 1950))
        #expect(saved.reorderLevel == 20)
        #expect(saved.version == 3)
    }

    @Test func executingAnOrderFromItsPageShipsItAndDropsStock() async throws {
        let fixture = try await WebFixture.make()
        let b = fixture.store.backoffice
        let w = fixture.world
        let good = try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                lines: [OrderLineDraft(productID: w.chai.key, quantity: 12)]
            )
        )
        let short = try await b.orders.create(
            OrderDraft(
                customerCode: "ALFKI",
                employeeID: w.nancy.id,
                lines: [OrderLineDraft(productID: w.mustard.key, quantity: 8)]
            )
        )
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let shortPage = String(
                buffer: try await client.execute(uri: "/orders/\(short.order.number)", method: .get, headers: session.headers).body
            )
            #expect(shortPage.contains(#"id="execute" disabled"#))
            #expect(shortPage.contains("Cannot execute: Grandma&#39;s Mustard is short by 3."))
            let refused = try await session.post(client, "/orders/\(short.order.number)/execute", [])
            #expect(refused.status == .conflict)
            let api = try await client.execute(uri: "/api/v1/orders/\(short.order.number)/execute", method: .post, headers: bearer(fixture.repToken))
            #expect(api.status == .conflict)
            let shortages = try #require(try json(api)["shortages"] as? [[String: Any]])
            #expect(shortages.first?["short"] as? Int == 3)

            let executed = try await session.post(client, "/orders/\(good.order.number)/execute", [])
            #expect(executed.status == .seeOther)
            #expect(executed.headers[.location] == "/orders/\(good.order.number)")
            let page = String(buffer: try await client.execute(uri: "/orders/\(good.order.number)", method: .get, headers: session.headers).body)
            #expect(page.contains(#"id="order-status">Shipped"#))
            let product = String(buffer: try await client.execute(uri: "/products/\(w.chai.key)", method: .get, headers: session.headers).body)
            #expect(product.contains(#"id="current-stock">38"#))

            let cancelled = try await session.post(client, "/orders/\(short.order.number)/cancel", [])
            #expect(cancelled.status == .seeOther)
            let again = try await session.post(client, "/orders/\(short.order.number)/cancel", [])
            #expect(again.status == .conflict)
        }
        #expect(try await b.orders.order(number: good.order.number).order.status == .shipped)
        #expect(try await b.orders.order(number: short.order.number).order.status == .cancelled)
        #expect(try b.catalogue.product(id: w.mustard.key).product.unitsInStock == 5)
    }

    @Test func thePhoneOrderFormCreatesAnOrderOrShowsWhatIsWrong() async throws {
        let fixture = try await WebFixture.make()
        let w = fixture.world
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let form = String(buffer: try await client.execute(uri: "/orders/new?customer=VINET", method: .get, headers: session.headers).body)
            #expect(form.contains(#"<option value="\#(w.nancy.id ?? 0)" selected>Nancy Davolio</option>"#), "defaults to whoever is signed in")

            let bad = try await session.post(
                client,
                "/orders",
                [
                    ("customer", "NOBODY"), ("employeeID", String(w.nancy.id ?? 0)),
                    ("product", ""), ("productID", String(w.chai.key)), ("quantity", "0"), ("discount", "0"),
                ]
            )
            #expect(bad.status == .unprocessableContent)
            #expect(String(buffer: bad.body).contains("The order was not saved"))

            let good = try await session.post(
                client,
                "/orders",
                [
                    ("customer", "VINET"), ("employeeID", String(w.nancy.id ?? 0)), ("requiredDate", "2030-01-31"),
                    ("shipVia", String(w.shipper.id ?? 0)), ("freight", "12.50"),
                    ("product", "Chai (#\(w.chai.key))"), ("productID", String(w.chai.key)), ("quantity", "3"), ("discount", "10"),
                    ("product", ""), ("productID", ""), ("quantity", "1"), ("discount", "0"),
                    ("product", String(w.cote.key)), ("productID", ""), ("quantity", "1"), ("discount", ""),
                ]
            )
            #expect(good.status == .seeOther)
            let location = try #require(good.headers[.location])
            let number = String(location.dropFirst("/orders/".count))
            let detail = try await fixture.store.backoffice.orders.order(number: number)
            #expect(detail.customer.code == "VINET")
            #expect(detail.order.employeeID == w.nancy.id)
            #expect(detail.order.freight == Money(cents: 1250))
            #expect(detail.lines.map(\.line.quantity) == [3, 1])
            // 3 × 18.00 × 0.9 = 48.60, plus 263.50
            #expect(detail.subtotal == Money(cents: 4860 + 26350))
        }
    }

    @Test func apiListsPageOnByCursor() async throws {
        // Given four products
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client reads them three at a time, by price
            let first = try json(
                try await client.execute(uri: "/api/v1/products?limit=3&sort=price", method: .get, headers: bearer(fixture.repToken))
            )
            let cursor = try #require(first["nextCursor"] as? String)
            let second = try json(
                try await client.execute(
                    uri: "/api/v1/products?limit=3&sort=price&cursor=\(cursor)",
                    method: .get,
                    headers: bearer(fixture.repToken)
                )
            )
            // Then the first page has three in price order and the total, and the second the last one and no cursor
            #expect(first["total"] as? Int == 4)
            #expect((first["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Old Tea", "Chai", "Grandma's Mustard"])
            #expect((second["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Côte de Blaye"])
            #expect(second["nextCursor"] == nil)
        }
    }

    @Test func apiSearchIgnoresCaseAndAccents() async throws {
        // Given "Côte de Blaye"
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client searches for "COTE"
            let search = try json(try await client.execute(uri: "/api/v1/products/search?q=COTE", method: .get, headers: bearer(fixture.repToken)))
            // Then it is found
            #expect((search["items"] as? [[String: Any]])?.first?["name"] as? String == "Côte de Blaye")
        }
    }

    @Test func apiOrderTakesTheSignedInEmployeeAndExactTotals() async throws {
        // Given Nancy's API token
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When she posts an order without naming an employee: 2 × 18.00 less 5%, freight 3.20
            let order = try await client.execute(
                uri: "/api/v1/orders",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(
                    string: """
                        {"customerCode": "alfki", "requiredDate": "2030-02-01", "freight": "3.20",
                         "lines": [{"productID": \(fixture.world.chai.key), "quantity": 2, "discount": 0.05}]}
                        """
                )
            )
            // Then it is created as hers, with the subtotal and total to the cent, as decimal strings
            #expect(order.status == .created)
            let body = try json(order)
            #expect(body["employeeID"] as? Int64 == fixture.world.nancy.id)
            #expect(body["subtotal"] as? String == "34.20")
            #expect(body["total"] as? String == "37.40")
        }
    }

    @Test func apiCustomerCreatedIsFoundByTheLookup() async throws {
        // Given a sales representative's token
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When she adds a customer
            let customer = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: bearer(fixture.repToken),
                body: ByteBuffer(string: #"{"code": "NEWCO", "companyName": "New Company"}"#)
            )
            // Then it is created, and the phone-order lookup finds it
            #expect(customer.status == .created)
            let found = try json(try await client.execute(uri: "/api/v1/customers?q=new", method: .get, headers: bearer(fixture.repToken)))
            #expect((found["items"] as? [[String: Any]])?.first?["code"] as? String == "NEWCO")
        }
    }

    @Test func badInputGetsProblemDetailsNeverA500() async throws {
        let fixture = try await WebFixture.make()
        let chai = fixture.world.chai.key
        try await fixture.test { client in
            let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status)] = [
                (.get, "/api/v1/products/999999", nil, .notFound),
                (.get, "/api/v1/products/abc", nil, .notFound),
                (.get, "/api/v1/products?limit=0", nil, .unprocessableContent),
                (.get, "/api/v1/products?limit=ten", nil, .unprocessableContent),
                (.get, "/api/v1/products?sort=colour", nil, .unprocessableContent),
                (.get, "/api/v1/products?lowStock=maybe", nil, .unprocessableContent),
                (.get, "/api/v1/products/search", nil, .unprocessableContent),
                (.get, "/api/v1/orders?status=lost", nil, .unprocessableContent),
                (.get, "/api/v1/orders/NOPE-1", nil, .notFound),
                (.get, "/api/v1/customers/ZZZZZ", nil, .notFound),
                (.post, "/api/v1/orders", "{not json", .badRequest),
                (.post, "/api/v1/orders", #"{"customerCode": "VINET"}"#, .badRequest),
                (.post, "/api/v1/orders", #"{"customerCode": "VINET", "lines": []}"#, .unprocessableContent),
                (.post, "/api/v1/orders", #"{"customerCode": "NOBODY", "lines": [{"productID": 1, "quantity": 1}]}"#, .notFound),
                (
                    .post, "/api/v1/orders", #"{"customerCode": "VINET", "requiredDate": "2030-02-30", "lines": [{"productID": 1, "quantity": 1}]}"#,
                    .unprocessableContent
                ),
                (.patch, "/api/v1/products/\(chai)", #"{"unitPrice": "1.001", "version": 1}"#, .unprocessableContent),
                (.patch, "/api/v1/products/\(chai)", #"{"unitPrice": "2.00"}"#, .unprocessableContent),
                (.patch, "/api/v1/products/\(chai)", #"{"unitsInStock": 999, "version": 1}"#, .unprocessableContent),
                (.patch, "/api/v1/products/\(chai)", #"{"name": "Chai", "version": 7}"#, .conflict),
                (.patch, "/api/v1/categories/\(fixture.world.beverages.id ?? 0)", #"{"colour": "red", "version": 1}"#, .unprocessableContent),
                (.patch, "/api/v1/categories/\(fixture.world.beverages.id ?? 0)", "[1, 2]", .badRequest),
                (.delete, "/api/v1/categories/\(fixture.world.beverages.id ?? 0)", nil, .conflict),
                (.post, "/api/v1/orders/NOPE-1/execute", nil, .notFound),
            ]
            for (method, uri, body, status) in cases {
                let response = try await client.execute(
                    uri: uri,
                    method: method,
                    headers: bearer(fixture.managerToken),
                    body: body.map { ByteBuffer(string: $0) }
                )
                #expect(response.status == status, "\(method) \(uri) \(body ?? "")")
                #expect(response.headers[.contentType] == "application/problem+json", "\(method) \(uri)")
                let problem = try json(response)
                #expect(problem["status"] as? Int == Int(status.code))
                #expect((problem["detail"] as? String)?.isEmpty == false)
            }
        }
        let chaiNow = try fixture.store.backoffice.catalogue.product(id: chai).product
        #expect(chaiNow.version == 1, "no refused request changed anything")
        #expect(chaiNow.unitsInStock == 50)
    }

    @Test func sessionRequestsToTheAPINeedTheCSRFHeader() async throws {
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            let session = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let body = ByteBuffer(string: #"{"code": "CSRF1", "companyName": "Forged"}"#)
            let forged = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: [.cookie: session.cookie, .contentType: "application/json"],
                body: body
            )
            #expect(forged.status == .forbidden)
            let genuine = try await client.execute(
                uri: "/api/v1/customers",
                method: .post,
                headers: [
                    .cookie: session.cookie, .contentType: "application/json",
                    HTTPField.Name("X-CSRF-Token")!: session.csrf,
                ],
                body: body
            )
            #expect(genuine.status == .created)
            let me = try json(try await client.execute(uri: "/api/v1/me", method: .get, headers: session.headers))
            #expect(me["login"] as? String == "nancy.davolio")
            #expect(me["isManager"] as? Bool == false)
        }
    }

    @Test func managerTitlesAreConfigurable() async throws {
        let policy = AccessPolicy(managerTitles: ["Sales Representative"])
        let world = try await World.make(TemporaryStore().backoffice)
        #expect(policy.isManager(world.nancy))
        #expect(!policy.isManager(world.andrew))
        #expect(AccessPolicy().isManager(world.andrew))
    }
}
