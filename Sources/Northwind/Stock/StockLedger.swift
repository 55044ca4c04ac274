import Foundation
import GRDB
import NorthwindStore

extension Stock {
    /// Books goods in that came without a purchase order: stock rises. (What is on order falls only by receipts
    /// against purchase orders, `purchasing.receive`.)
    public func receive(productID: Int64, quantity: Int, employeeID: Int64? = nil, note: String? = nil) async throws(NorthwindError) -> Product {
        if let error = Limits.check(quantity, 1...Limits.units.upperBound, "quantity") { throw .invalid([error]) }
        return try await write { db in
            let product = try Catalogue.productRow(id: productID, db).product
            try Catalogue.checkEmployee(employeeID, db)
            guard product.unitsInStock <= Limits.units.upperBound - quantity else {
                throw NorthwindError.invalid(
                    "quantity",
                    "would bring the stock of '\(product.name)' above \(Limits.grouped(Limits.units.upperBound)) units"
                )
            }
            var movement = StockMovement(productID: productID, delta: quantity, reason: .received, employeeID: employeeID, note: clean(note))
            try movement.insert(db)
            return try Catalogue.productRow(id: productID, db).product
        }
    }

    /// Records a stock take: the counted quantity replaces the stock, and the difference becomes a movement.
    public func adjust(
        productID: Int64,
        countedQuantity: Int,
        employeeID: Int64? = nil,
        note: String? = nil
    ) async throws(NorthwindError) -> Product {
        if let error = Limits.check(countedQuantity, Limits.units, "countedQuantity") { throw .invalid([error]) }
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            let product = try Catalogue.productRow(id: productID, db).product
            try Catalogue.checkEmployee(employeeID, db)
            let delta = countedQuantity - product.unitsInStock
            if delta != 0 {
                var movement = StockMovement(productID: productID, delta: delta, reason: .stockTake, employeeID: employeeID, note: clean(note))
                try movement.insert(db)
            }
            return try Catalogue.productRow(id: productID, db).product
        }
    }

    /// The product's stock movements, newest first.
    /// This location's movements of a product, newest first. Other locations' movements (arrived by sync) move their
    /// own stock, not this shelf, so they are counted in `stock.byLocation` instead.
    public func movements(productID: Int64, limit: Int = 50) async throws(NorthwindError) -> [StockMovement] {
        try checkPaging(limit: limit, offset: 0)
        return try await read { db in try Self.movements(productID: productID, limit: limit, db) }
    }

    /// The same movements, each with the number of the order it shipped or returned, as a product's page shows them:
    /// one query for the numbers, not one per movement.
    public func ledger(productID: Int64, limit: Int = 50) async throws(NorthwindError) -> [MovementEntry] {
        try checkPaging(limit: limit, offset: 0)
        return try await read { db in
            let movements = try Self.movements(productID: productID, limit: limit, db)
            let orderIDs = Array(Set(movements.compactMap(\.orderID)))
            var numbers: [Int64: String] = [:]
            if !orderIDs.isEmpty {
                let marks = Array(repeating: "?", count: orderIDs.count).joined(separator: ",")
                for row in try Row.fetchAll(db, sql: "SELECT id, number FROM orders WHERE id IN (\(marks))", arguments: StatementArguments(orderIDs))
                {
                    numbers[row[0]] = row[1]
                }
            }
            return movements.map { MovementEntry(movement: $0, orderNumber: $0.orderID.flatMap { numbers[$0] }) }
        }
    }

    /// This location's movements of a product, newest first.
    static func movements(productID: Int64, limit: Int, _ db: Database) throws -> [StockMovement] {
        _ = try Catalogue.productRow(id: productID, db)
        return try StockMovement.filter(StockMovement.Columns.productID == productID).filter(sql: "location IS NULL")
            .order(StockMovement.Columns.createdAt.desc, StockMovement.Columns.id.desc)
            .limit(limit).fetchAll(db)
    }

    /// A product's stock at every location this store knows of: here first (its shelf, `unitsInStock`), then each
    /// other installation's, by site code, as the movements synced from it add up. Read-only: only a location's own
    /// movements change its stock.
    public func byLocation(productID: Int64) async throws(NorthwindError) -> [LocationStock] {
        try await read { db in
            let product = try Catalogue.productRow(id: productID, db).product
            let here = LocationStock(location: try Self.location(db), units: product.unitsInStock, isHere: true)
            let elsewhere = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT location, units FROM stock_levels WHERE productID = ? AND location <> ? ORDER BY location"),
                arguments: [productID, here.location]
            )
            return [here] + elsewhere.map { LocationStock(location: $0[0], units: $0[1], isHere: false) }
        }
    }
}

/// A stock movement with the number of the order it belongs to, if any.
public struct MovementEntry: Sendable {
    public var movement: StockMovement
    public var orderNumber: String?
}
