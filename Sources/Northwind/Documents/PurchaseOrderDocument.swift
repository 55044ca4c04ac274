import Foundation
import GRDB
import NorthwindStore

/// `content/purchase-order.json`: a purchase order as its supplier reads it, from the store that sent it.
public struct PurchaseOrderDocument: Codable, Sendable, Equatable {
    public struct Line: Codable, Sendable, Equatable {
        public var lineID: String
        public var product: DocumentProductRef
        public var quantity: Int
        /// Nil on an opening order, which records what was on order before purchase orders were kept.
        public var unitCost: Money?
        public var total: Money?
    }
    public struct Supplier: Codable, Sendable, Equatable {
        public var recordID: String
        public var companyName: String
        public var contactName: String?
        public var address: String?
        public var city: String?
        public var postalCode: String?
        public var country: String?
        public var phone: String?
    }
    public static let schemaVersion = 1
    public var schemaVersion = Self.schemaVersion
    public var number: String
    public var status: PurchaseOrderStatus
    public var supplier: Supplier
    /// The site whose order it is.
    public var site: String
    public var sentDate: LocalDate?
    public var expectedDate: LocalDate?
    public var note: String?
    public var lines: [Line]
    /// What the costed lines come to.
    public var total: Money
}

extension Documents {
    /// A sent purchase order (or one past sending) as its supplier reads it; a draft may still change.
    func purchaseOrderDocument(number: String) async throws(NorthwindError) -> (recordID: String, document: PurchaseOrderDocument) {
        let detail = try await backoffice.purchasing.purchaseOrder(number: number)
        guard detail.order.status != .draft else {
            throw .invalidState("Purchase order \(detail.order.number) is a draft: its lines may still change. Send it first.")
        }
        guard detail.order.sentAt != nil else {
            throw .invalidState("Purchase order \(detail.order.number) was cancelled before it was sent: there is nothing to print.")
        }
        let (supplier, refs, site) = try await read { db in
            (
                try NorthwindStore.Supplier.fetchOne(db, key: detail.order.supplierID),
                try Self.productRefs(db, ids: detail.lines.map(\.line.productID)),
                try detail.order.location ?? StoreMetadata.siteCode(db)
            )
        }
        let document = PurchaseOrderDocument(
            number: detail.order.number,
            status: detail.order.status,
            supplier: .init(
                recordID: supplier?.recordID ?? "",
                companyName: detail.supplierName,
                contactName: supplier?.contactName,
                address: supplier?.address,
                city: supplier?.city,
                postalCode: supplier?.postalCode,
                country: supplier?.country,
                phone: supplier?.phone
            ),
            site: site,
            sentDate: detail.order.sentAt.map { LocalDate($0.date) },
            expectedDate: detail.order.expectedDate,
            note: detail.order.note,
            lines: detail.lines.map { state in
                PurchaseOrderDocument.Line(
                    lineID: state.line.recordID,
                    product: refs[state.line.productID] ?? DocumentProductRef(recordID: "", name: state.productName),
                    quantity: state.line.quantity,
                    unitCost: state.line.unitCost,
                    total: state.value
                )
            },
            total: detail.value ?? .zero
        )
        return (detail.order.recordID, document)
    }

    /// The printable purchase order: HTML with no script, as the package's rendition holds it.
    public func purchaseOrderRendition(number: String) async throws(NorthwindError) -> Data {
        try Renditions.render("purchase-order", PurchaseOrderRendition(document: try await purchaseOrderDocument(number: number).document))
    }

    /// Writes a sent purchase order as a `.nwdoc` package to `file`.
    public func exportPurchaseOrder(number: String, to file: URL) async throws(NorthwindError) {
        let (recordID, document) = try await purchaseOrderDocument(number: number)
        try Self.writePackage(
            PackageParts(
                kind: .purchaseOrder,
                documentID: recordID,
                title: "Purchase order \(document.number)",
                content: try Self.contentJSON(document),
                rendition: try Renditions.render("purchase-order", PurchaseOrderRendition(document: document)),
                lineCount: document.lines.count
            ),
            to: file
        )
    }
}

