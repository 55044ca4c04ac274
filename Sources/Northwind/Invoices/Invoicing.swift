import Foundation
import GRDB
import NorthwindStore

/// A party as an issued document names it, as it was that day.
public struct InvoiceParty: Codable, Sendable, Equatable {
    public var name: String
    /// The customer's code; nil for the seller.
    public var code: String?
    public var address: String?
    public var taxID: String?
    /// The seller's site.
    public var site: String?
}

/// One line to invoice or credit: what, how many, at what price and rate.
struct LineToInvoice {
    var shipmentLineID: Int64?
    var productID: Int64?
    var description: String
    var quantity: Int
    var unitPrice: Money
    var discountBasisPoints: Int
    var rate: TaxRate
    /// Units of the same invoice line credited before: a credit note credits the difference between what all the
    /// units returned so far come to and what was credited already, so that returning a line in parts credits, in
    /// all, exactly what the invoice charged for it.
    var creditedBefore = 0
}

extension Invoicing {
    // guide: begin gap-free-series
    /// The next number of `site`'s series of `kind` for `year`: one more than the highest issued, read in the write
    /// transaction that issues the document. SQLite lets one writer in at a time, so two issues never read the same
    /// highest; a failed issue rolls back, and takes no number; and UNIQUE (site, kind, year, counter) refuses a
    /// second document under a number, from whatever path it comes. A number a sync set aside stays taken
    /// (`SyncSetAside.swift`): the customer may hold that document.
    static func nextCounter(site: String, kind: InvoiceKind, year: Int, _ db: Database) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT max(
                      ifnull((SELECT max(counter) FROM invoices WHERE site = ?1 AND kind = ?2 AND year = ?3), 0),
                      ifnull((SELECT max(counter) FROM sync_set_aside WHERE tableName = 'invoices' AND site = ?1 AND kind = ?2 AND year = ?3), 0)) + 1
                    """
            ),
            arguments: [site, kind, year]
        ) ?? 1
    }
    // guide: end gap-free-series

    /// Issues the invoice of a shipment just written, in its transaction: the shipment's lines at the order's
    /// prices and discounts, the order's freight with its first shipment, tax as the rules say.
    /// `replaces`: the number of an invoice of this shipment set aside, its number having been given twice.
    static func issueInvoice(for shipment: Shipment, of order: Order, rules: InvoiceRules, replaces: String? = nil, _ db: Database) throws -> Invoice
    {
        var lines = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT s.id, l.productID, p.name, s.quantity, l.unitPriceCents, l.discount,
                      coalesce(p.taxBasisPoints, c.taxBasisPoints) AS rate
                    FROM shipment_lines s JOIN order_lines l ON l.id = s.orderLineID JOIN products p ON p.id = l.productID
                    LEFT JOIN categories c ON c.id = p.categoryID
                    WHERE s.shipmentID = ? ORDER BY l.id
                    """
            ),
            arguments: [shipment.id]
        ).map { row in
            LineToInvoice(
                shipmentLineID: row[0],
                productID: row[1],
                description: row[2],
                quantity: row[3],
                unitPrice: Money(cents: row[4]),
                discountBasisPoints: TaxArithmetic.discountBasisPoints(row[5]),
                rate: rules.rate(basisPoints: row["rate"])
            )
        }
        if shipment.sequence == 1, order.freight > .zero {
            lines.append(
                LineToInvoice(
                    description: "Freight",
                    quantity: 1,
                    unitPrice: order.freight,
                    discountBasisPoints: 0,
                    rate: rules.rate(basisPoints: nil)
                )
            )
        }
        let buyer = try buyer(customerID: order.customerID, db)
        return try issue(
            .invoice,
            lines,
            issuedDate: shipment.shippedDate,
            order: order,
            shipment: shipment,
            // Issued again, its record ID is nobody's to guess (a record of that ID written first would block it).
            source: replaces == nil ? shipment.recordID : "\(shipment.recordID):again:\(newRecordID())",
            buyer: buyer,
            rounding: rules.rounding,
            rules: rules,
            replaces: replaces,
            db
        )
    }

    /// Writes one invoice or credit note under the next number of its series, with its lines and its rendition.
    /// Its record ID is made from its source (the shipment or the return) and its number, as a shipment's is.
    static func issue(
        _ kind: InvoiceKind,
        _ lines: [LineToInvoice],
        issuedDate: LocalDate,
        order: Order,
        shipment: Shipment,
        returnID: Int64? = nil,
        corrects: Invoice? = nil,
        source: String,
        buyer: InvoiceParty,
        rounding: TaxRounding,
        rules: InvoiceRules,
        replaces: String? = nil,
        _ db: Database
    ) throws -> Invoice {
        let site = try StoreMetadata.siteCode(db)
        let counter = try nextCounter(site: site, kind: kind, year: issuedDate.year, db)
        let format = kind == .invoice ? rules.numberFormat : rules.creditNoteNumberFormat
        let number = NumberFormat.number(format, site: site, year: issuedDate.year, counter: counter)
        let seller = InvoiceParty(
            name: rules.sellerName,
            address: rules.sellerAddress.isEmpty ? nil : rules.sellerAddress,
            taxID: rules.sellerTaxID.isEmpty ? nil : rules.sellerTaxID,
            site: site
        )
        let recordID = StockMovement.derivedRecordID("northwind-\(kind.rawValue):\(source):\(number)")
        let priced = price(lines, kind: kind, recordID: recordID, rounding: rounding)
        let taxes = TaxSummary.of(priced, rounding: rounding)
        let net = Money(cents: taxes.map(\.net.cents).reduce(0, +))
        let tax = Money(cents: taxes.map(\.tax.cents).reduce(0, +))
        var invoice = Invoice(
            recordID: recordID,
            kind: kind,
            site: site,
            year: issuedDate.year,
            counter: counter,
            number: number,
            orderID: order.id ?? 0,
            shipmentID: shipment.id ?? 0,
            returnID: returnID,
            correctsID: corrects?.id,
            issuedDate: issuedDate,
            seller: try InvoiceDetail.json(seller),
            buyer: try InvoiceDetail.json(buyer),
            rounding: rounding,
            net: net,
            tax: tax,
            gross: Money(cents: net.cents + tax.cents),
            rendition: "",
            createdAt: .now
        )
        let detail = InvoiceDetail(
            invoice: invoice,
            seller: seller,
            buyer: buyer,
            orderNumber: order.number,
            shipmentSequence: shipment.sequence,
            lines: priced,
            taxes: taxes,
            corrects: corrects?.number,
            creditNotes: []
        )
        var rendition = InvoiceRendition(detail)
        rendition.replaces = replaces
        invoice.rendition = String(decoding: try Renditions.render("invoice", rendition), as: UTF8.self)
        try invoice.insert(db)
        invoice.id = db.lastInsertedRowID
        for var line in priced {
            line.invoiceID = invoice.id ?? 0
            try line.insert(db)
        }
        return invoice
    }

    /// Each line's net (and its tax, when rounded per line), in its place on the document.
    static func price(_ lines: [LineToInvoice], kind: InvoiceKind, recordID: String, rounding: TaxRounding) -> [InvoiceLine] {
        lines.enumerated().map { index, line in
            func net(_ units: Int) -> Money {
                TaxArithmetic.net(unitPrice: line.unitPrice, quantity: units, discountBasisPoints: line.discountBasisPoints)
            }
            func tax(_ units: Int) -> Money { TaxArithmetic.tax(on: net(units), basisPoints: line.rate.basisPoints) }
            let (before, after) = (line.creditedBefore, line.creditedBefore + line.quantity)
            let net = Money(cents: net(after).cents - net(before).cents)
            return InvoiceLine(
                recordID: StockMovement.derivedRecordID("northwind-\(kind.rawValue)-line:\(recordID):\(index + 1)"),
                invoiceID: 0,
                position: index + 1,
                shipmentLineID: line.shipmentLineID,
                productID: line.productID,
                description: String(line.description.prefix(200)),
                quantity: line.quantity,
                unitPrice: line.unitPrice,
                discountBasisPoints: line.discountBasisPoints,
                net: net,
                taxBasisPoints: line.rate.basisPoints,
                taxName: line.rate.name,
                tax: rounding == .line ? Money(cents: tax(after).cents - tax(before).cents) : nil
            )
        }
    }

    /// The buyer as the customer's record says today.
    static func buyer(customerID: Int64, _ db: Database) throws -> InvoiceParty {
        guard let customer = try Customer.fetchOne(db, key: customerID) else {
            throw NorthwindError.notFound(entity: "customer", key: "#\(customerID)")
        }
        let place = [
            customer.address, [customer.postalCode, customer.city].compactMap { $0 }.joined(separator: " "), customer.region, customer.country,
        ]
        .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
        return InvoiceParty(name: customer.companyName, code: customer.code, address: place.isEmpty ? nil : place)
    }
}

