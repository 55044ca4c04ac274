import CoreMetrics
import Foundation
import GRDB
import NorthwindStore

/// Where an order stands, as the people who pack read it. "Partly shipped" is an order still open (`new`) that has
/// shipped something: the rest is backordered.
public enum FulfilmentStatus: String, Codable, Sendable, CaseIterable {
    case new, partlyShipped, shipped, cancelled

    /// As a sentence says it: "partly shipped".
    public var words: String {
        switch self {
        case .new: "new"
        case .partlyShipped: "partly shipped"
        case .shipped: "shipped"
        case .cancelled: "cancelled"
        }
    }
}

/// One order line: ordered, shipped so far, still to ship, and what of that the shelf here can supply now.
public struct LineFulfilment: Sendable, Codable, Equatable {
    public var orderLineID: Int64
    public var productID: Int64
    public var productName: String
    public var ordered: Int
    public var shipped: Int
    public var inStock: Int
    /// Units still to ship.
    public var open: Int { max(ordered - shipped, 0) }
    /// Units of the open quantity the shelf can supply now.
    public var fillable: Int { min(open, max(inStock, 0)) }
}

public struct ShipmentLineDetail: Sendable, Codable, Equatable {
    public var productID: Int64
    public var productName: String
    public var quantity: Int
}

/// A shipment with its order's number and its lines.
public struct ShipmentDetail: Sendable, Codable, Equatable {
    public var shipment: Shipment
    public var orderNumber: String
    public var lines: [ShipmentLineDetail]
    /// Where this shipment left the order: shipped once every line's units had left, else partly shipped.
    public var orderStatus: FulfilmentStatus
    /// The invoice issued with it; nil for a shipment made before invoices were kept (v24).
    public var invoiceNumber: String?
}

/// An order's lines as shipped so far, and its shipments.
public struct OrderFulfilment: Sendable, Codable {
    public var orderNumber: String
    public var status: FulfilmentStatus
    /// The customer takes complete shipments only: "Ship available" is not offered.
    public var completeShipmentsOnly: Bool
    public var lines: [LineFulfilment]
    public var shipments: [ShipmentDetail]
}

/// A quantity to ship of one of the order's products.
public struct ShipLine: Sendable, Codable, Equatable {
    public var productID: Int64
    public var quantity: Int
    public init(productID: Int64, quantity: Int) { (self.productID, self.quantity) = (productID, quantity) }
}

extension Orders {
    /// The order's lines (ordered, shipped, open, fillable now) and its shipments.
    public func fulfilment(number: String) async throws(NorthwindError) -> OrderFulfilment {
        try await read { db in try Self.fulfilment(try Self.fetchOrder(number: number, db), db) }
    }

    /// Ships what the shelf holds now of every open line, and leaves the rest on the order, backordered. A
    /// customer who takes complete shipments only gets the whole order or nothing, as `execute` does.
    public func shipAvailable(
        number: String,
        employeeID: Int64? = nil,
        shippedDate: LocalDate? = nil,
        requestKey: String? = nil
    ) async throws(NorthwindError) -> ShipmentDetail {
        let key = try Self.checkedRequestKey(requestKey)
        return try await shipping(number: number, employeeID: employeeID, shippedDate: shippedDate, requestKey: key) { order, state in
            if state.completeShipmentsOnly {
                try Self.requireAllFillable(order, state.lines)
            }
            let quantities = state.lines.filter { $0.fillable > 0 }.map { ($0, $0.fillable) }
            guard !quantities.isEmpty else {
                throw NorthwindError.invalidState(
                    "Nothing order \(order.number) still awaits is on the shelf now; it stays open, and ships when stock arrives."
                )
            }
            return quantities
        }
    }

    /// Marks a customer as one who takes complete shipments only (or not): "Ship available" then ships the whole
    /// order or nothing.
    public func setCompleteShipmentsOnly(customerCode: String, _ value: Bool) async throws(NorthwindError) {
        try await write { db in
            let customer = try Records.customer(code: customerCode, db)
            try db.cachedStatement(sql: "UPDATE customers SET completeShipmentsOnly = ?, version = version + 1 WHERE id = ?").execute(
                arguments: [value, customer.id])
        }
    }

