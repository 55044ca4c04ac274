import CoreMetrics
import Foundation
import GRDB
import NorthwindStore

/// A line as the person taking the order enters it. The unit price defaults to the product's current price.
public struct OrderLineDraft: Sendable, Codable, Equatable {
    public var productID: Int64
    public var quantity: Int
    public var discount: Double
    public var unitPrice: Money?
    public init(productID: Int64, quantity: Int, discount: Double = 0, unitPrice: Money? = nil) {
        self.productID = productID
        self.quantity = quantity
        self.discount = discount
        self.unitPrice = unitPrice
    }
}

/// A new order: who ordered, who took it, when it is needed, how it ships, and what is in it.
/// Shipping address fields default to the customer's address.
public struct OrderDraft: Sendable, Codable {
    public var customerCode: String
    public var employeeID: Int64?
    public var orderDate: LocalDate?
    public var requiredDate: LocalDate?
    public var shipVia: Int64?
    public var freight: Money
    public var lines: [OrderLineDraft]
    public init(
        customerCode: String,
        employeeID: Int64?,
        orderDate: LocalDate? = nil,
        requiredDate: LocalDate? = nil,
        shipVia: Int64? = nil,
        freight: Money = .zero,
        lines: [OrderLineDraft]
    ) {
        self.customerCode = customerCode
        self.employeeID = employeeID
        self.orderDate = orderDate
        self.requiredDate = requiredDate
        self.shipVia = shipVia
        self.freight = freight
        self.lines = lines
    }
}

/// The order rules every shape shares: how short a line is, whether an order can ship, and what it comes to.
/// The order page, the API, the CLI, the shortage error and the availability check all ask here.
public enum OrderRules {
    /// Units stock cannot cover now; 0 when it can.
    public static func short(ordered: Int, inStock: Int) -> Int {
        guard ordered > inStock else { return 0 }
        let (difference, overflow) = ordered.subtractingReportingOverflow(inStock)
        return overflow ? Int.max : difference
    }

    /// Whether every line can be supplied from stock now.
    public static func isSupplyable(_ lines: [OrderLineDetail]) -> Bool { lines.allSatisfy { $0.short == 0 } }

    /// The sum of the lines' exact totals.
    public static func subtotal(_ lines: [OrderLineDetail]) -> Money { lines.reduce(.zero) { $0 + $1.total } }

    /// What the customer pays: the lines plus freight.
    public static func total(subtotal: Money, freight: Money) -> Money { subtotal + freight }
}

/// One line of an order with its product's name, exact total and current availability.
public struct OrderLineDetail: Sendable, Codable {
    public var line: OrderLine
    public var productName: String
    public var total: Money
    public var inStock: Int
    /// Units of it already shipped (an order shipped in part).
    public var shipped = 0
    /// How many of the units still to ship stock cannot cover now; 0 when it can.
    public var short: Int { OrderRules.short(ordered: max(line.quantity - shipped, 0), inStock: inStock) }
}

public struct OrderDetail: Sendable, Codable {
    public var order: Order
    public var customer: Customer
    public var employee: Employee?
    public var shipper: Shipper?
    public var lines: [OrderLineDetail]
    public var subtotal: Money
    public var total: Money { OrderRules.total(subtotal: subtotal, freight: order.freight) }
    /// Whether every line can be supplied from stock now.
    public var isSupplyable: Bool { OrderRules.isSupplyable(lines) }
}

/// An order as lists show it.
public struct OrderSummary: Sendable, Codable {
    public var order: Order
    public var customerCode: String
    public var customerName: String
    public var employeeName: String?
    public var total: Money
    public var isSupplyable: Bool
}

public struct OrderQuery: Sendable {
    public var status: OrderStatus?
    public var customerCode: String?
    public var employeeID: Int64?
    /// Inclusive range of order dates.
    public var from: LocalDate?
    public var to: LocalDate?
    /// An order number prefix, or part of the customer's code or company name.
    public var search: String?
    public var limit = 50
    public var offset = 0
    public init(status: OrderStatus? = nil) { self.status = status }
}

/// Availability of one line: ordered, in stock, short by N.
public struct LineAvailability: Sendable, Codable, Equatable {
    public var productID: Int64
    public var productName: String
    public var ordered: Int
    public var inStock: Int
    public var short: Int { OrderRules.short(ordered: ordered, inStock: inStock) }
}

