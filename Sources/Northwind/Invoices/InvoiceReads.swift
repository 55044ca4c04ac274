import Foundation
import GRDB
import NorthwindStore

/// An issued invoice or credit note with its parties, lines and tax per rate, as it was issued.
public struct InvoiceDetail: Sendable, Codable, Equatable {
    public var invoice: Invoice
    public var seller: InvoiceParty
    public var buyer: InvoiceParty
    public var orderNumber: String
    /// The shipment it invoices, or whose return it credits: its number within the order.
    public var shipmentSequence: Int
    public var lines: [InvoiceLine]
    public var taxes: [TaxSummary]
    /// The invoice a credit note corrects.
    public var corrects: String?
    /// The credit notes that correct an invoice, in the order they were issued.
    public var creditNotes: [String]

    static func json(_ party: InvoiceParty) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(party), as: UTF8.self)
    }
}

/// An invoice or credit note in a list.
public struct InvoiceSummary: Sendable, Codable, Equatable {
    public var kind: InvoiceKind
    public var number: String
    public var site: String
    public var year: Int
    public var counter: Int
    public var issuedDate: LocalDate
    public var orderNumber: String
    public var customerCode: String
    public var customerName: String
    public var net: Money
    public var tax: Money
    public var gross: Money
    public var corrects: String?
}

extension Invoicing {
    /// One invoice or credit note by its number.
    public func invoice(number: String) async throws(NorthwindError) -> InvoiceDetail {
        try await read { db in
            let matches = try Invoice.fetchAll(db.cachedStatement(sql: "SELECT * FROM invoices WHERE number = ?"), arguments: [number])
            guard let invoice = matches.first else { throw NorthwindError.notFound(entity: "invoice", key: number) }
            if matches.count > 1 {
                throw NorthwindError.invalid("number", "\(number) names \(matches.count) documents of different sites; ask by site, year and counter")
            }
            return try Self.detail(invoice, db)
        }
    }

    /// One invoice or credit note by its place in its series: what pages and the API address.
    public func invoice(kind: InvoiceKind, site: String, year: Int, counter: Int) async throws(NorthwindError) -> InvoiceDetail {
        try await read { db in
            guard
                let invoice = try Invoice.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM invoices WHERE site = ? AND kind = ? AND year = ? AND counter = ?"),
                    arguments: [site, kind, year, counter]
                )
            else { throw NorthwindError.notFound(entity: kind == .invoice ? "invoice" : "credit note", key: "\(site)/\(year)/\(counter)") }
            return try Self.detail(invoice, db)
        }
    }

    /// Invoices and credit notes, newest first: of one customer, of one order, or all.
    public func invoices(
        customerCode: String? = nil,
        orderNumber: String? = nil,
        limit: Int = 100,
        offset: Int = 0
    ) async throws(NorthwindError) -> [InvoiceSummary] {
        try await read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let customerCode {
                let customer = try Records.customer(code: customerCode, db)
                conditions.append("o.customerID = ?")
                arguments += [customer.id]
            }
            if let orderNumber {
                let order = try Orders.fetchOrder(number: orderNumber, db)
                conditions.append("i.orderID = ?")
                arguments += [order.id]
            }
            arguments += [limit, offset]
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT i.kind, i.number, i.site, i.year, i.counter, i.issuedDate, o.number, c.code, c.companyName,
                      i.netCents, i.taxCents, i.grossCents, (SELECT number FROM invoices WHERE id = i.correctsID)
                    FROM invoices i JOIN orders o ON o.id = i.orderID JOIN customers c ON c.id = o.customerID
                    \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                    ORDER BY i.issuedDate DESC, i.id DESC LIMIT ? OFFSET ?
                    """,
                arguments: arguments
            ).map { row in
                InvoiceSummary(
                    kind: row[0],
                    number: row[1],
                    site: row[2],
                    year: row[3],
                    counter: row[4],
                    issuedDate: row[5],
                    orderNumber: row[6],
                    customerCode: row[7],
                    customerName: row[8],
                    net: Money(cents: row[9]),
                    tax: Money(cents: row[10]),
                    gross: Money(cents: row[11]),
                    corrects: row[12]
                )
            }
        }
    }

    /// The printable rendition, as issued.
    public func rendition(kind: InvoiceKind, site: String, year: Int, counter: Int) async throws(NorthwindError) -> Data {
        Data(try await invoice(kind: kind, site: site, year: year, counter: counter).invoice.rendition.utf8)
    }

    static func detail(_ invoice: Invoice, _ db: Database) throws -> InvoiceDetail {
        let lines = try InvoiceLine.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM invoice_lines WHERE invoiceID = ? ORDER BY position"),
            arguments: [invoice.id]
        )
        let decoder = JSONDecoder()
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT o.number, s.sequence, (SELECT number FROM invoices WHERE id = ?) FROM orders o, shipments s
                    WHERE o.id = ? AND s.id = ?
                    """
            ),
            arguments: [invoice.correctsID, invoice.orderID, invoice.shipmentID]
        )
        let creditNotes = try String.fetchAll(
            db.cachedStatement(sql: "SELECT number FROM invoices WHERE correctsID = ? ORDER BY id"),
            arguments: [invoice.id]
        )
        return InvoiceDetail(
            invoice: invoice,
            seller: try decoder.decode(InvoiceParty.self, from: Data(invoice.seller.utf8)),
            buyer: try decoder.decode(InvoiceParty.self, from: Data(invoice.buyer.utf8)),
            orderNumber: row?[0] ?? "",
            shipmentSequence: row?[1] ?? 0,
            lines: lines,
            taxes: TaxSummary.of(lines, rounding: invoice.rounding),
            corrects: row?[2],
            creditNotes: creditNotes
        )
    }
}

