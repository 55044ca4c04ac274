import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindLoading
import NorthwindStore
import OpenAPIRuntime
import Testing
import Yams

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// The generated client's transport: requests go through the app's router, with a bearer token.
struct RouterTransport: ClientTransport {
    let client: any TestClientProtocol
    let token: String

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var headers = request.headerFields
        headers[.authorization] = "Bearer \(token)"
        var bytes: ByteBuffer?
        if let body { bytes = ByteBuffer(bytes: try await [UInt8](collecting: body, upTo: 1 << 20)) }
        let response = try await client.execute(uri: request.path ?? "/", method: request.method, headers: headers, body: bytes)
        return (HTTPResponse(status: response.status, headerFields: response.headers), HTTPBody(Array(response.body.readableBytesView)))
    }
}

extension Client {
    init(_ client: any TestClientProtocol, token: String) {
        self.init(serverURL: URL(string: "/")!, transport: RouterTransport(client: client, token: token))
    }
}

/// A JSON body as the test writes it; the server's own types decide what they accept.
func object(_ fields: [String: (any Sendable)?]) throws -> OpenAPIObjectContainer { try OpenAPIObjectContainer(unvalidatedValue: fields) }

@Suite("API contract") struct WebAPIContractTests {
    @Test func theServedDocumentIsOpenAPIYAML() async throws {
        // Given the contract's source, parsed by Yams on its own
        var root = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) { root.deleteLastPathComponent() }
        let yaml = try String(contentsOf: root.appendingPathComponent("Sources/NorthwindWeb/openapi.yaml"), encoding: .utf8)
        let source = try #require(try Yams.load(yaml: yaml) as? NSDictionary)
        // Both sides in one canonical JSON form: sorted keys, the same number spelling.
        let expected = try JSONSerialization.data(withJSONObject: source, options: [.sortedKeys])
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client reads /api/openapi.json
            let response = try await client.execute(uri: "/api/openapi.json", method: .get)
            // Then it is that document, as JSON
            #expect(response.headers[.contentType] == "application/json")
            let served = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? NSDictionary)
            #expect(served.count > 3)
            #expect(try JSONSerialization.data(withJSONObject: served, options: [.sortedKeys]) == expected)
        }
    }

    /// Every operation, called through the client generated from openapi.yaml: each answer must have a documented
    /// status and decode strictly as its schema (types, required fields, no undocumented field, enums).
    @Test func realAnswersDecodeAsTheDocumentSays() async throws {
        // Given a store with an order, a manager and a sales rep
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let order = try await fixture.store.backoffice.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [OrderLineDraft(productID: w.chai.key, quantity: 1)])
        )
        let number = order.order.number
        let (chai, cote, condiments, beverages) = (Int(w.chai.key), Int(w.cote.key), Int(w.condiments.id ?? 0), Int(w.beverages.id ?? 0))
        try await fixture.test { http in
            let api = Client(http, token: fixture.managerToken)
            let rep = Client(http, token: fixture.repToken)
            // When every operation is called, Then each answer is the documented one for its case
            let me = try await api.getMe().ok.body.json
            #expect(me.isManager)
            _ = try await api.getSummary().ok.body.json
            #expect(try await api.listProducts(query: .init(limit: 2)).ok.body.json.items.count == 2)
            _ = try await api.listProducts(query: .init(lowStock: true)).ok.body.json
            _ = try await api.searchProducts(query: .init(q: "ch")).ok.body.json
            let product = try await api.getProduct(path: .init(id: chai)).ok.body.json
            #expect(product.unitPrice.wholeMatch(of: /-?\d+\.\d{2}/) != nil)
            _ = try await api.listProductMovements(path: .init(id: chai)).ok.body.json
            let tofu = try object(["name": "Tofu", "unitPrice": "23.25", "unitsInStock": 4])
            #expect(try await api.createProduct(body: .json(tofu)).created.body.json.unitPrice == "23.25")
            let patch = try object(["reorderLevel": 3, "quantityPerUnit": nil, "version": 1])
            #expect(try await api.updateProduct(path: .init(id: cote), body: .json(patch)).ok.body.json.quantityPerUnit == nil)
            // Only a product with no stock history may be deleted.
            let unstocked = try object(["name": "Never stocked", "unitPrice": "1.00", "unitsInStock": 0])
            let unstockedID = try await api.createProduct(body: .json(unstocked)).created.body.json.id
            _ = try await api.deleteProduct(path: .init(id: unstockedID)).noContent
            _ = try await api.listOrders(query: .init(status: .new)).ok.body.json
            let read = try await api.getOrder(path: .init(number: number)).ok.body.json
            #expect(LocalDate(read.orderDate) != nil)
            let lines = try object(["customerCode": "ALFKI", "lines": [["productID": Int(w.mustard.key), "quantity": 9]]])
            _ = try await api.createOrder(body: .json(lines)).created.body.json
            #expect(try await api.executeOrder(path: .init(number: number)).ok.body.json.status == .shipped)
            _ = try await api.cancelOrder(path: .init(number: number)).conflict.body.applicationProblemJson
            _ = try await api.listCustomers().ok.body.json
            #expect(try await api.listCustomers(query: .init(q: "vin")).ok.body.json.total == nil)
            _ = try await api.getCustomer(path: .init(code: "ALFKI")).ok.body.json
            _ = try await api.createCustomer(body: .json(try object(["code": "TOMSP", "companyName": "Toms Spezialitäten"]))).created.body.json
            _ = try await api.listCategories().ok.body.json
            _ = try await api.getCategory(path: .init(id: condiments)).ok.body.json
            _ = try await api.createCategory(body: .json(try object(["name": "Produce"]))).created.body.json
            let sauces = try object(["description": "Sauces", "version": 1])
            _ = try await api.updateCategory(path: .init(id: condiments), body: .json(sauces)).ok.body.json
            _ = try await api.deleteCategory(path: .init(id: beverages)).conflict.body.applicationProblemJson
            _ = try await api.listSuppliers().ok.body.json
            _ = try await api.getSupplier(path: .init(id: Int(w.supplier.id ?? 0))).ok.body.json
            _ = try await api.listEmployees().ok.body.json
            _ = try await api.getEmployee(path: .init(id: Int(w.nancy.id ?? 0))).ok.body.json
            _ = try await api.listShippers().ok.body.json
            _ = try await api.listReports().ok.body.json
            _ = try await api.runReport(path: .init(name: "invoices")).ok.body.json
            #expect(try await api.runReport(path: .init(name: "cust-orders-orders"), query: .init(customer: "ALFKI")).ok.body.json.complete)
            _ = try await api.runReport(path: .init(name: "sales-by-year"), query: .init(from: "2000-01-01", to: "1999-01-01")).unprocessableContent
            _ = try await api.runReport(path: .init(name: "no-such-report")).notFound.body.applicationProblemJson
            _ = try await rep.listReports().forbidden.body.applicationProblemJson
            _ = try await api.getProduct(path: .init(id: 999)).notFound.body.applicationProblemJson
            _ = try await Client(http, token: "wrong").getMe().unauthorized.body.applicationProblemJson
            _ = try await rep.updateProduct(path: .init(id: chai), body: .json(try object(["version": 1]))).forbidden
            let empty = try object(["customerCode": "VINET", "lines": [String]()])
            let refused = try await api.createOrder(body: .json(empty)).unprocessableContent.body.applicationProblemJson
            #expect(refused.errors?.isEmpty == false)
        }
    }

    /// The buyer's walk over the API: each answer decodes strictly, a sales rep may write and receive but not send,
    /// and units on order sent in a product's edit are passed over.
    @Test func aPurchaseOrderIsWrittenSentReceivedAndReversed() async throws {
        // Given a store with a supplier's product, a manager and a sales rep
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let (mustard, supplier) = (Int(w.mustard.key), Int(w.supplier.id ?? 0))
        try await fixture.test { http in
            let api = Client(http, token: fixture.managerToken)
            let rep = Client(http, token: fixture.repToken)
            // When a rep writes a draft of 12 at 3.50, which the rep may not send but the manager may
            let draftBody = try object([
                "supplierID": supplier, "expectedDate": "2026-12-01",
                "lines": [["productID": mustard, "quantity": 12, "unitCost": "3.50"] as [String: any Sendable]],
            ])
            let draft = try await rep.createPurchaseOrder(body: .json(draftBody)).created.body.json
            _ = try await rep.sendPurchaseOrder(path: .init(number: draft.number)).forbidden.body.applicationProblemJson
            let sent = try await api.sendPurchaseOrder(path: .init(number: draft.number)).ok.body.json
            // And the rep receives 5 (twice under one key), then the manager reverses that receipt
            let delivery = try object(["requestKey": "delivery-7", "lines": [["productID": mustard, "quantity": 5] as [String: any Sendable]]])
            _ = try await rep.receivePurchaseOrder(path: .init(number: draft.number), body: .json(delivery)).ok.body.json
            let received = try await rep.receivePurchaseOrder(path: .init(number: draft.number), body: .json(delivery)).ok.body.json
            let receiptID = try #require(received.receipts.first?.id)
            _ = try await rep.reverseReceipt(path: .init(id: receiptID), body: .json(.init())).forbidden
            let reversed = try await api.reverseReceipt(path: .init(id: receiptID), body: .json(.init(note: "Wrong pallet"))).ok.body.json
            let page = try await api.listPurchaseOrders(query: .init(status: .sent)).ok.body.json
            let proposal = try await api.getReorderProposal().ok.body.json
            let product = try await api.getProduct(path: .init(id: mustard)).ok.body.json
            let typed = try object(["unitsOnOrder": 99, "version": product.version])
            let ignored = try await api.updateProduct(path: .init(id: mustard), body: .json(typed)).ok.body.json

            // Then each step is the documented answer, with the order's progress
            #expect(draft.status == .draft && sent.status == .sent)
            #expect(received.receipts.count == 1)
            #expect(received.lines.first?.received == 5 && received.status == .partiallyReceived)
            #expect(reversed.lines.first?.received == 0 && reversed.receipts.last?.kind == .reversal)
            #expect(reversed.receipts.first?.averageCost == "3.50")
            #expect(page.items.contains { $0.number == draft.number })
            #expect(!proposal.targetCover.isEmpty)
            #expect(product.unitsOnOrder == 12)
            #expect(ignored.unitsOnOrder == 12)
            _ = try await api.cancelPurchaseOrder(path: .init(number: draft.number)).ok.body.json
            _ = try await api.getPurchaseOrder(path: .init(number: "NOPE-P1")).notFound.body.applicationProblemJson
        }
    }

    /// The packer's walk over the API: what is available ships (once under one key), the rest is backordered, and a
    /// body asking for both ways at once is refused.
    @Test func aShortOrderShipsInPartsOverTheAPI() async throws {
        // Given an order for 8 mustards, 5 on the shelf
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let mustard = Int(w.mustard.key)
        let number = try await fixture.store.backoffice.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: nil, lines: [.init(productID: w.mustard.key, quantity: 8)])
        ).order.number
        try await fixture.test { http in
            let api = Client(http, token: fixture.repToken)
            // When what is available ships, twice under one key, and the order, the shipment and the queue are read
            let available = try object(["available": true, "requestKey": "pack-1"])
            let first = try await api.shipOrder(path: .init(number: number), body: .json(available)).ok.body.json
            let again = try await api.shipOrder(path: .init(number: number), body: .json(available)).ok.body.json
            let state = try await api.getOrderFulfilment(path: .init(number: number)).ok.body.json
            let slip = try await api.getShipment(path: .init(number: number, sequence: 1)).ok.body.json
            let queue = try await api.listBackorders().ok.body.json
            let both = try object(["available": true, "lines": [["productID": mustard, "quantity": 1] as [String: any Sendable]]])
            let refused = try await api.shipOrder(path: .init(number: number), body: .json(both))
            // Then one shipment of 5 left, 3 wait in the queue, and the body asking for both is refused
            #expect(first.lines.map(\.quantity) == [5] && first.orderStatus == .partlyShipped)
            #expect(again == first)
            #expect(state.status == .partlyShipped && state.shipments.count == 1)
            #expect(state.lines.map(\.open) == [3])
            #expect(slip == first)
            #expect(queue.items.map(\.line.open) == [3] && queue.total == 1)
            if case .ok = refused { Issue.record("a body with both available and lines shipped") }
            _ = try await api.getShipment(path: .init(number: number, sequence: 2)).notFound.body.applicationProblemJson
        }
    }

    @Test func aShipmentIsInvoicedAndAReturnCreditedOverTheAPI() async throws {
        // Given an order for 4 chai at 18.00, shipped whole
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let chai = Int(w.chai.key)
        let number = try await fixture.store.backoffice.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: nil, lines: [.init(productID: w.chai.key, quantity: 4)])
        ).order.number
        try await fixture.test { http in
            let api = Client(http, token: fixture.repToken)
            let shipped = try await api.shipOrder(path: .init(number: number), body: .json(try object(["available": true]))).ok.body.json
            // When 1 comes back, twice under one key, and more than is left is asked back; then the documents are read
            let back = try object(["lines": [["productID": chai, "quantity": 1] as [String: any Sendable]], "reason": "Dented", "requestKey": "r-1"])
            let returned = try await api.takeReturn(path: .init(number: number, sequence: 1), body: .json(back)).ok.body.json
            let again = try await api.takeReturn(path: .init(number: number, sequence: 1), body: .json(back)).ok.body.json
            let tooMany = try object(["lines": [["productID": chai, "quantity": 4] as [String: any Sendable]]])
            let refused = try await api.takeReturn(path: .init(number: number, sequence: 1), body: .json(tooMany))
            let list = try await api.listInvoices(query: .init(order: number)).ok.body.json
            let invoiceSummary = try #require(list.items.first { $0.kind == .invoice })
            let invoice = try await api.getInvoice(
                path: .init(kind: .invoice, site: invoiceSummary.site, year: invoiceSummary.year, counter: invoiceSummary.counter)
            ).ok.body.json
            let returns = try await api.listOrderReturns(path: .init(number: number)).ok.body.json
            // Then the shipment names its invoice of 4 × 18.00 = 72.00 + 16.56 tax, one credit note of 18.00 + 4.14
            // corrects it, and the return beyond what is left is refused
            #expect(shipped.invoiceNumber == invoice.summary.number)
            #expect((invoice.summary.net, invoice.summary.tax, invoice.summary.gross) == ("72.00", "16.56", "88.56"))
            #expect(returned == again)
            #expect(returned.creditNoteNumber != nil && invoice.creditNotes == [returned.creditNoteNumber])
            let credit = try #require(list.items.first { $0.kind == .creditNote })
            #expect((credit.net, credit.tax, credit.corrects) == ("18.00", "4.14", invoice.summary.number))
            #expect(returns.items.count == 1)
            _ = try refused.unprocessableContent.body.applicationProblemJson
        }
    }

    @Test func theGeneratedTypesRefuseADriftedAnswer() throws {
        // Given answers that drifted from the document: a wrong type, an undocumented field, a missing field
        let drifted = [
            #"{"newOrders": "1", "lowStockProducts": 2}"#, #"{"newOrders": 1, "lowStockProducts": 2, "extra": true}"#, #"{"newOrders": 1}"#,
        ]
        for body in drifted {
            // When one is read as the document's Summary, Then it is refused
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(Components.Schemas.Summary.self, from: Data(body.utf8)) }
        }
    }
}