extension Orders {
    /// Takes a new, unshipped order; it gets the next order number of this installation.
    public func create(_ draft: OrderDraft) async throws(NorthwindError) -> OrderDetail {
        try Self.validate(lines: draft.lines)
        let orderDate = draft.orderDate ?? .today
        if let required = draft.requiredDate, required < orderDate {
            throw .invalid("requiredDate", "must not be before the order date \(orderDate)")
        }
        if let error = Limits.check(draft.freight, Limits.money, "freight") { throw .invalid([error]) }
        let order = try await write { db in try Self.insertOrder(draft, orderDate: orderDate, db) }
        Counter(label: "northwind_orders_taken_total").increment()
        return order
    }

    /// Inserts a validated draft's order and lines inside the caller's transaction.
    /// `number` and `recordID` keep an imported order's own.
    static func insertOrder(
        _ draft: OrderDraft,
        orderDate: LocalDate,
        number: String? = nil,
        recordID: String? = nil,
        _ db: Database
    ) throws -> OrderDetail {
        // (A caller that brings the order's own number takes none of this store's.)
        if number == nil { try ShopSync.requireSyncedSinceRestore(db) }
        let customer = try Records.customer(code: draft.customerCode, db)
        try Catalogue.checkEmployee(draft.employeeID, db)
        if let shipVia = draft.shipVia, try !exists(db, "shippers", shipVia) {
            throw NorthwindError.invalid("shipVia", "no shipper #\(shipVia) exists")
        }
        var order = Order(
            number: try number ?? StoreMetadata.nextOrderNumber(db),
            customerID: customer.id ?? 0,
            employeeID: draft.employeeID,
            orderDate: orderDate,
            requiredDate: draft.requiredDate,
            shipVia: draft.shipVia,
            freight: draft.freight
        )
        if let recordID { order.recordID = recordID }
        order.shipName = customer.companyName
        (order.shipAddress, order.shipCity, order.shipRegion) = (customer.address, customer.city, customer.region)
        (order.shipPostalCode, order.shipCountry) = (customer.postalCode, customer.country)
        try Self.insert(&order, db)
        try Self.insertLines(draft.lines, orderID: order.id ?? 0, db)
        return try Self.orderDetail(number: order.number, db)
    }

