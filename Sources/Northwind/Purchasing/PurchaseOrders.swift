import Foundation
import GRDB
import NorthwindStore

/// A purchase order as a buyer writes it.
public struct PurchaseOrderDraft: Sendable, Equatable {
    public var supplierID: Int64
    public var expectedDate: LocalDate?
    public var note: String?
    public var lines: [PurchaseLineDraft]

    public init(supplierID: Int64, expectedDate: LocalDate? = nil, note: String? = nil, lines: [PurchaseLineDraft]) {
        self.supplierID = supplierID
        self.expectedDate = expectedDate
        self.note = note
        self.lines = lines
    }
}

/// One line of a draft: a unit cost may wait until the order is sent.
public struct PurchaseLineDraft: Sendable, Equatable {
    public var productID: Int64
    public var quantity: Int
    public var unitCost: Money?

    public init(productID: Int64, quantity: Int, unitCost: Money? = nil) {
        self.productID = productID
        self.quantity = quantity
        self.unitCost = unitCost
    }
}

/// A purchase order with its supplier, its lines and what they have received, and its receipts.
public struct PurchaseOrderDetail: Sendable {
    public var order: PurchaseOrder
    public var supplierName: String
    public var lines: [PurchaseLineState]
    /// Receipts and reversals, oldest first.
    public var receipts: [ReceiptEntry]

    /// What is still awaited, over every line.
    public var outstanding: Int { lines.reduce(0) { $0 + $1.outstanding } }
    /// What the costed lines come to; nil when no line has a cost (an opening order, a draft not yet priced).
    public var value: Money? {
        guard lines.contains(where: { $0.line.unitCost != nil }) else { return nil }
        return Money(cents: lines.reduce(0) { $0.saturatingAdd($1.value?.cents ?? 0) })
    }
    /// The order's expected date has passed and something is still awaited.
    public var isLate: Bool {
        guard let expected = order.expectedDate, order.status == .sent || order.status == .partiallyReceived else { return false }
        return expected < .today && outstanding > 0
    }
}

/// A line as it stands: what it asked for, what has arrived (receipts less reversals), and what it still awaits.
public struct PurchaseLineState: Sendable {
    public var line: PurchaseOrderLine
    public var productName: String
    public var received: Int
    /// Nothing is awaited of a draft's or a cancelled order's lines, nor beyond what was asked.
    public var outstanding: Int

    /// Quantity × unit cost, saturating (a synced line may hold absurd figures); nil without a cost.
    public var value: Money? { line.unitCost.map { Money(cents: $0.cents.saturatingMultiply(line.quantity)) } }
}

/// A receipt or a reversal, with the product's name and, for a receipt, whether it has been reversed.
public struct ReceiptEntry: Sendable {
    public var movement: StockMovement
    public var productName: String
    public var reversed: Bool
}

/// Goods counted in for one line of a delivery.
public struct ReceiptLine: Sendable, Equatable {
    public var productID: Int64
    public var quantity: Int
    /// Required when `quantity` is more than the line still awaits: why more was taken in.
    public var overReceipt: String?

    public init(productID: Int64, quantity: Int, overReceipt: String? = nil) {
        self.productID = productID
        self.quantity = quantity
        self.overReceipt = overReceipt
    }
}

/// One row of the purchase order list.
public struct PurchaseOrderSummary: Sendable {
    public var order: PurchaseOrder
    public var supplierName: String
    public var lineCount: Int
    public var outstanding: Int
    /// What the lines are worth at their costs (lines with no cost count nothing).
    public var total: Money
    /// Lines that have no unit cost yet (a draft's) or ever (an opening order's).
    public var uncostedLines: Int

    /// Its expected date has passed and something is still awaited.
    public var isLate: Bool {
        guard let expected = order.expectedDate, order.status == .sent || order.status == .partiallyReceived else { return false }
        return expected < .today && outstanding > 0
    }
}

public struct PurchaseOrderQuery: Sendable {
    public var status: PurchaseOrderStatus?
    /// Only orders still awaiting goods: sent or partly received.
    public var awaiting = false
    public var supplierID: Int64?
    public var limit = 50
    public var offset = 0
    public init(status: PurchaseOrderStatus? = nil, supplierID: Int64? = nil) {
        self.status = status
        self.supplierID = supplierID
    }
}

extension Purchasing {
    /// Lines on one purchase order.
    static let maximumLines = 500

