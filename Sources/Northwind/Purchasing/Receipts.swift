import Foundation
import GRDB
import NorthwindStore

extension Purchasing {
    /// Books a delivery against a sent purchase order, line by line: each line's units become a `purchaseReceipt`
    /// movement at the line's cost, which raises stock here, lowers what is on order and moves the product's average
    /// cost. `requestKey` names the form or API call: the same delivery sent again (a retry, a second click, a
    /// colleague submitting the same form) books nothing more and answers as the first did. `receivedBefore` is
    /// what the order had received when the form was read: a delivery someone else booked since refuses this one,
    /// which was counted against a stale "awaited".
    public func receive(
        number: String,
        lines: [ReceiptLine],
        requestKey: String,
        employeeID: Int64? = nil,
        note: String? = nil,
        receivedBefore: Int? = nil
    ) async throws(NorthwindError) -> PurchaseOrderDetail {
        let (key, note) = try Self.checkedReceipt(lines: lines, requestKey: requestKey, note: note)
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            var order = try Self.fetch(number: number, db)
            try Self.requireOwn(order)
            // A delivery booked already under this key: answer as then, if it is the same delivery.
            let booked = try Row.fetchAll(
                db,
                sql: """
                    SELECT productID, delta FROM stock_movements WHERE requestKey = ? AND location IS NULL AND reason = 'purchaseReceipt'
                      AND purchaseLineID IN (SELECT id FROM purchase_order_lines WHERE purchaseOrderID = ?)
                    """,
                arguments: [key, order.id]
            )
            if !booked.isEmpty {
                let before = Set(booked.map { "\($0[0] as Int64):\($0[1] as Int)" })
                guard before == Set(lines.map { "\($0.productID):\($0.quantity)" }) else {
                    throw NorthwindError.conflict(
                        "requestKey '\(key)' booked another delivery on purchase order \(number) already; give this delivery a key of its own."
                    )
                }
                return try Self.detail(number: number, db)
            }
            guard order.status == .sent || order.status == .partiallyReceived else {
                let hint = order.status == .draft ? "send it first" : "nothing more is awaited on it"
                throw NorthwindError.invalidState("Purchase order \(number) is \(order.status.words); \(hint).")
            }
            try Catalogue.checkEmployee(employeeID, db)
            let detail = try Self.detail(number: number, db)
            let receivedNow = detail.lines.reduce(0) { $0 + $1.received }
            if let receivedBefore, receivedBefore != receivedNow {
                throw NorthwindError.conflict(
                    "Someone booked a delivery on purchase order \(number) since this form was opened (\(receivedBefore) units received "
                        + "then, \(receivedNow) now). Check what is still awaited and book again."
                )
            }
            for (index, received) in lines.enumerated() {
                try Self.book(received, field: "lines[\(index)]", detail: detail, key: key, employeeID: employeeID, note: note, db)
            }
            try Self.settleStatus(&order, db)
            return try Self.detail(number: number, db)
        }
    }

    /// Takes back a receipt booked in error: a `receiptReversal` that names it takes its units out again, returns
    /// them to what is on order (unless the order was cancelled since) and takes its cost out of the average. A
    /// receipt is reversed once; one whose units have left the shelf since cannot be.
    public func reverse(receiptID: Int64, employeeID: Int64? = nil, note: String? = nil) async throws(NorthwindError) -> PurchaseOrderDetail {
        let note = clean(note)
        if let note, note.count > Limits.noteLength { throw .invalid("note", "must be at most \(Limits.noteLength) characters") }
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            guard let receipt = try StockMovement.fetchOne(db, key: receiptID), receipt.reason == .purchaseReceipt,
                let lineID = receipt.purchaseLineID
            else {
                throw NorthwindError.notFound(entity: "receipt", key: "#\(receiptID)")
            }
            guard let line = try PurchaseOrderLine.fetchOne(db, key: lineID),
                var order = try PurchaseOrder.fetchOne(db, key: line.purchaseOrderID)
            else {
                throw NorthwindError.notFound(entity: "purchase order line", key: "#\(lineID)")
            }
            // (An order of this site's has only this site's receipts.)
            try Self.requireOwn(order)
            guard try Bool.fetchOne(db, sql: "SELECT location IS NULL FROM stock_movements WHERE id = ?", arguments: [receiptID]) == true else {
                throw NorthwindError.invalidState("Receipt #\(receiptID) was booked at another site; only that site can reverse it.")
            }
            if try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM stock_movements WHERE reversesID = ? AND location IS NULL)",
                arguments: [receiptID]
            ) == true {
                throw NorthwindError.invalidState("Receipt #\(receiptID) was reversed already.")
            }
            try Catalogue.checkEmployee(employeeID, db)
            let product = try Catalogue.productRow(id: receipt.productID, db).product
            guard product.unitsInStock >= receipt.delta else {
                throw NorthwindError.invalidState(
                    "Only \(product.unitsInStock) of '\(product.name)' are in stock, fewer than the \(receipt.delta) receipt #\(receiptID) booked; "
                        + "count the shelf (a stock take) instead."
                )
            }
            var reversal = StockMovement(
                productID: receipt.productID,
                delta: -receipt.delta,
                reason: .receiptReversal,
                employeeID: employeeID,
                note: note ?? "Reverses receipt #\(receiptID)"
            )
            reversal.purchaseLineID = lineID
            reversal.reversesID = receiptID
            reversal.unitCost = receipt.unitCost
            reversal.averageCost = try receipt.unitCost.flatMap { cost in
                Costing.averageAfterReversal(
                    onHand: product.unitsInStock,
                    average: try Costing.average(productID: receipt.productID, db),
                    quantity: receipt.delta,
                    cost: cost,
                    before: try Costing.average(productID: receipt.productID, before: receiptID, db)
                )
            }
            try reversal.insert(db)
            try Self.settleStatus(&order, db)
            return try Self.detail(number: order.number, db)
        }
    }

    /// The receipt's input checked before any write: its key and note, cleaned.
    static func checkedReceipt(lines: [ReceiptLine], requestKey: String, note: String?) throws(NorthwindError) -> (key: String, note: String?) {
        let key = requestKey.trimmingCharacters(in: .whitespaces)
        var errors: [NorthwindError.FieldError] = []
        if key.isEmpty || key.count > 100 { errors.append(.init("requestKey", "must be 1 to 100 characters")) }
        if lines.isEmpty { errors.append(.init("lines", "must name at least one product received")) }
        if lines.count > Self.maximumLines { errors.append(.init("lines", "must be at most \(Self.maximumLines) lines")) }
        for (index, line) in lines.enumerated() {
            if let error = Limits.check(line.quantity, Limits.lineQuantity, "lines[\(index)].quantity") { errors.append(error) }
            if let reason = clean(line.overReceipt), reason.count > Limits.noteLength || reason.filter(\.isLetter).count < 3 {
                errors.append(.init("lines[\(index)].overReceipt", "must say why, in 3 to \(Limits.noteLength) characters"))
            }
        }
        if Set(lines.map(\.productID)).count != lines.count { errors.append(.init("lines", "name each product once")) }
        let note = clean(note)
        if let note, note.count > Limits.noteLength { errors.append(.init("note", "must be at most \(Limits.noteLength) characters")) }
        try errors.throwIfAny()

        return (key, note)
    }

    /// Books one line of a delivery: its movement at the line's cost, with the average it leaves.
    static func book(
        _ received: ReceiptLine,
        field: String,
        detail: PurchaseOrderDetail,
        key: String,
        employeeID: Int64?,
        note: String?,
        _ db: Database
    ) throws {
        guard let state = detail.lines.first(where: { $0.line.productID == received.productID }) else {
            throw NorthwindError.invalid("\(field).productID", "product #\(received.productID) is not on purchase order \(detail.order.number)")
        }
        guard state.outstanding > 0 else {
            throw NorthwindError.invalid(
                "\(field).productID",
                "'\(state.productName)' was received in full (\(state.received) of \(state.line.quantity)); nothing more is awaited"
            )
        }
        let over = clean(received.overReceipt)
        if received.quantity > state.outstanding, over == nil {
            throw NorthwindError.invalid(
                "\(field).quantity",
                "\(received.quantity) of '\(state.productName)' is more than the \(state.outstanding) still awaited; "
                    + "book it as an over-receipt and say why"
            )
        }
        // More than the order again is no over-receipt but a mistake, or another order.
        guard state.received + received.quantity <= 2 * state.line.quantity else {
            throw NorthwindError.invalid(
                "\(field).quantity",
                "\(received.quantity) of '\(state.productName)' would make \(state.received + received.quantity) received on a line of "
                    + "\(state.line.quantity), more than twice what was ordered; write another purchase order for the rest"
            )
        }
        let product = try Catalogue.productRow(id: received.productID, db).product
        guard product.unitsInStock <= Limits.units.upperBound - received.quantity else {
            throw NorthwindError.invalid(
                "\(field).quantity",
                "would bring the stock of '\(product.name)' above \(Limits.grouped(Limits.units.upperBound)) units"
            )
        }
        var movement = StockMovement(
            productID: received.productID,
            delta: received.quantity,
            reason: .purchaseReceipt,
            employeeID: employeeID,
            note: note
        )
        movement.purchaseLineID = state.line.id
        movement.unitCost = state.line.unitCost
        movement.averageCost = try state.line.unitCost.flatMap { cost in
            Costing.averageAfterReceipt(
                onHand: product.unitsInStock,
                average: try Costing.average(productID: received.productID, db),
                quantity: received.quantity,
                cost: cost
            )
        }
        movement.requestKey = key
        movement.overReceipt = received.quantity > state.outstanding ? over : nil
        try movement.insert(db)
    }

    /// A sent order's status follows its receipts: received when every line has what it asked for, partly received
    /// when something arrived, sent otherwise. A cancelled order stays cancelled.
    static func settleStatus(_ order: inout PurchaseOrder, _ db: Database) throws {
        guard order.status != .cancelled, order.status != .draft else { return }
        let lines = try detail(number: order.number, db).lines
        let status: PurchaseOrderStatus =
            lines.allSatisfy { $0.received >= $0.line.quantity } ? .received : lines.contains { $0.received > 0 } ? .partiallyReceived : .sent
        guard status != order.status else { return }
        order.status = status
        order.closedAt = status == .received ? .now : nil
        order.version += 1
        try order.update(db)
    }
}

