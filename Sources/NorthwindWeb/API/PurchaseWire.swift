import Foundation
import Northwind
import NorthwindStore

// Purchasing's JSON: the generated shapes of openapi.yaml, filled from the domain's values, and the two request
// bodies read strictly (unknown fields and out-of-range numbers named), as orders' are.

typealias PurchaseOrderBody = Components.Schemas.PurchaseOrder

extension Components.Schemas.PurchaseOrder {
    init(_ detail: PurchaseOrderDetail) {
        let o = detail.order
        self.init(
            closedAt: o.closedAt?.description,
            createdAt: o.createdAt.description,
            expectedDate: o.expectedDate?.description,
            late: detail.isLate,
            lines: detail.lines.map { state in
                .init(
                    outstanding: state.outstanding,
                    productID: Int(state.line.productID),
                    productName: state.productName,
                    quantity: state.line.quantity,
                    received: state.received,
                    unitCost: state.line.unitCost?.description
                )
            },
            location: o.location,
            note: o.note,
            number: o.number,
            opening: o.opening,
            outstanding: detail.outstanding,
            receipts: detail.receipts.map(Components.Schemas.Receipt.init),
            recordID: o.recordID,
            sentAt: o.sentAt?.description,
            status: .wire(o.status),
            supplierID: Int(o.supplierID),
            supplierName: detail.supplierName,
            version: o.version
        )
    }
}

extension Components.Schemas.Receipt {
    init(_ entry: ReceiptEntry) {
        let m = entry.movement
        self.init(
            averageCost: m.averageCost?.description,
            createdAt: m.createdAt.description,
            id: Int(m.id ?? 0),
            kind: m.reason == .receiptReversal ? .reversal : .receipt,
            note: m.note,
            overReceipt: m.overReceipt,
            productID: Int(m.productID),
            productName: entry.productName,
            quantity: m.delta,
            reversed: entry.reversed,
            reversesID: m.reversesID.map(Int.init),
            unitCost: m.unitCost?.description
        )
    }
}

extension Components.Schemas.PurchaseOrderSummary {
    init(_ summary: PurchaseOrderSummary) {
        let o = summary.order
        self.init(
            expectedDate: o.expectedDate?.description,
            late: summary.isLate,
            lineCount: summary.lineCount,
            number: o.number,
            opening: o.opening,
            outstanding: summary.outstanding,
            status: o.status.rawValue,
            supplierID: Int(o.supplierID),
            supplierName: summary.supplierName,
            total: summary.total.description,
            uncostedLines: summary.uncostedLines
        )
    }
}

extension Components.Schemas.ReorderProposal {
    init(_ proposals: [ReorderProposal], targetCover: Decimal) {
        self.init(
            suppliers: proposals.map { proposal in
                .init(
                    leadTimeDays: proposal.leadTimeDays,
                    lines: proposal.lines.map { line in
                        .init(
                            lastCost: line.lastCost?.description,
                            productID: Int(line.productID),
                            productName: line.productName,
                            quantity: line.quantity,
                            reorderLevel: line.reorderLevel,
                            unitsInStock: line.unitsInStock,
                            unitsOnOrder: line.unitsOnOrder
                        )
                    },
                    supplierID: Int(proposal.supplierID),
                    supplierName: proposal.supplierName
                )
            },
            targetCover: "\(targetCover)"
        )
    }
}

extension Components.Schemas.PurchaseOrderPage: APIPage {}
extension Components.Schemas.PurchaseOrder.StatusPayload: WireEnum {}

extension Wire {
    public static func purchaseOrder(_ detail: PurchaseOrderDetail) -> some Encodable & Sendable { PurchaseOrderBody(detail) }
    public static func purchaseOrders(_ details: [PurchaseOrderDetail]) -> some Encodable & Sendable {
        Components.Schemas.PurchaseOrderList(items: details.map(PurchaseOrderBody.init))
    }
    public static func purchaseOrders(_ page: Page<PurchaseOrderSummary>) -> some Encodable & Sendable {
        Components.Schemas.PurchaseOrderPage(page, Components.Schemas.PurchaseOrderSummary.init)
    }
    public static func reorderProposal(_ proposals: [ReorderProposal], targetCover: Decimal) -> some Encodable & Sendable {
        Components.Schemas.ReorderProposal(proposals, targetCover: targetCover)
    }
}

/// A purchase order as a client writes it (`PurchaseOrderInput`); on PUT, `version` is the one that was read.
struct PurchaseOrderInput: Decodable, Hashable, Sendable {
    struct Line: Decodable, Hashable, Sendable {
        var productID: Int64
        var quantity: Int
        var unitCost: MoneyInput?

        enum CodingKeys: String, CodingKey, CaseIterable { case productID, quantity, unitCost }

        init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self, of: "a purchase order line")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            productID = try c.decode(Int64.self, forKey: .productID)
            guard let quantity = try c.wholeNumber(.quantity, in: Limits.lineQuantity) else {
                throw NorthwindError.invalid(fieldName(c.codingPath + [CodingKeys.quantity]), "is required")
            }
            self.quantity = quantity
            unitCost = try c.nullable(MoneyInput.self, .unitCost) ?? nil
        }
    }
    var supplierID: Int64
    var expectedDate: String?
    var note: String?
    var lines: [Line]
    var version: Int?

    enum CodingKeys: String, CodingKey, CaseIterable { case supplierID, expectedDate, note, lines, version }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, of: "a purchase order")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        supplierID = try c.decode(Int64.self, forKey: .supplierID)
        expectedDate = try c.nullable(String.self, .expectedDate) ?? nil
        note = try c.nullable(String.self, .note) ?? nil
        lines = try c.decode([Line].self, forKey: .lines)
        version = try c.wholeNumber(.version, in: 1...Int.max)
    }

    var draft: PurchaseOrderDraft {
        get throws(NorthwindError) {
            var parser = FieldParser()
            let expected = parser.date(expectedDate, "expectedDate")
            let lines = self.lines.enumerated().map { index, line in
                PurchaseLineDraft(
                    productID: line.productID,
                    quantity: line.quantity,
                    unitCost: line.unitCost.flatMap { parser.money($0.text, "lines[\(index)].unitCost", required: true) }
                )
            }
            try parser.throwIfAny()
            return PurchaseOrderDraft(supplierID: supplierID, expectedDate: expected, note: note, lines: lines)
        }
    }
}

/// Goods received (`ReceiptInput`).
struct ReceiptInput: Decodable, Hashable, Sendable {
    struct Line: Decodable, Hashable, Sendable {
        var productID: Int64
        var quantity: Int
        var overReceipt: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case productID, quantity, overReceipt }

        init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self, of: "a received line")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            productID = try c.decode(Int64.self, forKey: .productID)
            guard let quantity = try c.wholeNumber(.quantity, in: Limits.lineQuantity) else {
                throw NorthwindError.invalid(fieldName(c.codingPath + [CodingKeys.quantity]), "is required")
            }
            self.quantity = quantity
            overReceipt = try c.nullable(String.self, .overReceipt) ?? nil
        }
    }
    var requestKey: String
    var note: String?
    var lines: [Line]

    enum CodingKeys: String, CodingKey, CaseIterable { case requestKey, note, lines }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, of: "a receipt")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requestKey = try c.decode(String.self, forKey: .requestKey)
        note = try c.nullable(String.self, .note) ?? nil
        lines = try c.decode([Line].self, forKey: .lines)
    }

    var receiptLines: [ReceiptLine] { lines.map { ReceiptLine(productID: $0.productID, quantity: $0.quantity, overReceipt: $0.overReceipt) } }
}
