import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// The purchasing pages, through the app's router: what a buyer, a manager and the shop floor do with them.
extension WebTests {
    static func page(_ client: any TestClientProtocol, _ session: BrowserSession, _ uri: String) async throws -> String {
        String(buffer: try await client.execute(uri: uri, method: .get, headers: session.headers).body)
    }

    /// A sent purchase order from Exotic Liquids: 24 Chai at 12.00 and 10 mustard at 9.50.
    static func sentPurchase(_ fixture: WebFixture) async throws -> String {
        let w = fixture.world
        let lines = [
            PurchaseLineDraft(productID: w.chai.key, quantity: 24, unitCost: Money(cents: 1200)),
            PurchaseLineDraft(productID: w.mustard.key, quantity: 10, unitCost: Money(cents: 950)),
        ]
        return try await fixture.store.backoffice.purchasing.create(
            PurchaseOrderDraft(supplierID: w.supplier.id ?? 0, expectedDate: .today.adding(days: 7), lines: lines),
            send: true
        ).order.number
    }

    @Test func anEmployeeWritesADraftByHandAndAManagerSendsIt() async throws {
        // Given a sales rep and a manager, signed in
        let fixture = try await WebFixture.make()
        let w = fixture.world
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When the rep picks the supplier, fills in one of its products and saves a draft
            let form = try await Self.page(client, rep, "/purchases/new?supplier=\(w.supplier.id ?? 0)")
            #expect(form.contains("Grandma&#39;s Mustard"))
            #expect(!form.contains("Old Tea"), "a discontinued product is not offered")
            let saved = try await rep.post(
                client,
                "/purchases",
                [
                    ("supplierID", "\(w.supplier.id ?? 0)"), ("expectedDate", LocalDate.today.adding(days: 10).description), ("note", ""),
                    ("productID", "\(w.chai.key)"), ("quantity", ""), ("unitCost", ""),
                    ("productID", "\(w.mustard.key)"), ("quantity", "20"), ("unitCost", "9.50"),
                ]
            )
            let location = try #require(saved.headers[.location])
            let number = String(location.dropFirst("/purchases/".count))
            let refused = try await rep.post(client, "/purchases/\(number)/send", [])
            let sent = try await manager.post(client, "/purchases/\(number)/send", [])
            // Then the draft has the one line, the rep may not send it, the manager does, and it is on order
            #expect(saved.status == .seeOther)
            #expect(refused.status == .forbidden)
            #expect(sent.status == .seeOther)
            let page = try await Self.page(client, rep, location)
            #expect(page.contains(#"id="purchase-status">Sent"#))
            #expect(page.contains(#"id="purchase-outstanding">20"#))
            #expect(page.contains(#"id="receive-form""#))
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: w.mustard.key).product.unitsOnOrder == 20)
    }

    @Test func aDeliveryReceivedFromThePageRaisesStockAndTheSameFormTwiceBooksOnce() async throws {
        // Given a sent purchase order and its page, open at the shop
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let number = try await Self.sentPurchase(fixture)
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let page = try await Self.page(client, rep, "/purchases/\(number)")
            let key = try #require(page.firstMatch(of: /name="requestKey" value="([^"]+)"/).map { String($0.1) })
            let delivery = [
                ("requestKey", key), ("receivedBefore", "0"), ("quantity-\(w.chai.key)", "10"), ("overReceipt-\(w.chai.key)", ""),
                ("quantity-\(w.mustard.key)", ""), ("overReceipt-\(w.mustard.key)", ""), ("note", "Slip 4411"),
            ]
            // When ten Chai are booked, and the same form is submitted again (a second click)
            let first = try await rep.post(client, "/purchases/\(number)/receive", delivery)
            let second = try await rep.post(client, "/purchases/\(number)/receive", delivery)
            // Then both answer with the order, which is partly received, and stock rose by ten once
            #expect(first.status == .seeOther)
            #expect(second.status == .seeOther)
            let after = try await Self.page(client, rep, "/purchases/\(number)")
            #expect(after.contains(#"id="purchase-status">Partly received"#))
            #expect(after.contains(#"id="purchase-outstanding">24"#))
            #expect(after.contains("Slip 4411"))
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 60)
    }

    @Test func anOverReceiptWithoutAReasonIsRefusedOnThePageAndBooksNothing() async throws {
        // Given a sent purchase order awaiting 10 mustard
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let number = try await Self.sentPurchase(fixture)
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When 12 are booked with no reason
            let refused = try await rep.post(
                client,
                "/purchases/\(number)/receive",
                [("requestKey", "form-1"), ("receivedBefore", "0"), ("quantity-\(w.mustard.key)", "12"), ("overReceipt-\(w.mustard.key)", "")]
            )
            // Then the page says what is wrong, naming the product, and nothing arrived
            #expect(refused.status == .unprocessableContent)
            let body = String(buffer: refused.body)
            #expect(body.contains(#"id="action-error""#))
            #expect(body.contains("12 of &#39;Grandma&#39;s Mustard&#39; is more than the 10 still awaited"), "\(body)")
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: w.mustard.key).product.unitsInStock == 5)
    }

    @Test func onlyAManagerReversesAReceiptAndTheReversalShowsOnThePage() async throws {
        // Given a receipt of 10 Chai on a sent purchase order
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let number = try await Self.sentPurchase(fixture)
        let received = try await fixture.store.backoffice.purchasing.receive(
            number: number,
            lines: [ReceiptLine(productID: w.chai.key, quantity: 10)],
            requestKey: "k1"
        )
        let receipt = try #require(received.receipts.first?.movement.id)
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            #expect(!(try await Self.page(client, rep, "/purchases/\(number)")).contains("class=\"secondary reverse\""))
            // When the rep tries to reverse it, then the manager does
            let refused = try await rep.post(client, "/purchases/\(number)/receipts/\(receipt)/reverse", [])
            let reversed = try await manager.post(client, "/purchases/\(number)/receipts/\(receipt)/reverse", [("note", "Wrong pallet")])
            // Then only the manager's counts: the receipt reads reversed, and what it took in is awaited again
            #expect(refused.status == .forbidden)
            #expect(reversed.status == .seeOther)
            let page = try await Self.page(client, manager, "/purchases/\(number)")
            #expect(page.contains("(reversed)"))
            #expect(page.contains("Reversal. Wrong pallet"))
            #expect(page.contains(#"id="purchase-outstanding">34"#))
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 50)
    }

    @Test func theProposalPageTurnsWhatIsLowIntoOneDraftPerSupplier() async throws {
        // Given mustard at 5 with a reorder level of 10 (target cover 2: 20)
        let fixture = try await WebFixture.make()
        let w = fixture.world
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let proposal = try await Self.page(client, rep, "/purchases/proposal")
            #expect(proposal.contains("data-product=\"\(w.mustard.key)\""))
            // When the rep presses "Create purchase orders"
            let created = try await rep.post(client, "/purchases/proposal", [])
            // Then the drafts tab has one draft for Exotic Liquids, with 15 mustard, and the proposal is empty
            // until it is sent (a draft is not on order, but the proposal skips products already on one)
            #expect(created.status == .seeOther)
            #expect(created.headers[.location] == "/purchases?status=draft")
            let drafts = try await Self.page(client, rep, "/purchases?status=draft")
            #expect(drafts.contains("Exotic Liquids"))
            #expect(drafts.contains("1 purchase order"))
        }
        let draft = try #require(try await fixture.store.backoffice.purchasing.list(PurchaseOrderQuery(status: .draft)).items.first)
        let detail = try await fixture.store.backoffice.purchasing.purchaseOrder(number: draft.order.number)
        #expect(detail.lines.map(\.line.quantity) == [15])
    }

    @Test func aSentPurchaseOrderPrintsAndDownloadsButADraftDoesNot() async throws {
        // Given a sent purchase order and a draft
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let sent = try await Self.sentPurchase(fixture)
        let draft = try await fixture.store.backoffice.purchasing.create(
            PurchaseOrderDraft(supplierID: w.supplier.id ?? 0, lines: [PurchaseLineDraft(productID: w.chai.key, quantity: 1)])
        ).order.number
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When each is printed and downloaded
            let printed = try await client.execute(uri: "/purchases/\(sent)/print", method: .get, headers: rep.headers)
            let package = try await client.execute(uri: "/purchases/\(sent)/package", method: .get, headers: rep.headers)
            let draftPrint = try await client.execute(uri: "/purchases/\(draft)/print", method: .get, headers: rep.headers)
            // Then the sent one is a printable page with its lines and total, and a package; the draft is refused
            #expect(printed.status == .ok)
            let html = String(buffer: printed.body)
            #expect(html.contains("Purchase order \(sent)"))
            #expect(html.contains("Grandma&#39;s Mustard"))
            #expect(html.contains("383.00"), "24 × 12.00 + 10 × 9.50")
            #expect(!html.contains("<script"))
            #expect(package.status == .ok)
            #expect(package.headers[.contentDisposition]?.contains("purchase-order-\(sent).nwdoc") == true)
            #expect(Array(package.body.readableBytesView.prefix(2)) == [0x50, 0x4B])
            #expect(draftPrint.status == .conflict)
        }
    }

    @Test func theSupplierPageListsItsOpenPurchaseOrdersAndTheDashboardCountsThem() async throws {
        // Given a sent purchase order, already late, and a received one
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let b = fixture.store.backoffice
        let late = try await b.purchasing.create(
            PurchaseOrderDraft(
                supplierID: w.supplier.id ?? 0,
                expectedDate: .today.adding(days: -3),
                lines: [PurchaseLineDraft(productID: w.cote.key, quantity: 6, unitCost: Money(cents: 20000))]
            ),
            send: true
        ).order.number
        let done = try await Self.sentPurchase(fixture)
        _ = try await b.purchasing.receive(
            number: done,
            lines: [ReceiptLine(productID: w.chai.key, quantity: 24), ReceiptLine(productID: w.mustard.key, quantity: 10)],
            requestKey: "all"
        )
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When the supplier's page and the home page are read
            let supplier = try await Self.page(client, manager, "/suppliers/\(w.supplier.id ?? 0)")
            let home = try await Self.page(client, manager, "/")
            // Then the supplier lists only the order still awaiting goods, and the dashboard counts it as late
            #expect(supplier.contains("data-purchase=\"\(late)\""))
            #expect(!supplier.contains("data-purchase=\"\(done)\""))
            #expect(supplier.contains(#"id="open-count">1 open purchase order"#))
            #expect(home.contains(#"id="open-purchases">1 purchase order"#))
            #expect(home.contains(#"id="late-purchases">1 late"#))
            // Chai's 74 at 12.00 (its 50 before had no cost, so the receipt's is the average) and mustard's 15 at 9.50
            #expect(home.contains(#"id="stock-value">1,030.50"#), "\(home)")
            #expect(home.contains("30 units have no cost yet"))
        }
    }
}

