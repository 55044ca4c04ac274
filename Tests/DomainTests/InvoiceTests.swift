import Foundation
import GRDB
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Invoices, returns and credit notes")
struct InvoiceTests {
    /// An order for 8 Grandma's Mustard (25.00, 5 on the shelf) and 12 Chai (18.00 less 15 %).
    func shortOrder(_ w: World, _ b: Backoffice, freight: Money = .zero) async throws -> String {
        let draft = OrderDraft(
            customerCode: "VINET",
            employeeID: w.nancy.id,
            orderDate: LocalDate("2026-11-20"),
            requiredDate: LocalDate("2026-12-18"),
            freight: freight,
            lines: [.init(productID: w.mustard.key, quantity: 8), .init(productID: w.chai.key, quantity: 12, discount: 0.15)]
        )
        return try await b.orders.create(draft).order.number
    }

    func putInForce(_ b: Backoffice) async throws {
        _ = try await Settings(sources: SettingsSources(), backoffice: b)
    }

    @Test func aShipmentIsInvoicedAtTheOrdersPricesWithTaxPerLine() async throws {
        // Given condiments taxed at 8 % (beverages take the first rate, 23 %) and an order shipped in part
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        try await b.invoicing.setTaxRate(categoryName: "Condiments", percent: "8")
        let number = try await shortOrder(w, b)
        // When the packer ships what is available (5 mustards, 12 chai)
        let shipment = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        // Then its invoice, the first of the site's series for 2026, holds those units at the order's prices:
        // mustard 5 × 25.00 = 125.00 net, 10.00 tax; chai 12 × 18.00 less 15 % = 183.60 net, 42.228 → 42.23 tax
        let invoice = try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        let site = invoice.invoice.site
        #expect(invoice.invoice.number == "\(site)/2026/000001")
        #expect(invoice.lines.map(\.quantity) == [5, 12])
        #expect(invoice.lines.map(\.net) == [Money(cents: 12500), Money(cents: 18360)])
        #expect(invoice.lines.map(\.tax) == [Money(cents: 1000), Money(cents: 4223)])
        #expect(invoice.lines.map(\.taxName) == ["Reduced", "Standard"])
        #expect((invoice.invoice.net, invoice.invoice.tax, invoice.invoice.gross) == (Money(cents: 30860), Money(cents: 5223), Money(cents: 36083)))
        #expect(invoice.buyer.name == "Vins et alcools Chevalier")
        #expect(invoice.seller.name == "Northwind Traders")
    }

