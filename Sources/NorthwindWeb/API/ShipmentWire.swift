import Foundation
import Northwind
import NorthwindStore

// Shipments' JSON: the generated shapes of openapi.yaml filled from the domain's values, and the request body read
// strictly, as receipts' is.

typealias ShipmentBody = Components.Schemas.Shipment

extension Components.Schemas.Shipment {
    init(_ detail: ShipmentDetail) {
        let s = detail.shipment
        self.init(
            createdAt: s.createdAt.description,
            employeeID: s.employeeID.map(Int.init),
            lines: detail.lines.map { .init(productID: Int($0.productID), productName: $0.productName, quantity: $0.quantity) },
            orderNumber: detail.orderNumber,
            orderStatus: .init(detail.orderStatus),
            sequence: s.sequence,
            shippedDate: s.shippedDate.description,
            invoiceNumber: detail.invoiceNumber
        )
    }
}

extension Components.Schemas.FulfilmentStatus {
    init(_ status: FulfilmentStatus) {
        switch status {
        case .new: self = .new
        case .partlyShipped: self = .partlyShipped
        case .shipped: self = .shipped
        case .cancelled: self = .cancelled
        }
    }
}

extension Components.Schemas.LineFulfilment {
    init(_ line: LineFulfilment) {
        self.init(
            fillable: line.fillable,
            inStock: line.inStock,
            open: line.open,
            ordered: line.ordered,
            productID: Int(line.productID),
            productName: line.productName,
            shipped: line.shipped
        )
    }
}

extension Components.Schemas.OrderFulfilment {
    init(_ state: OrderFulfilment) {
        self.init(
            completeShipmentsOnly: state.completeShipmentsOnly,
            lines: state.lines.map(Components.Schemas.LineFulfilment.init),
            number: state.orderNumber,
            shipments: state.shipments.map(ShipmentBody.init),
            status: .init(state.status)
        )
    }
}

extension Components.Schemas.Backorder {
    init(_ backorder: BackorderLine) {
        self.init(
            coveredBy: backorder.coveredBy.map {
                .init(awaiting: $0.awaiting, expectedDate: $0.expectedDate?.description, number: $0.number)
            },
            customerCode: backorder.customerCode,
            customerName: backorder.customerName,
            line: .init(backorder.line),
            orderDate: backorder.orderDate.description,
            orderNumber: backorder.orderNumber,
            requiredDate: backorder.requiredDate?.description,
            site: backorder.site
        )
    }
}

extension Components.Schemas.BackorderPage: APIPage {}

extension Wire {
    public static func shipment(_ detail: ShipmentDetail) -> some Encodable & Sendable { ShipmentBody(detail) }
    public static func fulfilment(_ state: OrderFulfilment) -> some Encodable & Sendable { Components.Schemas.OrderFulfilment(state) }
    public static func backorders(_ page: Page<BackorderLine>) -> some Encodable & Sendable {
        Components.Schemas.BackorderPage(page, Components.Schemas.Backorder.init)
    }
}

/// A shipment as a client asks for it (`ShipmentInput`): what is available, or the quantities given.
struct ShipmentInput: Decodable, Hashable, Sendable {
    struct Line: Decodable, Hashable, Sendable {
        var productID: Int64
        var quantity: Int

        enum CodingKeys: String, CodingKey, CaseIterable { case productID, quantity }

        init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self, of: "a shipment line")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            productID = try c.decode(Int64.self, forKey: .productID)
            guard let quantity = try c.wholeNumber(.quantity, in: Limits.lineQuantity) else {
                throw NorthwindError.invalid(fieldName(c.codingPath + [CodingKeys.quantity]), "is required")
            }
            self.quantity = quantity
        }
    }
    var available: Bool
    var lines: [Line]?
    var requestKey: String?
    var shippedDate: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case available, lines, requestKey, shippedDate }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, of: "a shipment")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        available = try c.decodeIfPresent(Bool.self, forKey: .available) ?? false
        lines = try c.decodeIfPresent([Line].self, forKey: .lines)
        requestKey = try c.decodeIfPresent(String.self, forKey: .requestKey)
        shippedDate = try c.nullable(String.self, .shippedDate) ?? nil
        if available == (lines != nil) {
            throw NorthwindError.invalid("available", "give either available: true, to ship what the shelf holds, or lines, not both")
        }
    }

    var date: LocalDate? {
        get throws(NorthwindError) {
            var parser = FieldParser()
            let date = parser.date(shippedDate, "shippedDate")
            try parser.throwIfAny()
            return date
        }
    }

    var shipLines: [ShipLine] { (lines ?? []).map { ShipLine(productID: $0.productID, quantity: $0.quantity) } }
}
