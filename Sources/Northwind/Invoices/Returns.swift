import CoreMetrics
import Foundation
import GRDB
import NorthwindStore

/// A return with its lines and the credit note issued with it.
public struct ReturnDetail: Sendable, Codable, Equatable {
    public var returned: Return
    public var orderNumber: String
    public var shipmentSequence: Int
    public var lines: [ShipmentLineDetail]
    /// Nil when the shipment was made before invoices were kept: there is no invoice to correct.
    public var creditNoteNumber: String?
}

extension Invoicing {
    /// Takes goods back from one shipment: each line within what the shipment carried and has not come back yet.
    /// In one write transaction the return, its lines and their `returned` movements are written, and a credit
    /// note corrects the shipment's invoice by exactly the returned lines, at the invoice's prices and rates.
    public func takeReturn(
        orderNumber: String,
        shipmentSequence: Int,
        lines: [ShipLine],
        reason: String? = nil,
        returnedDate: LocalDate? = nil,
        employeeID: Int64? = nil,
        requestKey: String? = nil
    ) async throws(NorthwindError) -> ReturnDetail {
        let key = try Orders.checkedRequestKey(requestKey)
        try Orders.validate(shipLines: lines)
        let note = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let note, note.unicodeScalars.count > Limits.noteLength {
            throw .invalid("reason", "must be at most \(Limits.noteLength) characters")
        }
        let invoiceRules = rules.invoicing
        let detail = try await write { db in
            let order = try Orders.fetchOrder(number: orderNumber, db)
            guard
                let shipment = try Shipment.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM shipments WHERE orderID = ? AND sequence = ?"),
                    arguments: [order.id, shipmentSequence]
                )
            else { throw NorthwindError.notFound(entity: "shipment", key: "\(order.number)/\(shipmentSequence)") }
            if let key,
                let id = try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT id FROM returns WHERE shipmentID = ? AND requestKey = ?"),
                    arguments: [shipment.id, key]
                )
            {
                return try Self.returnDetail(id: id, db)
            }
            try Orders.requireWrittenHere(order, db)
            try ShopSync.requireSyncedSinceRestore(db)
            try Catalogue.checkEmployee(employeeID, db)
            let date = returnedDate ?? .today
            if date < shipment.shippedDate {
                throw NorthwindError.invalid("returnedDate", "must not be before the shipment left, \(shipment.shippedDate)")
            }
            if date > .today {
                throw NorthwindError.invalid(
                    "returnedDate",
                    "must not be after today, \(LocalDate.today): its credit note is issued as it comes back"
                )
            }
            let quantities = try Self.returnable(lines, shipment: shipment, orderNumber: order.number, db)
            defer { CrashPoint.reach("return-written") }
            return try Self.writeReturn(
                order,
                shipment,
                quantities,
                date: date,
                reason: note.flatMap { $0.isEmpty ? nil : $0 },
                employeeID: employeeID ?? order.employeeID,
                requestKey: key,
                rules: invoiceRules,
                db
            )
        }
        CrashPoint.reach("return-committed")
        Counter(label: "northwind_returns_total").increment()
        return detail
    }

    /// Each requested line against what the shipment carried of it, less what came back already.
    static func returnable(_ lines: [ShipLine], shipment: Shipment, orderNumber: String, _ db: Database) throws -> [(Int64, Int64, Int)] {
        let carried = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT s.id, l.productID, p.name, s.quantity,
                      ifnull((SELECT sum(quantity) FROM return_lines WHERE shipmentLineID = s.id), 0)
                    FROM shipment_lines s JOIN order_lines l ON l.id = s.orderLineID JOIN products p ON p.id = l.productID
                    WHERE s.shipmentID = ?
                    """
            ),
            arguments: [shipment.id]
        )
        var errors: [NorthwindError.FieldError] = []
        var quantities: [(Int64, Int64, Int)] = []
        for (index, request) in lines.enumerated() {
            guard let row = carried.first(where: { $0[1] as Int64 == request.productID }) else {
                errors.append(
                    .init(
                        "lines[\(index)].productID",
                        "shipment \(shipment.sequence) of order \(orderNumber) carried no product #\(request.productID)"
                    )
                )
                continue
            }
            let left = (row[3] as Int) - (row[4] as Int)
            if request.quantity > left {
                errors.append(
                    .init(
                        "lines[\(index)].quantity",
                        "must not exceed the \(left) unit(s) of '\(row[2] as String)' this shipment carried and have not come back"
                    )
                )
            }
            quantities.append((row[0], request.productID, request.quantity))
        }
        try errors.throwIfAny()
        return quantities
    }

    /// Writes the return, its lines, their movements and the credit note. Record IDs are made from the shipment's,
    /// the return's number within it and what comes back, as a shipment's are.
    static func writeReturn(
        _ order: Order,
        _ shipment: Shipment,
        _ quantities: [(shipmentLineID: Int64, productID: Int64, quantity: Int)],
        date: LocalDate,
        reason: String?,
        employeeID: Int64?,
        requestKey: String?,
        rules: InvoiceRules,
        _ db: Database
    ) throws -> ReturnDetail {
        let sequence =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT ifnull(max(sequence), 0) + 1 FROM returns WHERE shipmentID = ?"),
                arguments: [shipment.id]
            )
            ?? 1
        let contents = quantities.map { "\($0.shipmentLineID):\($0.quantity)" }.joined(separator: ",")
        var returned = Return(
            recordID: StockMovement.derivedRecordID("northwind-return:\(shipment.recordID):\(sequence):\(date):\(contents)"),
            shipmentID: shipment.id ?? 0,
            sequence: sequence,
            returnedDate: date,
            employeeID: employeeID,
            reason: reason,
            requestKey: requestKey
        )
        try returned.insert(db)
        returned.id = db.lastInsertedRowID
        var returnLines: [Int64: Int] = [:]
        for (shipmentLineID, productID, quantity) in quantities {
            let lineRecordID = try String.fetchOne(
                db.cachedStatement(sql: "SELECT recordID FROM shipment_lines WHERE id = ?"),
                arguments: [shipmentLineID]
            )
            let line = ReturnLine(
                recordID: StockMovement.derivedRecordID("northwind-return-line:\(returned.recordID):\(lineRecordID ?? "")"),
                returnID: returned.id ?? 0,
                shipmentLineID: shipmentLineID,
                quantity: quantity
            )
            try line.insert(db)
            var movement = StockMovement(
                productID: productID,
                delta: quantity,
                reason: .returned,
                orderID: order.id,
                employeeID: employeeID,
                note: reason
            )
            movement.recordID = StockMovement.onceOnlyRecordID(.returned, of: line.recordID)
            movement.returnLineID = db.lastInsertedRowID
            try Orders.insert(movement, db)
            returnLines[shipmentLineID] = quantity
        }
        try creditNote(for: returned, of: shipment, order: order, returnLines: returnLines, rules: rules, db)
        return try returnDetail(id: returned.id, db)
    }

    /// The credit note of a return: the shipment's invoice lines, at their prices, discounts and rates, for the
    /// quantities that came back. A shipment made before invoices were kept has none to correct.
    static func creditNote(
        for returned: Return,
        of shipment: Shipment,
        order: Order,
        returnLines: [Int64: Int],
        rules: InvoiceRules,
        _ db: Database
    ) throws {
        guard
            let invoice = try Invoice.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM invoices WHERE shipmentID = ? AND kind = 'invoice'"),
                arguments: [shipment.id]
            )
        else { return }
        let invoiced = try InvoiceLine.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM invoice_lines WHERE invoiceID = ? AND shipmentLineID IS NOT NULL ORDER BY position"),
            arguments: [invoice.id]
        )
        let lines = try invoiced.compactMap { line -> LineToInvoice? in
            guard let shipmentLineID = line.shipmentLineID, let quantity = returnLines[shipmentLineID] else { return nil }
            let before = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT ifnull(sum(quantity), 0) FROM return_lines WHERE shipmentLineID = ? AND returnID < ?"),
                arguments: [shipmentLineID, returned.id]
            )
            return LineToInvoice(
                shipmentLineID: shipmentLineID,
                productID: line.productID,
                description: line.description,
                quantity: quantity,
                unitPrice: line.unitPrice,
                discountBasisPoints: line.discountBasisPoints,
                rate: TaxRate(basisPoints: line.taxBasisPoints, name: line.taxName),
                creditedBefore: before ?? 0
            )
        }
        let buyer = try JSONDecoder().decode(InvoiceParty.self, from: Data(invoice.buyer.utf8))
        _ = try issue(
            .creditNote,
            lines,
            issuedDate: returned.returnedDate,
            order: order,
            shipment: shipment,
            returnID: returned.id,
            corrects: invoice,
            source: returned.recordID,
            buyer: buyer,
            rounding: invoice.rounding,
            rules: rules,
            db
        )
    }

    static func returnDetail(id: Int64?, _ db: Database) throws -> ReturnDetail {
        guard let returned = try Return.fetchOne(db, key: id) else { throw NorthwindError.notFound(entity: "return", key: "#\(id ?? 0)") }
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT o.number, s.sequence, (SELECT number FROM invoices WHERE returnID = ?)
                    FROM shipments s JOIN orders o ON o.id = s.orderID WHERE s.id = ?
                    """
            ),
            arguments: [returned.id, returned.shipmentID]
        )
        let lines = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT l.productID, p.name, r.quantity FROM return_lines r JOIN shipment_lines s ON s.id = r.shipmentLineID
                    JOIN order_lines l ON l.id = s.orderLineID JOIN products p ON p.id = l.productID
                    WHERE r.returnID = ? ORDER BY l.id
                    """
            ),
            arguments: [returned.id]
        ).map { ShipmentLineDetail(productID: $0[0], productName: $0[1], quantity: $0[2]) }
        return ReturnDetail(returned: returned, orderNumber: row?[0] ?? "", shipmentSequence: row?[1] ?? 0, lines: lines, creditNoteNumber: row?[2])
    }

    /// An order's returns, oldest first.
    public func returns(orderNumber: String) async throws(NorthwindError) -> [ReturnDetail] {
        try await read { db in
            let order = try Orders.fetchOrder(number: orderNumber, db)
            return try Int64.fetchAll(
                db.cachedStatement(
                    sql: "SELECT r.id FROM returns r JOIN shipments s ON s.id = r.shipmentID WHERE s.orderID = ? ORDER BY s.sequence, r.sequence"
                ),
                arguments: [order.id]
            ).map { try Self.returnDetail(id: $0, db) }
        }
    }

    /// Sets a category's tax rate, or clears it (nil: the first of `tax.rates`). The rate must be one `tax.rates` lists.
    public func setTaxRate(categoryName: String, percent: String?) async throws(NorthwindError) {
        let basisPoints = try checkedRate(percent)
        try await write { db in
            guard let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM categories WHERE name = ?"), arguments: [categoryName]) else {
                throw NorthwindError.notFound(entity: "category", key: categoryName)
            }
            try db.cachedStatement(sql: "UPDATE categories SET taxBasisPoints = ?, version = version + 1 WHERE id = ?").execute(arguments: [
                basisPoints, id,
            ])
        }
    }

    /// Sets a product's own tax rate, or clears it (nil: its category's).
    public func setTaxRate(productID: Int64, percent: String?) async throws(NorthwindError) {
        let basisPoints = try checkedRate(percent)
        try await write { db in
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM products WHERE id = ?"), arguments: [productID]) != nil else {
                throw NorthwindError.notFound(entity: "product", key: "#\(productID)")
            }
            try db.cachedStatement(sql: "UPDATE products SET taxBasisPoints = ?, version = version + 1 WHERE id = ?").execute(arguments: [
                basisPoints, productID,
            ])
        }
    }

    private func checkedRate(_ percent: String?) throws(NorthwindError) -> Int? {
        guard let percent else { return nil }
        guard let basisPoints = TaxRates.basisPoints(percent.trimmingCharacters(in: CharacterSet(charactersIn: " %"))) else {
            throw .invalid("taxRate", "must be a percentage from 0 to 100 with at most two decimals, not '\(percent)'")
        }
        let rates = rules.invoicing.rates
        guard rates.contains(where: { $0.basisPoints == basisPoints }) else {
            throw .invalid("taxRate", "must be one of the rates tax.rates lists: \(rates.map(\.percent).joined(separator: ", "))")
        }
        return basisPoints
    }
}