extension WebTests {
    @Test func aDraftFromTheProposalIsPricedOnItsPageAndThenSent() async throws {
        // Given a draft from the proposal: 15 mustard, with no cost (never received)
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let number = try #require(try await fixture.store.backoffice.purchasing.draftsFromProposal().first?.order.number)
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let unpriced = try await manager.post(client, "/purchases/\(number)/send", [])
            // When the manager enters a cost and 18 instead of 15 on the draft's page, then sends it
            let edited = try await manager.post(
                client,
                "/purchases/\(number)/edit",
                [("version", "1"), ("productID", "\(w.mustard.key)"), ("quantity", "18"), ("unitCost", "9.75"), ("expectedDate", ""), ("note", "")]
            )
            let sent = try await manager.post(client, "/purchases/\(number)/send", [])
            // Then sending unpriced was refused, the edit saved, and the order went out at 18 × 9.75
            #expect(unpriced.status == .unprocessableContent)
            #expect(String(buffer: unpriced.body).contains("give a unit cost for"))
            #expect(edited.status == .seeOther)
            #expect(sent.status == .seeOther)
        }
        let detail = try await fixture.store.backoffice.purchasing.purchaseOrder(number: number)
        #expect(detail.order.status == .sent)
        #expect(detail.lines.map(\.line.quantity) == [18])
        #expect(detail.lines.first?.line.unitCost == Money(cents: 975))
    }

    @Test func aDraftSavedOverSomeoneElsesEditIsRefusedAndKeepsTheirs() async throws {
        // Given a draft that someone saved (version 2) after this page was opened (version 1)
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let b = fixture.store.backoffice
        let number = try await b.purchasing.create(
            PurchaseOrderDraft(supplierID: w.supplier.id ?? 0, lines: [PurchaseLineDraft(productID: w.chai.key, quantity: 5)])
        ).order.number
        _ = try await b.purchasing.update(
            number: number,
            PurchaseOrderDraft(supplierID: w.supplier.id ?? 0, lines: [PurchaseLineDraft(productID: w.chai.key, quantity: 7)]),
            expectedVersion: 1
        )
        try await fixture.test { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When the page's older copy is saved
            let stale = try await rep.post(
                client,
                "/purchases/\(number)/edit",
                [("version", "1"), ("productID", "\(w.chai.key)"), ("quantity", "9"), ("unitCost", ""), ("expectedDate", ""), ("note", "")]
            )
            // Then it is refused with a message to reload, and the other edit stands
            #expect(stale.status == .conflict)
            #expect(String(buffer: stale.body).contains("Reload it and edit again"))
        }
        #expect(try await b.purchasing.purchaseOrder(number: number).lines.map(\.line.quantity) == [7])
    }
}