    /// Writes a draft purchase order; it gets the next purchase order number of this site. With `send`, it is sent in
    /// the same transaction, so a refusal to send leaves no draft behind.
    public func create(_ draft: PurchaseOrderDraft, employeeID: Int64? = nil, send: Bool = false) async throws(NorthwindError) -> PurchaseOrderDetail
    {
        let draft = try Self.validated(draft)
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            try Self.checkReferences(draft, db)
            try Catalogue.checkEmployee(employeeID, db)
            var order = PurchaseOrder(
                number: try Schema.nextPurchaseNumber(db, site: StoreMetadata.siteCode(db)),
                supplierID: draft.supplierID,
                expectedDate: draft.expectedDate,
                note: draft.note,
                employeeID: employeeID
            )
            try order.insert(db)
            try Self.insertLines(draft.lines, orderID: order.id ?? 0, db)
            if send { try Self.send(&order, db) }
            return try Self.detail(number: order.number, db)
        }
    }

    /// Replaces a draft's supplier, date, note and lines. `expectedVersion` is the version that was read.
    public func update(number: String, _ draft: PurchaseOrderDraft, expectedVersion: Int? = nil) async throws(NorthwindError) -> PurchaseOrderDetail {
        let draft = try Self.validated(draft)
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            var order = try Self.fetch(number: number, db)
            try Self.requireOwn(order)
            guard order.status == .draft else {
                throw NorthwindError.invalidState("Purchase order \(number) is \(order.status.words); only a draft's lines can change.")
            }
            if let expectedVersion, expectedVersion != order.version {
                throw NorthwindError.conflict("Someone else changed purchase order \(number) after you opened it. Reload it and edit again.")
            }
            try Self.checkReferences(draft, db)
            order.supplierID = draft.supplierID
            order.expectedDate = draft.expectedDate
            order.note = draft.note
            order.version += 1
            try order.update(db)
            try PurchaseOrderLine.filter(PurchaseOrderLine.Columns.purchaseOrderID == order.id).deleteAll(db)
            try Self.insertLines(draft.lines, orderID: order.id ?? 0, db)
            return try Self.detail(number: number, db)
        }
    }

    /// Sends a draft to its supplier: its lines are fixed from now on, and what they ask for is on order.
    public func send(number: String) async throws(NorthwindError) -> PurchaseOrderDetail {
        try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            var order = try Self.fetch(number: number, db)
            try Self.requireOwn(order)
            try Self.send(&order, db)
            return try Self.detail(number: number, db)
        }
    }

    static func send(_ order: inout PurchaseOrder, _ db: Database) throws {
        let number = order.number
        guard order.status == .draft else {
            throw NorthwindError.invalidState("Purchase order \(number) is \(order.status.words) already; only a draft is sent.")
        }
        let detail = try Self.detail(number: number, db)
        guard !detail.lines.isEmpty else {
            throw NorthwindError.invalidState("Purchase order \(number) has no lines; add at least one before sending it.")
        }
        let missing = detail.lines.filter { $0.line.unitCost == nil }.map(\.productName)
        guard missing.isEmpty else {
            throw NorthwindError.invalid("lines", "give a unit cost for \(missing.joined(separator: ", ")) before sending")
        }
        let discontinued = try Self.discontinued(detail.lines.map(\.line.productID), db)
        guard discontinued.isEmpty else {
            throw NorthwindError.invalid("lines", "\(discontinued.joined(separator: ", ")) is discontinued; take it off the order")
        }
        order.status = .sent
        order.sentAt = .now
        order.version += 1
        try order.update(db)
    }

    /// Cancels what has not been received: a draft, or a sent order (what arrived stays, the rest is no longer on
    /// order).
    public func cancel(number: String) async throws(NorthwindError) -> PurchaseOrderDetail {
        try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            var order = try Self.fetch(number: number, db)
            try Self.requireOwn(order)
            guard order.status != .cancelled, order.status != .received else {
                throw NorthwindError.invalidState("Purchase order \(number) is \(order.status.words); there is nothing left to cancel.")
            }
            order.status = .cancelled
            order.closedAt = .now
            order.version += 1
            try order.update(db)
            return try Self.detail(number: number, db)
        }
    }

    /// Deletes a draft, which was never sent and so asked nothing of anyone.
    public func delete(number: String) async throws(NorthwindError) {
        try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            let order = try Self.fetch(number: number, db)
            try Self.requireOwn(order)
            guard order.status == .draft else {
                throw NorthwindError.invalidState("Purchase order \(number) is \(order.status.words); only a draft is deleted (cancel it instead).")
            }
            _ = try order.delete(db)
        }
    }

    public func purchaseOrder(number: String) async throws(NorthwindError) -> PurchaseOrderDetail {
        try await read { db in try Self.detail(number: number, db) }
    }

    /// Purchase orders, newest first, with their supplier, lines and what they still await.
    public func list(_ query: PurchaseOrderQuery = PurchaseOrderQuery()) async throws(NorthwindError) -> Page<PurchaseOrderSummary> {
        try checkPaging(limit: query.limit, offset: query.offset)
        return try await read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let status = query.status {
                conditions.append("p.status = ?")
                _ = arguments.append(contentsOf: [status.rawValue])
            }
            if query.awaiting { conditions.append("p.status IN ('sent', 'partiallyReceived')") }
            if let supplier = query.supplierID {
                conditions.append("p.supplierID = ?")
                _ = arguments.append(contentsOf: [supplier])
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM purchase_orders p \(filter)", arguments: arguments) ?? 0
            var pageArguments = arguments
            _ = pageArguments.append(contentsOf: [query.limit, query.offset])
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT p.*, s.companyName AS supplierName,
                      (SELECT count(*) FROM purchase_order_lines l WHERE l.purchaseOrderID = p.id) AS lineCount,
                      (SELECT ifnull(sum(l.quantity * ifnull(l.unitCostCents, 0)), 0) FROM purchase_order_lines l
                        WHERE l.purchaseOrderID = p.id) AS totalCents,
                      (SELECT count(*) FROM purchase_order_lines l WHERE l.purchaseOrderID = p.id AND l.unitCostCents IS NULL)
                        AS uncostedLines,
                      CASE WHEN p.status IN ('sent', 'partiallyReceived') THEN
                        (SELECT ifnull(sum(max(l.quantity - ifnull((SELECT sum(m.delta) FROM stock_movements m
                          WHERE m.purchaseLineID = l.id AND m.location IS p.location), 0), 0)), 0) FROM purchase_order_lines l
                          WHERE l.purchaseOrderID = p.id)
                      ELSE 0 END AS outstanding
                    FROM purchase_orders p JOIN suppliers s ON s.id = p.supplierID \(filter)
                    ORDER BY p.createdAt DESC, p.id DESC LIMIT ? OFFSET ?
                    """,
                arguments: pageArguments
            )
            let items = try rows.map { row in
                PurchaseOrderSummary(
                    order: try PurchaseOrder(row: row),
                    supplierName: row["supplierName"],
                    lineCount: row["lineCount"],
                    outstanding: row["outstanding"],
                    total: Money(cents: row["totalCents"]),
                    uncostedLines: row["uncostedLines"]
                )
            }
            return Page(items: items, total: total, offset: query.offset, limit: query.limit)
        }
    }

    // MARK: Reading and checking

    /// By its number, or by "P12" alone for one of this site's own, as people say it.
    static func fetch(number: String, _ db: Database) throws -> PurchaseOrder {
        let trimmed = number.trimmingCharacters(in: .whitespaces).uppercased()
        if let order = try PurchaseOrder.filter(PurchaseOrder.Columns.number == trimmed).fetchOne(db) { return order }
        if trimmed.first == "P", trimmed.count > 1, trimmed.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }),
            let order = try PurchaseOrder.filter(PurchaseOrder.Columns.number == "\(try StoreMetadata.siteCode(db))-\(trimmed)").fetchOne(db)
        {
            return order
        }
        throw NorthwindError.notFound(entity: "purchase order", key: number.trimmingCharacters(in: .whitespaces))
    }

    static func detail(number: String, _ db: Database) throws -> PurchaseOrderDetail {
        let order = try fetch(number: number, db)
        let supplier = try String.fetchOne(db, sql: "SELECT companyName FROM suppliers WHERE id = ?", arguments: [order.supplierID]) ?? ""
        let awaiting = order.status == .sent || order.status == .partiallyReceived
        let lines = try Row.fetchAll(
            db,
            sql: """
                SELECT l.*, p.name AS productName,
                  ifnull((SELECT sum(m.delta) FROM stock_movements m WHERE m.purchaseLineID = l.id AND m.location IS ?2), 0) AS received
                FROM purchase_order_lines l JOIN products p ON p.id = l.productID
                WHERE l.purchaseOrderID = ?1 ORDER BY l.position
                """,
            arguments: [order.id, order.location]
        ).map { row in
            let line = try PurchaseOrderLine(row: row)
            let received: Int = row["received"]
            return PurchaseLineState(
                line: line,
                productName: row["productName"],
                received: received,
                outstanding: awaiting ? max(line.quantity - received, 0) : 0
            )
        }
        let movements = try Row.fetchAll(
            db,
            sql: """
                SELECT m.*, p.name AS productName,
                  EXISTS (SELECT 1 FROM stock_movements r WHERE r.reversesID = m.id AND r.location IS ?2) AS reversed
                FROM stock_movements m JOIN products p ON p.id = m.productID
                WHERE m.purchaseLineID IN (SELECT id FROM purchase_order_lines WHERE purchaseOrderID = ?1) AND m.location IS ?2
                ORDER BY m.id
                """,
            arguments: [order.id, order.location]
        ).map { row in ReceiptEntry(movement: try StockMovement(row: row), productName: row["productName"], reversed: row["reversed"]) }
        return PurchaseOrderDetail(order: order, supplierName: supplier, lines: lines, receipts: movements)
    }

    /// Only the site that wrote a purchase order changes or receives it; another site's is read-only here.
    static func requireOwn(_ order: PurchaseOrder) throws {
        if let site = order.location {
            throw NorthwindError.invalidState(
                "Purchase order \(order.number) belongs to site \(site); only that site can change, send, receive or cancel it."
            )
        }
    }

    static func validated(_ draft: PurchaseOrderDraft) throws(NorthwindError) -> PurchaseOrderDraft {
        var draft = draft
        draft.note = clean(draft.note)
        var errors: [NorthwindError.FieldError] = []
        if let note = draft.note, note.count > Limits.noteLength {
            errors.append(.init("note", "must be at most \(Limits.noteLength) characters"))
        }
        if draft.lines.count > maximumLines {
            errors.append(.init("lines", "must be at most \(maximumLines) lines"))
        }
        var seen: Set<Int64> = []
        for (index, line) in draft.lines.enumerated() {
            let field = "lines[\(index)]"
            if let error = Limits.check(line.quantity, Limits.lineQuantity, "\(field).quantity") { errors.append(error) }
            if let cost = line.unitCost, let error = Limits.check(cost, Limits.money, "\(field).unitCost") { errors.append(error) }
            if !seen.insert(line.productID).inserted {
                errors.append(.init("\(field).productID", "product #\(line.productID) is on the order already; change that line's quantity"))
            }
        }
        try errors.throwIfAny()
        return draft
    }

    static func checkReferences(_ draft: PurchaseOrderDraft, _ db: Database) throws {
        guard try exists(db, "suppliers", draft.supplierID) else {
            throw NorthwindError.invalid("supplierID", "no supplier #\(draft.supplierID) exists here")
        }
        var errors: [NorthwindError.FieldError] = []
        for (index, line) in draft.lines.enumerated() {
            guard let product = try Product.fetchOne(db, key: line.productID) else {
                errors.append(.init("lines[\(index)].productID", "no product #\(line.productID) exists"))
                continue
            }
            if product.discontinued {
                errors.append(.init("lines[\(index)].productID", "'\(product.name)' is discontinued; it is no longer bought"))
            }
        }
        try errors.throwIfAny()
    }

    static func discontinued(_ productIDs: [Int64], _ db: Database) throws -> [String] {
        try Product.filter(keys: productIDs).filter(Product.Columns.discontinued == true).fetchAll(db).map(\.name)
    }

    static func insertLines(_ lines: [PurchaseLineDraft], orderID: Int64, _ db: Database) throws {
        for (index, draft) in lines.enumerated() {
            var line = PurchaseOrderLine(
                purchaseOrderID: orderID,
                position: index + 1,
                productID: draft.productID,
                quantity: draft.quantity,
                unitCost: draft.unitCost
            )
            try line.insert(db)
        }
    }
}

extension PurchaseOrderStatus {
    /// As a sentence says it: "partly received".
    public var words: String {
        switch self {
        case .draft: "a draft"
        case .sent: "sent"
        case .partiallyReceived: "partly received"
        case .received: "received"
        case .cancelled: "cancelled"
        }
    }
}