/// An issued document as a person reads it, every value as text: what the stored rendition's template and the
/// invoice page's read.
public struct InvoiceRendition: Sendable {
    public struct Line: Sendable {
        public var position: Int
        public var description: String
        public var quantity: Int
        public var unitPrice: String
        public var discount: String
        public var net: String
        public var rate: String
        public var tax: String
    }
    public struct Rate: Sendable {
        public var rate: String
        public var net: String
        public var tax: String
        public var gross: String
    }
    public var title: String
    public var number: String
    public var issuedDate: String
    public var seller: InvoiceParty
    public var buyer: InvoiceParty
    public var orderNumber: String
    public var shipment: Int
    public var corrects: String?
    /// An invoice of the same shipment set aside, its number having been given twice.
    public var replaces: String?
    public var lines: [Line]
    public var rates: [Rate]
    public var net: String
    public var tax: String
    public var gross: String
    public var rounding: String

    public init(_ detail: InvoiceDetail) {
        title = detail.invoice.kind.words
        number = detail.invoice.number
        issuedDate = detail.invoice.issuedDate.description
        seller = detail.seller
        buyer = detail.buyer
        orderNumber = detail.orderNumber
        shipment = detail.shipmentSequence
        corrects = detail.corrects
        lines = detail.lines.map {
            Line(
                position: $0.position,
                description: $0.description,
                quantity: $0.quantity,
                unitPrice: $0.unitPrice.description,
                discount: $0.discountBasisPoints == 0 ? "" : TaxRates.percentText($0.discountBasisPoints),
                net: $0.net.description,
                rate: "\($0.taxName) \(TaxRates.percentText($0.taxBasisPoints))",
                tax: $0.tax?.description ?? ""
            )
        }
        rates = detail.taxes.map {
            Rate(rate: "\($0.rate.name) \($0.rate.percent)", net: $0.net.description, tax: $0.tax.description, gross: $0.gross.description)
        }
        net = detail.invoice.net.description
        tax = detail.invoice.tax.description
        gross = detail.invoice.gross.description
        rounding = detail.invoice.rounding == .line ? "Tax rounded per line." : "Tax rounded per rate, on the sum of its lines."
    }
}