    public func list(_ query: OrderQuery = OrderQuery()) async throws(NorthwindError) -> Page<OrderSummary> {
        try checkPaging(limit: query.limit, offset: query.offset)
        if let from = query.from, let to = query.to, from > to {
            throw .invalid("from", "the range starts (\(from)) after it ends (\(to))")
        }
        // Which filters are set decides the plan, and so the cost; their values hardly do.
        let shape = [
            query.status == nil, query.customerCode == nil, query.employeeID == nil, query.search == nil, query.from == nil, query.to == nil,
        ]
        .map { $0 ? "-" : "+" }.joined()
        return try await measuredRead("orders " + shape) { db in
            var request = Order.all()
            if let status = query.status { request = request.filter(Order.Columns.status == status) }
            if let code = query.customerCode {
                request = request.filter(Order.Columns.customerID == (try Records.customer(code: code, db).id ?? 0))
            }
            if let employeeID = query.employeeID { request = request.filter(Order.Columns.employeeID == employeeID) }
            if let text = query.search?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
                let pattern = "%" + People.escapeLike(text) + "%"
                request = request.filter(
                    sql: """
                        (number LIKE ? ESCAPE '\\' OR customerID IN (SELECT id FROM customers
                          WHERE code LIKE ? ESCAPE '\\' OR companyName LIKE ? ESCAPE '\\'))
                        """,
                    arguments: [People.escapeLike(text) + "%", pattern, pattern]
                )
            }
            if let from = query.from { request = request.filter(Order.Columns.orderDate >= from) }
            if let to = query.to { request = request.filter(Order.Columns.orderDate <= to) }
            let total = try request.fetchCount(db)
            let ordering: [any SQLOrderingTerm] =
                query.status == .new
                ? [Order.Columns.requiredDate.ascNullsLast, Order.Columns.id]
                : [Order.Columns.orderDate.desc, Order.Columns.id.desc]
            let orders = try request.order(ordering).limit(query.limit, offset: query.offset).fetchAll(db)
            let items = try orders.map { order in try Self.summary(order, db) }
            return Page(items: items, total: total, offset: query.offset, limit: query.limit)
        }
    }

    /// The order with its lines, line totals, subtotal, freight and total.
    public func order(number: String) async throws(NorthwindError) -> OrderDetail {
        try await read { db in try Self.orderDetail(number: number, db) }
    }

    /// Replaces the lines of an unshipped order. `expectedVersion`, when given, refuses the edit if someone else
    /// changed the order since it was read.
    public func updateLines(number: String, lines: [OrderLineDraft], expectedVersion: Int? = nil) async throws(NorthwindError) -> OrderDetail {
        try Self.validate(lines: lines)
        return try await write { db in
            let order = try Self.fetchOrder(number: number, db)
            try Orders.requireWrittenHere(order, db)
            guard order.status == .new else {
                throw NorthwindError.invalidState("Order \(order.number) is \(order.status.rawValue); only new orders can be edited.")
            }
            if try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM shipments WHERE orderID = ?)"), arguments: [order.id]) == true
            {
                throw NorthwindError.invalidState("Order \(order.number) has shipped in part; its lines can no longer be edited.")
            }
            if let expectedVersion, expectedVersion != order.version {
                throw NorthwindError.conflict("Someone else changed order \(number) after you opened it. Reload it and edit again.")
            }
            try OrderLine.filter(OrderLine.Columns.orderID == order.id).deleteAll(db)
            try Self.insertLines(lines, orderID: order.id ?? 0, db)
            try db.cachedStatement(sql: "UPDATE orders SET version = version + 1 WHERE id = ?").execute(arguments: [order.id])
            return try Self.orderDetail(number: number, db)
        }
    }

    /// Per line: ordered, in stock, short by N.
    public func availability(number: String) async throws(NorthwindError) -> [LineAvailability] {
        try await read { db in try Self.availability(try Self.fetchOrder(number: number, db), db) }
    }

    /// Ships the order whole: in one transaction, verifies every line still to ship is on the shelf, and ships it
    /// all in one shipment (a movement per line), which completes the order. When any line is short, it changes
    /// nothing and throws the short lines. On an order shipped in part, it ships everything that is left.
    ///
    /// Concurrent executions are safe: SQLite serializes writers, the check and the decrement share a transaction,
    /// and the ledger's triggers back them up.
    public func execute(number: String, employeeID: Int64? = nil, shippedDate: LocalDate? = nil) async throws(NorthwindError) -> OrderDetail {
        let shipment = try await shipping(number: number, employeeID: employeeID, shippedDate: shippedDate, requestKey: nil) { order, state in
            try Self.requireAllFillable(order, state.lines)
            return state.lines.map { ($0, $0.open) }
        }
        Counter(label: "northwind_orders_executed_total").increment()
        return try await self.order(number: shipment.orderNumber)
    }

    /// Cancels what of an order has not shipped. An order that shipped nothing becomes `cancelled`, its lines kept
    /// for the record. An order shipped in part keeps what shipped: each line comes down to its shipped quantity
    /// (a line nothing shipped of goes), and the order reads `shipped`, on the date of its last shipment, so that
    /// sales count what left and no more.
    public func cancel(number: String) async throws(NorthwindError) -> OrderDetail {
        try await write { db in
            let order = try Self.fetchOrder(number: number, db)
            try Orders.requireWrittenHere(order, db)
            try ShopSync.requireSyncedSinceRestore(db)
            let state = try Self.fulfilment(order, db)
            switch state.status {
            case .new:
                try db.cachedStatement(sql: "UPDATE orders SET status = 'cancelled', version = version + 1 WHERE id = ?").execute(arguments: [
                    order.id
                ])
            case .partlyShipped:
                try Self.cancelRemainder(order, state, db)
            case .shipped, .cancelled:
                throw NorthwindError.invalidState(
                    "Order \(order.number) is \(state.status.words); only an open order, or what of it has not shipped, can be cancelled."
                )
            }
            return try Self.orderDetail(number: number, db)
        }
    }

    static func cancelRemainder(_ order: Order, _ state: OrderFulfilment, _ db: Database) throws {
        for line in state.lines where line.open > 0 {
            if line.shipped == 0 {
                try db.cachedStatement(sql: "DELETE FROM order_lines WHERE id = ?").execute(arguments: [line.orderLineID])
            } else {
                try db.cachedStatement(
                    sql: """
                        UPDATE order_lines SET quantity = ?1,
                          extendedPriceCents = sqlserver_line_cents(unitPriceCents, ?1, discount) WHERE id = ?2
                        """
                ).execute(arguments: [line.shipped, line.orderLineID])
            }
        }
        let last = try LocalDate.fetchOne(db.cachedStatement(sql: "SELECT max(shippedDate) FROM shipments WHERE orderID = ?"), arguments: [order.id])
        // What was taken off is kept, for the fill rate: the lines no longer say it.
        let cancelled = state.lines.map(\.open).reduce(0, +)
        try db.cachedStatement(
            sql:
                "UPDATE orders SET status = 'shipped', shippedDate = ?, cancelledUnits = ifnull(cancelledUnits, 0) + ?, version = version + 1 WHERE id = ?"
        ).execute(arguments: [last, cancelled, order.id])
    }

    // MARK: Helpers

    // The order-taking path inserts through cached statements: building a record's INSERT each time cost as much
    // as running it.
    static func insert(_ order: inout Order, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO orders (recordID, number, customerID, employeeID, orderDate, requiredDate, shippedDate, status,
                  shipVia, freightCents, shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry, version)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            order.recordID, order.number, order.customerID, order.employeeID, order.orderDate, order.requiredDate,
            order.shippedDate, order.status, order.shipVia, order.freight, order.shipName, order.shipAddress,
            order.shipCity, order.shipRegion, order.shipPostalCode, order.shipCountry, order.version,
        ])
        order.id = db.lastInsertedRowID
    }

    static func insert(_ line: OrderLine, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO order_lines (recordID, orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            line.recordID, line.orderID, line.productID, line.unitPrice, line.quantity, line.discount,
            line.extendedPrice,
        ])
    }

    /// Inserts a shipment's movement at the product's average cost here, the cost of the sale that gross margin
    /// sets against its price.
    static func insert(_ movement: StockMovement, _ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO stock_movements (recordID, productID, delta, reason, orderID, employeeID, note, createdAt, shipmentLineID,
                  returnLineID, unitCostCents)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, (SELECT averageCostCents FROM stock_movements
                  WHERE productID = ?2 AND location IS NULL AND averageCostCents IS NOT NULL ORDER BY id DESC LIMIT 1))
                """
        ).execute(arguments: [
            movement.recordID, movement.productID, movement.delta, movement.reason, movement.orderID,
            movement.employeeID, movement.note, movement.createdAt, movement.shipmentLineID, movement.returnLineID,
        ])
    }

    static func validate(lines: [OrderLineDraft]) throws(NorthwindError) {
        var errors: [NorthwindError.FieldError] = []
        if lines.isEmpty { errors.append(.init("lines", "an order needs at least one line")) }
        var seen = Set<Int64>()
        for (index, line) in lines.enumerated() {
            let field = "lines[\(index)]"
            if let error = Limits.check(line.quantity, Limits.lineQuantity, "\(field).quantity") { errors.append(error) }
            if !(0...1).contains(line.discount) || line.discount.isNaN {
                errors.append(.init("\(field).discount", "must be a fraction between 0 and 1, e.g. 0.15 for 15%"))
            }
            if let price = line.unitPrice, let error = Limits.check(price, Limits.money, "\(field).unitPrice") { errors.append(error) }
            if !seen.insert(line.productID).inserted {
                errors.append(
                    .init("\(field).productID", "product #\(line.productID) is already on another line; change that line's quantity instead")
                )
            }
        }
        try errors.throwIfAny()
    }

    static func insertLines(_ lines: [OrderLineDraft], orderID: Int64, _ db: Database) throws {
        for (index, draft) in lines.enumerated() {
            guard let product = try fetchOne(Product.self, db, sql: "SELECT * FROM products WHERE id = ?", [draft.productID]) else {
                throw NorthwindError.invalid("lines[\(index)].productID", "no product #\(draft.productID) exists")
            }
            if product.discontinued {
                throw NorthwindError.invalid("lines[\(index)].productID", "'\(product.name)' is discontinued and can no longer be ordered")
            }
            // A price stored out of range (by hand, or by an older version) is refused, not carried into an order.
            if draft.unitPrice == nil, !Limits.money.contains(product.unitPrice) {
                throw NorthwindError.invalid(
                    "lines[\(index)].productID",
                    "'\(product.name)' has a price out of range (\(product.unitPrice)); correct the product first"
                )
            }
            let line = OrderLine(
                orderID: orderID,
                productID: draft.productID,
                unitPrice: draft.unitPrice ?? product.unitPrice,
                quantity: draft.quantity,
                discount: draft.discount
            )
            try Self.insert(line, db)
        }
    }

    /// An order by its number; a number of digits alone that no order has exactly (classic orders are `10248`) is
    /// one taken here, so that a person on the phone can say "831" for `7KQ2XM-831`.
    static func fetchOrder(number: String, _ db: Database) throws -> Order {
        let trimmed = number.trimmingCharacters(in: .whitespaces)
        let sql = "SELECT * FROM orders WHERE number = ?"
        if let order = try fetchOne(Order.self, db, sql: sql, [trimmed.uppercased()]) { return order }
        if !trimmed.isEmpty, trimmed.allSatisfy(\.isASCII), trimmed.allSatisfy(\.isNumber),
            let order = try fetchOne(Order.self, db, sql: sql, ["\(try StoreMetadata.siteCode(db))-\(trimmed)"])
        {
            return order
        }
        throw NorthwindError.notFound(entity: "order", key: trimmed)
    }

    static func lineDetails(orderID: Int64?, _ db: Database) throws -> [OrderLineDetail] {
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT order_lines.*, products.name AS productName, products.unitsInStock AS inStock,
                      \(shippedSQL("order_lines.id")) AS shipped
                    FROM order_lines JOIN products ON products.id = order_lines.productID
                    WHERE order_lines.orderID = ? ORDER BY order_lines.id
                    """
            ),
            arguments: [orderID]
        )
        return try rows.map { row in
            let line = try OrderLine(row: row)
            return OrderLineDetail(
                line: line,
                productName: try row.decode(forColumn: "productName"),
                total: line.total,
                inStock: try row.decode(forColumn: "inStock"),
                shipped: try row.decode(forColumn: "shipped")
            )
        }
    }

    static func orderDetail(number: String, _ db: Database) throws -> OrderDetail {
        let order = try fetchOrder(number: number, db)
        guard let customer = try fetchOne(Customer.self, db, sql: "SELECT * FROM customers WHERE id = ?", [order.customerID]) else {
            throw NorthwindError.notFound(entity: "customer", key: "#\(order.customerID)")
        }
        let lines = try lineDetails(orderID: order.id, db)
        return OrderDetail(
            order: order,
            customer: customer,
            employee: try order.employeeID.flatMap { try fetchOne(Employee.self, db, sql: "SELECT * FROM employees WHERE id = ?", [$0]) },
            shipper: try order.shipVia.flatMap { try fetchOne(Shipper.self, db, sql: "SELECT * FROM shippers WHERE id = ?", [$0]) },
            lines: lines,
            subtotal: OrderRules.subtotal(lines)
        )
    }

    static func summary(_ order: Order, _ db: Database) throws -> OrderSummary {
        let lines = try lineDetails(orderID: order.id, db)
        let customer = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT code, companyName FROM customers WHERE id = ?"),
            arguments: [order.customerID]
        )
        let employeeName = try order.employeeID.flatMap {
            try String.fetchOne(db.cachedStatement(sql: "SELECT firstName || ' ' || lastName FROM employees WHERE id = ?"), arguments: [$0])
        }
        return OrderSummary(
            order: order,
            customerCode: customer?["code"] ?? "",
            customerName: customer?["companyName"] ?? "",
            employeeName: employeeName,
            total: OrderRules.total(subtotal: OrderRules.subtotal(lines), freight: order.freight),
            isSupplyable: OrderRules.isSupplyable(lines)
        )
    }

    static func availability(_ order: Order, _ db: Database) throws -> [LineAvailability] {
        try lineDetails(orderID: order.id, db).map {
            LineAvailability(productID: $0.line.productID, productName: $0.productName, ordered: $0.line.quantity, inStock: $0.inStock)
        }
    }
}