    @Test func perRateRoundingRoundsTheSumOfALinesNetsOnce() async throws {
        // Given three products at 0.10, tax at 23 %, rounded per rate
        let store = try TemporaryStore()
        let b = store.backoffice
        let w = try await World.make(b)
        try await b.settings.set("tax.rounding", "rate")
        try await putInForce(b)
        var ids: [Int64] = []
        for name in ["Clove", "Mace", "Anise"] {
            ids.append(
                try await b.catalogue.create(Product(name: name, categoryID: w.beverages.id, unitPrice: Money(cents: 10), unitsInStock: 5)).key
            )
        }
        let order = try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                orderDate: LocalDate("2026-11-20"),
                lines: ids.map { .init(productID: $0, quantity: 1) }
            )
        )
        // When it ships whole
        let shipment = try await b.orders.shipAvailable(number: order.order.number, shippedDate: LocalDate("2026-11-21"))
        // Then the tax is 23 % of 0.30 = 0.069 → 0.07, where per line it would be 3 × 0.02 = 0.06
        let invoice = try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        #expect(invoice.invoice.rounding == .rate)
        #expect(invoice.lines.map(\.tax) == [nil, nil, nil])
        #expect(invoice.taxes.map(\.tax) == [Money(cents: 7)])
        #expect(invoice.invoice.gross == Money(cents: 37))
    }

    @Test func perLineRoundingRoundsEachLine() async throws {
        // Given the same three products at 0.10 and the default rounding, per line
        let store = try TemporaryStore()
        let b = store.backoffice
        let w = try await World.make(b)
        var ids: [Int64] = []
        for name in ["Clove", "Mace", "Anise"] {
            ids.append(
                try await b.catalogue.create(Product(name: name, categoryID: w.beverages.id, unitPrice: Money(cents: 10), unitsInStock: 5)).key
            )
        }
        let order = try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                orderDate: LocalDate("2026-11-20"),
                lines: ids.map { .init(productID: $0, quantity: 1) }
            )
        )
        // When it ships whole
        let shipment = try await b.orders.shipAvailable(number: order.order.number, shippedDate: LocalDate("2026-11-21"))
        // Then each line's 0.023 rounds to 0.02: 0.06 in all
        let invoice = try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        #expect(invoice.lines.map(\.tax) == Array(repeating: Money(cents: 2), count: 3))
        #expect(invoice.invoice.tax == Money(cents: 6))
    }

    @Test func theFirstShipmentsInvoiceCarriesTheFreight() async throws {
        // Given an order with 12.50 freight, shipped in two parts
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b, freight: Money(cents: 1250))
        let first = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 3)
        let second = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-22"))
        // Then the first invoice has a freight line and the second has none
        let one = try await b.invoicing.invoice(number: try #require(first.invoiceNumber))
        let two = try await b.invoicing.invoice(number: try #require(second.invoiceNumber))
        #expect(one.lines.last?.description == "Freight")
        #expect(one.lines.last?.net == Money(cents: 1250))
        #expect(two.lines.map(\.description) == ["Grandma's Mustard"])
        #expect(two.invoice.counter == one.invoice.counter + 1)
    }

    @Test func concurrentShipmentsTakeNumbersOneToNWithoutAGapOrARepeat() async throws {
        // Given ten orders, each for one chai
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        var numbers: [String] = []
        for _ in 0..<10 {
            numbers.append(
                try await b.orders.create(
                    OrderDraft(
                        customerCode: "VINET",
                        employeeID: w.nancy.id,
                        orderDate: LocalDate("2026-11-20"),
                        lines: [.init(productID: w.chai.key, quantity: 1)]
                    )
                )
                .order.number
            )
        }
        // When all ten ship at once, each from two tasks with the same request key
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in numbers {
                for _ in 0..<2 {
                    group.addTask {
                        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"), requestKey: "ship-\(number)")
                    }
                }
            }
            try await group.waitForAll()
        }
        // Then the site's invoices for 2026 are numbered 1 to 10, one per shipment
        #expect(try store.count("SELECT count(*) FROM shipments") == 10)
        let counters = try await store.store.pool.read { db in try Int.fetchAll(db, sql: "SELECT counter FROM invoices ORDER BY counter") }
        #expect(counters == Array(1...10))
    }

    @Test func aRefusedShipmentTakesNoNumber() async throws {
        // Given an order for more chai than is ordered, refused
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        let error = await northwindError { _ = try await b.orders.ship(number: number, lines: [ShipLine(productID: w.chai.key, quantity: 13)]) }
        #expect(error?.fields == ["lines[0].quantity"])
        // When the next shipment goes
        let shipment = try await b.orders.ship(
            number: number,
            lines: [ShipLine(productID: w.chai.key, quantity: 12)],
            shippedDate: LocalDate("2026-11-21")
        )
        // Then its invoice is the first of the series
        #expect(try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber)).invoice.counter == 1)
    }

    @Test func theSeriesStartsAgainEachYear() async throws {
        // Given an order of 2025 shipped in part on 31 December 2025
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await b.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: w.nancy.id,
                orderDate: LocalDate("2025-12-20"),
                lines: [.init(productID: w.mustard.key, quantity: 8)]
            )
        ).order.number
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2025-12-31"))
        _ = try await b.stock.receive(productID: w.mustard.key, quantity: 3)
        // When the rest ships on 2 January 2026
        let second = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-01-02"))
        // Then its invoice is the first of 2026
        let invoice = try await b.invoicing.invoice(number: try #require(second.invoiceNumber))
        #expect((invoice.invoice.year, invoice.invoice.counter) == (2026, 1))
        #expect(invoice.invoice.number.hasSuffix("/2026/000001"))
    }

    @Test func aShipmentDatedAfterTodayIsRefusedAndTakesNoNumber() async throws {
        // Given an order
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        // When a shipment is dated tomorrow
        let tomorrow = LocalDate(Date().addingTimeInterval(86_400 * 2))
        let error = await northwindError { _ = try await b.orders.shipAvailable(number: number, shippedDate: tomorrow) }
        // Then it is refused, naming the field, and nothing was issued
        #expect(error?.fields == ["shippedDate"])
        #expect(try store.count("SELECT count(*) FROM invoices") == 0)
    }

    @Test func aReturnInPartsCreditsInAllExactlyWhatTheInvoiceCharged() async throws {
        // Given an invoice line of 2 at 1.01 less 50 %: net 1.01, tax 0.23
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let product = try await b.catalogue.create(
            Product(name: "Penny sweets", categoryID: w.beverages.id, unitPrice: Money(cents: 101), unitsInStock: 5)
        )
        let order = try await b.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: product.key, quantity: 2, discount: 0.5)])
        ).order.number
        let shipment = try await b.orders.shipAvailable(number: order)
        // When the 2 units come back one at a time
        for _ in 0..<2 {
            _ = try await b.invoicing.takeReturn(orderNumber: order, shipmentSequence: 1, lines: [ShipLine(productID: product.key, quantity: 1)])
        }
        // Then the two credit notes credit 0.51 + 0.50 net and 0.12 + 0.11 tax: the invoice's 1.01 and 0.23
        let invoice = try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        let credits = try await b.invoicing.invoices(orderNumber: order).filter { $0.kind == .creditNote }
        #expect((invoice.invoice.net, invoice.invoice.tax) == (Money(cents: 101), Money(cents: 23)))
        #expect(credits.map(\.net.cents).reduce(0, +) == 101)
        #expect(credits.map(\.tax.cents).reduce(0, +) == 23)
    }

    @Test func anIssuedInvoiceKeepsWhatItSaidWhenTheCustomerChanges() async throws {
        // Given an issued invoice
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let shipment = try await b.orders.shipAvailable(number: try await shortOrder(w, b), shippedDate: LocalDate("2026-11-21"))
        let before = try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber))
        // When the customer is renamed, and someone tries to change the invoice in the store
        var vinet = w.vinet
        vinet.companyName = "Chevalier SA"
        _ = try await b.records.update(vinet)
        let edit = await #expect(throws: DatabaseError.self) {
            try await b.store.pool.write { db in try db.execute(sql: "UPDATE invoices SET grossCents = 1, netCents = 1, taxCents = 0") }
        }
        // Then the invoice still names the buyer as it was, with its rendition as issued, and the edit was refused
        let after = try await b.invoicing.invoice(number: before.invoice.number)
        #expect(after == before)
        #expect(after.invoice.rendition.contains("Vins et alcools Chevalier"))
        #expect(edit?.message?.contains("never changes") == true)
    }

    @Test func aReturnBooksTheGoodsBackAndACreditNoteCorrectsTheInvoiceByExactlyTheReturnedLines() async throws {
        // Given a shipment of 5 mustards and 12 chai, invoiced
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        let shipment = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        // When the customer sends back 2 chai
        let returned = try await b.invoicing.takeReturn(
            orderNumber: number,
            shipmentSequence: 1,
            lines: [ShipLine(productID: w.chai.key, quantity: 2)],
            reason: "Damaged in transit",
            returnedDate: LocalDate("2026-11-24")
        )
        // Then 2 chai are back on the shelf, by one movement, and the first credit note credits 2 × 15.30 = 30.60 + 7.04
        #expect(try b.catalogue.product(id: w.chai.key).product.unitsInStock == 40)
        #expect(try store.count("SELECT count(*) FROM stock_movements WHERE reason = 'returned' AND returnLineID IS NOT NULL") == 1)
        let credit = try await b.invoicing.invoice(number: try #require(returned.creditNoteNumber))
        #expect(credit.invoice.kind == .creditNote)
        #expect(credit.invoice.number == "\(credit.invoice.site)/CN/2026/000001")
        #expect(credit.corrects == shipment.invoiceNumber)
        #expect(credit.lines.map(\.quantity) == [2])
        #expect((credit.invoice.net, credit.invoice.tax) == (Money(cents: 3060), Money(cents: 704)))
        #expect(try await b.invoicing.invoice(number: try #require(shipment.invoiceNumber)).creditNotes == [credit.invoice.number])
    }

    @Test func aReturnOfMoreThanTheShipmentCarriedIsRefusedAndChangesNothing() async throws {
        // Given a shipment of 12 chai, 10 of which came back already
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        _ = try await b.invoicing.takeReturn(orderNumber: number, shipmentSequence: 1, lines: [ShipLine(productID: w.chai.key, quantity: 10)])
        // When someone returns 3 more
        let error = await northwindError {
            _ = try await b.invoicing.takeReturn(orderNumber: number, shipmentSequence: 1, lines: [ShipLine(productID: w.chai.key, quantity: 3)])
        }
        // Then it is refused, naming the field and what is left, and nothing more was written
        #expect(error?.fields == ["lines[0].quantity"])
        #expect(error?.description.contains("2 unit(s)") == true)
        #expect(try store.count("SELECT count(*) FROM returns") == 1)
        #expect(try store.count("SELECT count(*) FROM invoices WHERE kind = 'creditNote'") == 1)
    }

    @Test func aReturnSentTwiceWithItsKeyIsBookedOnce() async throws {
        // Given a shipment
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let number = try await shortOrder(w, b)
        _ = try await b.orders.shipAvailable(number: number, shippedDate: LocalDate("2026-11-21"))
        // When the same return is sent twice at once with one key
        async let one = b.invoicing.takeReturn(
            orderNumber: number,
            shipmentSequence: 1,
            lines: [ShipLine(productID: w.chai.key, quantity: 1)],
            requestKey: "r1"
        )
        async let two = b.invoicing.takeReturn(
            orderNumber: number,
            shipmentSequence: 1,
            lines: [ShipLine(productID: w.chai.key, quantity: 1)],
            requestKey: "r1"
        )
        let (first, second) = try await (one, two)
        // Then one return, one movement and one credit note exist
        #expect(first == second)
        #expect(try store.count("SELECT count(*) FROM returns") == 1)
        #expect(try store.count("SELECT count(*) FROM stock_movements WHERE reason = 'returned'") == 1)
        #expect(try store.count("SELECT count(*) FROM invoices WHERE kind = 'creditNote'") == 1)
    }

    @Test func aNumberFormatWithoutACounterIsRefusedNamingTheSetting() async throws {
        // Given a store
        let store = try TemporaryStore()
        // When a manager sets a format without {counter}, then one without {year}
        let noCounter = await northwindError { try await store.backoffice.settings.set("invoices.numberFormat", "{site}/{year}") }
        let noYear = await northwindError { try await store.backoffice.settings.set("invoices.numberFormat", "{site}/{counter}") }
        // Then both are refused, naming the setting, and the default stands
        #expect(noCounter?.fields == ["invoices.numberFormat"])
        #expect(noCounter?.description.contains("{counter}") == true)
        #expect(noYear?.description.contains("{year}") == true)
        #expect(try await store.backoffice.settings.installation()["invoices.numberFormat"] == nil)
    }

    @Test func aTaxRateOutsideZeroToAHundredIsRefused() async throws {
        // Given a store
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        // When a rate of 101 % is listed, and a category is given a rate the list lacks
        let listed = await northwindError { try await store.backoffice.settings.set("tax.rates", "23 Standard; 101 Luxury") }
        let category = await northwindError { try await store.backoffice.invoicing.setTaxRate(categoryName: w.beverages.name, percent: "7") }
        // Then each is refused naming its field, and the category keeps no rate
        #expect(listed?.fields == ["tax.rates"])
        #expect(category?.fields == ["taxRate"])
        #expect(try store.count("SELECT count(*) FROM categories WHERE taxBasisPoints IS NOT NULL") == 0)
    }

    @Test func aCustomNumberFormatNumbersTheNextInvoice() {
        // Given a format with a padded counter and plain characters
        let format = "FV-{site}-{year}.{counter:4}"
        // When the 7th invoice of 2026 is numbered
        let number = NumberFormat.number(format, site: "KRK", year: 2026, counter: 7)
        // Then it reads as the format says
        #expect(NumberFormat.problem(format) == nil)
        #expect(number == "FV-KRK-2026.0007")
    }
}

extension NorthwindError {
    /// The fields a validation error names.
    fileprivate var fields: [String] {
        if case .invalid(let errors) = self { errors.map(\.field) } else { [] }
    }
}