extension InvoiceRules {
    /// The rate `basisPoints` names (a category's or a product's), or the first listed when it names none. A rate
    /// no longer listed keeps its value, named by its percentage.
    func rate(basisPoints: Int?) -> TaxRate {
        guard let basisPoints else { return rates[0] }
        return rates.first { $0.basisPoints == basisPoints } ?? TaxRate(basisPoints: basisPoints, name: "VAT \(TaxRates.percentText(basisPoints))")
    }
}

/// One rate's part of an invoice: the sum of its lines' nets, its tax and gross.
public struct TaxSummary: Sendable, Codable, Equatable {
    public var rate: TaxRate
    public var net: Money
    public var tax: Money
    public var gross: Money { Money(cents: net.cents + tax.cents) }

    /// Per rate, in the order the lines first name it: per line, the sum of the lines' rounded taxes; per rate,
    /// the tax on the sum of the nets, rounded once.
    static func of(_ lines: [InvoiceLine], rounding: TaxRounding) -> [TaxSummary] {
        var order: [Int] = []
        var byRate: [Int: TaxSummary] = [:]
        for line in lines {
            var summary =
                byRate[line.taxBasisPoints] ?? TaxSummary(rate: TaxRate(basisPoints: line.taxBasisPoints, name: line.taxName), net: .zero, tax: .zero)
            if byRate[line.taxBasisPoints] == nil { order.append(line.taxBasisPoints) }
            summary.net = Money(cents: summary.net.cents + line.net.cents)
            summary.tax = Money(cents: summary.tax.cents + (line.tax?.cents ?? 0))
            byRate[line.taxBasisPoints] = summary
        }
        return order.compactMap { rate in
            guard var summary = byRate[rate] else { return nil }
            if rounding == .rate { summary.tax = TaxArithmetic.tax(on: summary.net, basisPoints: rate) }
            return summary
        }
    }
}
