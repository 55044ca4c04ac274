import Foundation
import Northwind
import NorthwindStore

// Invoices', credit notes' and returns' JSON: the generated shapes of openapi.yaml filled from the domain's values,
// and the return's body read strictly, as a shipment's is.

typealias InvoiceBody = Components.Schemas.Invoice

extension Components.Schemas.InvoiceKind {
    init(_ kind: InvoiceKind) { self = kind == .invoice ? .invoice : .creditNote }
    var domain: InvoiceKind { self == .invoice ? .invoice : .creditNote }
}

extension Components.Schemas.InvoiceSummary {
    init(_ s: InvoiceSummary) {
        self.init(
            kind: .init(s.kind),
            number: s.number,
            site: s.site,
            year: s.year,
            counter: s.counter,
            issuedDate: s.issuedDate.description,
            orderNumber: s.orderNumber,
            customerCode: s.customerCode,
            customerName: s.customerName,
            net: s.net.description,
            tax: s.tax.description,
            gross: s.gross.description,
            corrects: s.corrects
        )
    }
}

extension Components.Schemas.InvoiceParty {
    init(_ p: InvoiceParty) { self.init(name: p.name, code: p.code, address: p.address, taxID: p.taxID, site: p.site) }
}

extension Components.Schemas.Invoice {
    init(_ d: InvoiceDetail) {
        let i = d.invoice
        self.init(
            summary: .init(
                kind: .init(i.kind),
                number: i.number,
                site: i.site,
                year: i.year,
                counter: i.counter,
                issuedDate: i.issuedDate.description,
                orderNumber: d.orderNumber,
                customerCode: d.buyer.code ?? "",
                customerName: d.buyer.name,
                net: i.net.description,
                tax: i.tax.description,
                gross: i.gross.description,
                corrects: d.corrects
            ),
            seller: .init(d.seller),
            buyer: .init(d.buyer),
            shipmentSequence: d.shipmentSequence,
            rounding: i.rounding == .line ? .line : .rate,
            lines: d.lines.map {
                .init(
                    position: $0.position,
                    description: $0.description,
                    productID: $0.productID.map(Int.init),
                    quantity: $0.quantity,
                    unitPrice: $0.unitPrice.description,
                    discountPercent: TaxRate(basisPoints: $0.discountBasisPoints, name: "").percent,
                    net: $0.net.description,
                    taxPercent: TaxRate(basisPoints: $0.taxBasisPoints, name: "").percent,
                    taxName: $0.taxName,
                    tax: $0.tax?.description
                )
            },
            taxes: d.taxes.map {
                .init(
                    taxPercent: $0.rate.percent,
                    taxName: $0.rate.name,
                    net: $0.net.description,
                    tax: $0.tax.description,
                    gross: $0.gross.description
                )
            },
            creditNotes: d.creditNotes
        )
    }
}

extension Components.Schemas.Return {
    init(_ r: ReturnDetail) {
        self.init(
            orderNumber: r.orderNumber,
            shipmentSequence: r.shipmentSequence,
            sequence: r.returned.sequence,
            returnedDate: r.returned.returnedDate.description,
            reason: r.returned.reason,
            lines: r.lines.map { .init(productID: Int($0.productID), productName: $0.productName, quantity: $0.quantity) },
            creditNoteNumber: r.creditNoteNumber
        )
    }
}

extension Wire {
    public static func invoice(_ detail: InvoiceDetail) -> some Encodable & Sendable { InvoiceBody(detail) }
    public static func invoices(_ list: [InvoiceSummary]) -> some Encodable & Sendable {
        Components.Schemas.InvoiceList(items: list.map(Components.Schemas.InvoiceSummary.init))
    }
    public static func returned(_ detail: ReturnDetail) -> some Encodable & Sendable { Components.Schemas.Return(detail) }
    public static func returns(_ list: [ReturnDetail]) -> some Encodable & Sendable {
        Components.Schemas.ReturnList(items: list.map(Components.Schemas.Return.init))
    }
}

/// A return as a client sends it (`ReturnInput`): the lines that came back, and why.
struct ReturnInput: Decodable, Hashable, Sendable {
    var lines: [ShipmentInput.Line]
    var reason: String?
    var requestKey: String?
    var returnedDate: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case lines, reason, requestKey, returnedDate }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, of: "a return")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        lines = try c.decode([ShipmentInput.Line].self, forKey: .lines)
        reason = try c.nullable(String.self, .reason) ?? nil
        requestKey = try c.decodeIfPresent(String.self, forKey: .requestKey)
        returnedDate = try c.nullable(String.self, .returnedDate) ?? nil
    }

    var date: LocalDate? {
        get throws(NorthwindError) {
            var parser = FieldParser()
            let date = parser.date(returnedDate, "returnedDate")
            try parser.throwIfAny()
            return date
        }
    }

    var returnLines: [ShipLine] { lines.map { ShipLine(productID: $0.productID, quantity: $0.quantity) } }
}