    /// Ships the quantities given, each within what the line still awaits and what the shelf holds.
    public func ship(
        number: String,
        lines: [ShipLine],
        employeeID: Int64? = nil,
        shippedDate: LocalDate? = nil,
        requestKey: String? = nil
    ) async throws(NorthwindError) -> ShipmentDetail {
        let key = try Self.checkedRequestKey(requestKey)
        try Self.validate(shipLines: lines)
        return try await shipping(number: number, employeeID: employeeID, shippedDate: shippedDate, requestKey: key) { order, state in
            var errors: [NorthwindError.FieldError] = []
            var quantities: [(LineFulfilment, Int)] = []
            for (index, request) in lines.enumerated() {
                guard let line = state.lines.first(where: { $0.productID == request.productID }) else {
                    errors.append(.init("lines[\(index)].productID", "order \(order.number) has no line for product #\(request.productID)"))
                    continue
                }
                if request.quantity > line.open {
                    errors.append(
                        .init("lines[\(index)].quantity", "must not exceed the \(line.open) unit(s) of '\(line.productName)' still to ship")
                    )
                } else if request.quantity > line.inStock {
                    errors.append(.init("lines[\(index)].quantity", "only \(max(line.inStock, 0)) unit(s) of '\(line.productName)' are on the shelf"))
                }
                quantities.append((line, request.quantity))
            }
            try errors.throwIfAny()
            if state.completeShipmentsOnly, quantities.map(\.1).reduce(0, +) < state.lines.map(\.open).reduce(0, +) {
                throw NorthwindError.invalid("lines", "customer takes complete shipments only; ship every open unit at once")
            }
            return quantities
        }
    }

    // guide: begin execute-order
    /// The work every way of shipping shares: in one write transaction, the order is checked (this site's, open,
    /// the store synced since a restore), `choose` names the quantities from the lines as they are now, and the
    /// shipment, its lines and their movements are written; the order becomes `shipped` when nothing is left.
    func shipping(
        number: String,
        employeeID: Int64?,
        shippedDate: LocalDate?,
        requestKey: String?,
        choose: @escaping @Sendable (Order, OrderFulfilment) throws -> [(LineFulfilment, Int)]
    ) async throws(NorthwindError) -> ShipmentDetail {
        let invoiceRules = rules.invoicing
        let detail = try await write { db in
            let order = try Self.fetchOrder(number: number, db)
            if let requestKey, let done = try Self.shipment(orderID: order.id, requestKey: requestKey, db) {
                return done
            }
            try Orders.requireWrittenHere(order, db)
            try ShopSync.requireSyncedSinceRestore(db)
            let state = try Self.fulfilment(order, db)
            guard state.status == .new || state.status == .partlyShipped else {
                throw NorthwindError.invalidState(
                    "Order \(order.number) is already \(state.status.words); only an open order can be executed or shipped."
                )
            }
            guard !state.lines.isEmpty else {
                throw NorthwindError.invalidState("Order \(order.number) has no lines; add at least one before shipping it.")
            }
            try Catalogue.checkEmployee(employeeID, db)
            let date = shippedDate ?? .today
            if date < order.orderDate {
                throw NorthwindError.invalid("shippedDate", "must not be before the order date \(order.orderDate)")
            }
            // Its invoice is issued on that day: a later day would open next year's series before its time.
            if date > .today {
                throw NorthwindError.invalid("shippedDate", "must not be after today, \(LocalDate.today): its invoice is issued as it leaves")
            }
            let quantities = try choose(order, state).filter { $0.1 > 0 }
            defer { CrashPoint.reach("shipment-written") }
            return try Self.writeShipment(
                order,
                quantities,
                shippedDate: date,
                employeeID: employeeID ?? order.employeeID,
                requestKey: requestKey,
                invoiceRules: invoiceRules,
                db
            )
        }
        CrashPoint.reach("shipment-committed")
        Counter(label: "northwind_shipments_total").increment()
        return detail
    }
    // guide: end execute-order