extension WebTests {
    @Test func stockValuationChartsValueByCategoryAndLeavesOutWhatHasNoCost() async throws {
        // Given 24 Chai (Beverages) and 10 mustard (Condiments) received at cost; nothing else has a cost
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let number = try await Self.sentPurchase(fixture)
        _ = try await fixture.store.backoffice.purchasing.receive(
            number: number,
            lines: [ReceiptLine(productID: w.chai.key, quantity: 24), ReceiptLine(productID: w.mustard.key, quantity: 10)],
            requestKey: "all"
        )
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When the stock valuation report is opened
            let page = try await Self.page(client, manager, "/reports/stock-valuation")
            // Then its chart sums value by category, largest first: Beverages (74 Chai at 12.00; Côte and Old Tea have no
            // cost) before Condiments (15 mustard at 9.50)
            #expect(page.contains("<figcaption>Value by CategoryName</figcaption>"), "\(page)")
            let beverages = try #require(page.range(of: "<title>Beverages: 888.00</title>"))
            let condiments = try #require(page.range(of: "<title>Condiments: 142.50</title>"))
            #expect(beverages.lowerBound < condiments.lowerBound)
        }
    }
}

extension WebTests {
    @Test func aReceiveFormOpenedBeforeAColleaguesDeliveryIsRefusedAndBooksNothing() async throws {
        // Given two clerks with the same purchase order's page open, before anything arrived
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let number = try await Self.sentPurchase(fixture)
        try await fixture.test { client in
            let first = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let second = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            func form(_ page: String) throws -> [(String, String)] {
                let key = try #require(page.firstMatch(of: /name="requestKey" value="([^"]+)"/).map { String($0.1) })
                let before = try #require(page.firstMatch(of: /name="receivedBefore" value="([^"]+)"/).map { String($0.1) })
                return [("requestKey", key), ("receivedBefore", before), ("quantity-\(w.chai.key)", "24")]
            }
            let firstForm = try form(try await Self.page(client, first, "/purchases/\(number)"))
            let secondForm = try form(try await Self.page(client, second, "/purchases/\(number)"))
            // When both book the same 24 Chai, one after the other
            let booked = try await first.post(client, "/purchases/\(number)/receive", firstForm)
            let refused = try await second.post(client, "/purchases/\(number)/receive", secondForm)
            // Then the second is refused with what changed, and stock rose once
            #expect(booked.status == .seeOther)
            #expect(refused.status == .conflict)
            #expect(String(buffer: refused.body).contains("Someone booked a delivery on purchase order \(number) since this form was opened"))
        }
        #expect(try fixture.store.backoffice.catalogue.product(id: w.chai.key).product.unitsInStock == 74)
    }

    @Test func aReceiptIsReversedOnlyFromItsOwnPurchaseOrder() async throws {
        // Given two sent purchase orders, and a receipt on the second
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let one = try await Self.sentPurchase(fixture)
        let other = try await Self.sentPurchase(fixture)
        let received = try await fixture.store.backoffice.purchasing.receive(
            number: other,
            lines: [ReceiptLine(productID: w.chai.key, quantity: 4)],
            requestKey: "k"
        )
        let receipt = try #require(received.receipts.first?.movement.id)
        try await fixture.test { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            // When the receipt is reversed through the first order's address
            let wrong = try await manager.post(client, "/purchases/\(one)/receipts/\(receipt)/reverse", [])
            // Then that order has no such receipt, and nothing is reversed
            #expect(wrong.status == .notFound)
        }
        #expect(try await fixture.store.backoffice.purchasing.purchaseOrder(number: other).receipts.count == 1)
    }
}