struct PurchaseOrderRendition {
    struct Line {
        var name: String
        var quantity: Int
        var unitCost: String
        var total: String
    }
    var number: String
    var status: String
    var site: String
    var supplier: PurchaseOrderDocument.Supplier
    var sentDate: String
    /// Optional, as Mustache takes an empty string for present.
    var expectedDate: String?
    var note: String?
    var lines: [Line]
    var total: String

    init(document: PurchaseOrderDocument) {
        number = document.number
        status = document.status.words
        site = document.site
        supplier = document.supplier
        sentDate = document.sentDate?.description ?? ""
        expectedDate = document.expectedDate?.description
        note = document.note.flatMap { $0.isEmpty ? nil : $0 }
        lines = document.lines.map {
            Line(
                name: $0.product.name,
                quantity: $0.quantity,
                unitCost: $0.unitCost?.description ?? "to be agreed",
                total: $0.total?.description ?? ""
            )
        }
        total = document.total.description
    }
}

/// `content/invoice.json` or `content/credit-note.json`: an issued invoice or credit note, as it was issued. Money
/// is in cents, rates and discounts in hundredths of a percent, as in the store.
public struct InvoiceDocument: Codable, Sendable, Equatable {
    public struct Line: Codable, Sendable, Equatable {
        public var lineID: String
        public var position: Int
        /// Nil for freight.
        public var productID: Int64?
        public var description: String
        public var quantity: Int
        public var unitPrice: Money
        public var discountBasisPoints: Int
        public var net: Money
        public var taxBasisPoints: Int
        public var taxName: String
        /// Nil when the document rounds tax per rate.
        public var tax: Money?
    }
    public struct Rate: Codable, Sendable, Equatable {
        public var taxBasisPoints: Int
        public var taxName: String
        public var net: Money
        public var tax: Money
    }
    public static let schemaVersion = 1
    public var schemaVersion = Self.schemaVersion
    public var kind: InvoiceKind
    public var number: String
    public var issuedDate: LocalDate
    public var orderNumber: String
    public var shipment: Int
    public var corrects: String?
    public var seller: InvoiceParty
    public var buyer: InvoiceParty
    public var rounding: TaxRounding
    public var lines: [Line]
    public var taxes: [Rate]
    public var net: Money
    public var tax: Money
    public var gross: Money
}

extension Documents {
    /// Writes an issued invoice or credit note as a `.nwdoc` package: its content from what was issued, and its
    /// rendition as it was stored when issued.
    public func exportInvoice(number: String, kind: InvoiceKind, to file: URL) async throws(NorthwindError) {
        let detail = try await backoffice.invoicing.invoice(number: number)
        let i = detail.invoice
        guard i.kind == kind else { throw .notFound(entity: kind == .invoice ? "invoice" : "credit note", key: number) }
        let document = InvoiceDocument(
            kind: i.kind,
            number: i.number,
            issuedDate: i.issuedDate,
            orderNumber: detail.orderNumber,
            shipment: detail.shipmentSequence,
            corrects: detail.corrects,
            seller: detail.seller,
            buyer: detail.buyer,
            rounding: i.rounding,
            lines: detail.lines.map {
                InvoiceDocument.Line(
                    lineID: $0.recordID,
                    position: $0.position,
                    productID: $0.productID,
                    description: $0.description,
                    quantity: $0.quantity,
                    unitPrice: $0.unitPrice,
                    discountBasisPoints: $0.discountBasisPoints,
                    net: $0.net,
                    taxBasisPoints: $0.taxBasisPoints,
                    taxName: $0.taxName,
                    tax: $0.tax
                )
            },
            taxes: detail.taxes.map { InvoiceDocument.Rate(taxBasisPoints: $0.rate.basisPoints, taxName: $0.rate.name, net: $0.net, tax: $0.tax) },
            net: i.net,
            tax: i.tax,
            gross: i.gross
        )
        try Self.writePackage(
            PackageParts(
                kind: kind == .invoice ? .invoice : .creditNote,
                documentID: i.recordID,
                title: "\(kind.words) \(i.number)",
                content: try Self.contentJSON(document),
                rendition: Data(i.rendition.utf8),
                lineCount: detail.lines.count
            ),
            to: file
        )
    }
}