    /// Writes one shipment of the quantities given, and issues its invoice. Record IDs are made from the order's and the shipment's
    /// number within it, so a store put back to an older copy that ships the same part again makes the same
    /// records, which every installation then holds once.
    static func writeShipment(
        _ order: Order,
        _ quantities: [(LineFulfilment, Int)],
        shippedDate: LocalDate,
        employeeID: Int64?,
        requestKey: String?,
        invoiceRules: InvoiceRules,
        _ db: Database
    ) throws -> ShipmentDetail {
        let sequence =
            try Int.fetchOne(db.cachedStatement(sql: "SELECT ifnull(max(sequence), 0) + 1 FROM shipments WHERE orderID = ?"), arguments: [order.id])
            ?? 1
        // What ships is part of the name: a copy that ships a different part under the same number makes a
        // different record, which a ledger that already holds the first refuses, and says so, instead of two
        // installations keeping two versions of one record.
        let contents = quantities.map { "\($0.0.orderLineID):\($0.0.productID):\($0.1)" }.joined(separator: ",")
        var shipment = Shipment(
            recordID: StockMovement.derivedRecordID("northwind-shipment:\(order.recordID):\(sequence):\(shippedDate):\(contents)"),
            orderID: order.id ?? 0,
            sequence: sequence,
            shippedDate: shippedDate,
            employeeID: employeeID,
            requestKey: requestKey
        )
        try shipment.insert(db)
        shipment.id = db.lastInsertedRowID
        for (line, quantity) in quantities {
            let lineRecordID = try String.fetchOne(
                db.cachedStatement(sql: "SELECT recordID FROM order_lines WHERE id = ?"),
                arguments: [line.orderLineID]
            )
            let shipmentLine = ShipmentLine(
                recordID: StockMovement.derivedRecordID("northwind-shipment-line:\(shipment.recordID):\(lineRecordID ?? "")"),
                shipmentID: shipment.id ?? 0,
                orderLineID: line.orderLineID,
                quantity: quantity
            )
            try shipmentLine.insert(db)
            var movement = StockMovement(productID: line.productID, delta: -quantity, reason: .shipped, orderID: order.id, employeeID: employeeID)
            movement.recordID = StockMovement.onceOnlyRecordID(.shipped, of: shipmentLine.recordID)
            movement.shipmentLineID = db.lastInsertedRowID
            try Self.insert(movement, db)
        }
        let after = try fulfilment(order, db)
        if after.lines.allSatisfy({ $0.open == 0 }) {
            let last = try LocalDate.fetchOne(
                db.cachedStatement(sql: "SELECT max(shippedDate) FROM shipments WHERE orderID = ?"),
                arguments: [order.id]
            )
            try db.cachedStatement(sql: "UPDATE orders SET status = 'shipped', shippedDate = ?, version = version + 1 WHERE id = ?").execute(
                arguments: [last ?? shippedDate, order.id])
        }
        _ = try Invoicing.issueInvoice(for: shipment, of: order, rules: invoiceRules, db)
        return try Self.shipment(id: shipment.id, db)
    }

    static func requireAllFillable(_ order: Order, _ lines: [LineFulfilment]) throws {
        let shortages = lines.filter { $0.fillable < $0.open }.map {
            NorthwindError.Shortage(productID: $0.productID, productName: $0.productName, ordered: $0.open, inStock: max($0.inStock, 0))
        }
        guard shortages.isEmpty else { throw NorthwindError.insufficientStock(orderNumber: order.number, shortages) }
    }

    static func checkedRequestKey(_ key: String?) throws(NorthwindError) -> String? {
        guard let key else { return nil }
        let trimmed = key.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.unicodeScalars.count > 100 { throw .invalid("requestKey", "must be 1 to 100 characters") }
        return trimmed
    }

    static func validate(shipLines lines: [ShipLine]) throws(NorthwindError) {
        var errors: [NorthwindError.FieldError] = []
        if lines.isEmpty { errors.append(.init("lines", "a shipment needs at least one line")) }
        var seen = Set<Int64>()
        for (index, line) in lines.enumerated() {
            if let error = Limits.check(line.quantity, Limits.lineQuantity, "lines[\(index)].quantity") { errors.append(error) }
            if !seen.insert(line.productID).inserted {
                errors.append(.init("lines[\(index)].productID", "product #\(line.productID) is already on another line of this shipment"))
            }
        }
        try errors.throwIfAny()
    }
}