/// The moving average cost: kept per product and location, moved by each costed receipt (quantity-weighted) and
/// reversal, and written on the movement that moved it, so every installation reads the same figure from the same
/// ledger instead of computing its own.
enum Costing {
    /// The product's average cost here: the one the latest costed movement left (before the movement `before`, when
    /// given); nil when none has been received.
    static func average(productID: Int64, location: String? = nil, before: Int64 = .max, _ db: Database) throws -> Money? {
        try Money.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT averageCostCents FROM stock_movements
                    WHERE productID = ? AND location IS ? AND averageCostCents IS NOT NULL AND id < ? ORDER BY id DESC LIMIT 1
                    """
            ),
            arguments: [productID, location, before]
        )
    }

    // guide: begin moving-average
    /// `(onHand × average + quantity × cost) / (onHand + quantity)`, to the cent, halves away from zero. Stock that
    /// has no cost yet (none on hand, or none ever received) takes the receipt's.
    static func averageAfterReceipt(onHand: Int, average: Money?, quantity: Int, cost: Money) -> Money {
        guard let average, onHand > 0 else { return cost }
        return divided(onHand * average.cents + quantity * cost.cents, by: onHand + quantity)
    }

    /// The receipt taken out again: `(onHand × average − quantity × cost) / (onHand − quantity)`. When nothing would be
    /// left to value, the average from before that receipt (`before`); nil (unchanged) when there is none.
    static func averageAfterReversal(onHand: Int, average: Money?, quantity: Int, cost: Money, before: Money? = nil) -> Money? {
        guard onHand > quantity else { return before }
        guard let average else { return nil }
        let value = onHand * average.cents - quantity * cost.cents
        return value <= 0 ? .zero : divided(value, by: onHand - quantity)
    }
    // guide: end moving-average

    private static func divided(_ value: Int, by units: Int) -> Money {
        Money(cents: min((value + units / 2) / units, Limits.money.upperBound.cents))
    }
}
