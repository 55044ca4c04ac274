import Crypto
import Foundation
import GRDB
import NorthwindStore

/// A transfer as people follow it: what was sent where, and whether it arrived, in full or short.
public struct TransferStatus: Sendable, Equatable {
    public var transfer: StockTransfer
    public var productName: String
    /// The units the destination booked in; nil while the goods are in transit.
    public var received: Int?
    public var receivedAt: Timestamp?

    public var isInTransit: Bool { received == nil }
    /// Units sent that never arrived: a short delivery.
    public var shortBy: Int { received.map { transfer.quantity - $0 } ?? 0 }
}

extension Stock {
    /// Sends units of a product from this shelf to another location: the transfer and its movement out, in one
    /// transaction, refused when this shelf holds fewer units. The goods are then in transit, at both ends, until
    /// the destination receives them.
    public func send(
        productID: Int64,
        quantity: Int,
        to destination: String,
        employeeID: Int64? = nil,
        note: String? = nil
    ) async throws(NorthwindError) -> TransferStatus {
        if let error = Limits.check(quantity, 1...Limits.units.upperBound, "quantity") { throw .invalid([error]) }
        let destination = destination.trimmingCharacters(in: .whitespaces).uppercased()
        let note = clean(note)
        if let error = RecordRules.check("stock_transfers", "note", note) { throw .invalid([error]) }
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            let product = try Catalogue.productRow(id: productID, db).product
            try Catalogue.checkEmployee(employeeID, db)
            let here = try Self.location(db)
            guard destination != here else { throw NorthwindError.invalid("to", "is this location (\(here)): send to another") }
            guard try ShopSync.membership(db) != nil else {
                throw NorthwindError.invalid(
                    "to",
                    "this store has not joined a company: transfers go between installations that sync (northwind sync join)"
                )
            }
            let known = try Self.otherLocations(db, here: here)
            guard known.contains(destination) else {
                let list = known.isEmpty ? "none yet; the destination must have joined and synced once" : known.joined(separator: ", ")
                throw NorthwindError.invalid("to", "no location '\(destination)' is known here (known: \(list))")
            }
            guard product.unitsInStock >= quantity else {
                throw NorthwindError.invalid(
                    "quantity",
                    "only \(Limits.grouped(product.unitsInStock)) units of '\(product.name)' are on this shelf"
                )
            }
            var transfer = StockTransfer(
                productID: productID,
                quantity: quantity,
                fromLocation: here,
                toLocation: destination,
                employeeID: employeeID,
                note: note
            )
            try transfer.insert(db)
            var movement = StockMovement(
                productID: productID,
                delta: -quantity,
                reason: .transferOut,
                employeeID: employeeID,
                note: "to \(destination)",
                transferID: transfer.id
            )
            try movement.insert(db)
            return try Self.transferStatus(id: transfer.id ?? 0, db)
        }
    }

    /// Books in a transfer sent to this location: a movement in of the units that arrived, which may be fewer than
    /// were sent (a short delivery, kept on record as such) but not more. Only the destination receives, and once.
    public func receiveTransfer(
        id: Int64,
        units: Int,
        employeeID: Int64? = nil,
        note: String? = nil
    ) async throws(NorthwindError) -> TransferStatus {
        let note = clean(note)
        // The receipt's note goes on the movement in, after what the store adds ("from LON; short by 2 of 12").
        if let error = RecordRules.check("stock_transfers", "note", note) { throw .invalid([error]) }
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            let status = try Self.transferStatus(id: id, db)
            let transfer = status.transfer
            try Catalogue.checkEmployee(employeeID, db)
            let here = try Self.location(db)
            guard transfer.toLocation == here else {
                throw NorthwindError.invalidState(
                    "Transfer #\(id) goes to \(transfer.toLocation); only that location can receive it (this is \(here))."
                )
            }
            if let received = status.received {
                throw NorthwindError.conflict(
                    "Transfer #\(id) was already received: \(received) of \(transfer.quantity) units, at \(status.receivedAt?.description ?? "")."
                )
            }
            if let error = Limits.check(units, 1...transfer.quantity, "units") { throw NorthwindError.invalid([error]) }
            let product = try Catalogue.productRow(id: transfer.productID, db).product
            guard product.unitsInStock <= Limits.units.upperBound - units else {
                throw NorthwindError.invalid(
                    "units",
                    "would bring the stock of '\(product.name)' above \(Limits.grouped(Limits.units.upperBound)) units"
                )
            }
            let short = transfer.quantity - units
            let text = [short > 0 ? "short by \(short) of \(transfer.quantity)" : nil, note].compactMap { $0 }.joined(separator: "; ")
            var movement = StockMovement(
                productID: transfer.productID,
                delta: units,
                reason: .transferIn,
                employeeID: employeeID,
                note: text.isEmpty ? "from \(transfer.fromLocation)" : "from \(transfer.fromLocation); \(text)",
                transferID: id
            )
            movement.recordID = StockMovement.onceOnlyRecordID(.transferIn, of: transfer.recordID)
            try movement.insert(db)
            return try Self.transferStatus(id: id, db)
        }
    }

    /// One transfer, by its id here.
    public func transfer(id: Int64) async throws(NorthwindError) -> TransferStatus {
        try await read { db in try Self.transferStatus(id: id, db) }
    }

    /// Transfers from or to this location, newest first; of one product, or only those still in transit.
    public func transfers(productID: Int64? = nil, inTransitOnly: Bool = false, limit: Int = 100) async throws(NorthwindError) -> [TransferStatus] {
        try checkPaging(limit: limit, offset: 0)
        return try await read { db in
            let here = try Self.location(db)
            var conditions = ["(t.fromLocation = ? OR t.toLocation = ?)"]
            var arguments: StatementArguments = [here, here]
            if let productID {
                conditions.append("t.productID = ?")
                arguments += [productID]
            }
            if inTransitOnly { conditions.append("m.id IS NULL") }
            arguments += [limit]
            let rows = try Row.fetchAll(
                db,
                sql: "\(Self.transferSelect) WHERE \(conditions.joined(separator: " AND ")) ORDER BY t.sentAt DESC, t.id DESC LIMIT ?",
                arguments: arguments
            )
            return try rows.map { row in try Self.transferStatus(row) }
        }
    }

    static let transferSelect = """
        SELECT t.*, p.name AS productName, m.delta AS received, m.createdAt AS receivedAt
        FROM stock_transfers t JOIN products p ON p.id = t.productID
        LEFT JOIN stock_movements m ON m.transferID = t.id AND m.reason = 'transferIn'
        """

    static func transferStatus(id: Int64, _ db: Database) throws -> TransferStatus {
        guard let row = try Row.fetchOne(db, sql: "\(transferSelect) WHERE t.id = ?", arguments: [id]) else {
            throw NorthwindError.notFound(entity: "transfer", key: "#\(id)")
        }
        return try transferStatus(row)
    }

    static func transferStatus(_ row: Row) throws -> TransferStatus {
        TransferStatus(
            transfer: try StockTransfer(row: row),
            productName: row["productName"],
            received: row["received"],
            receivedAt: row["receivedAt"]
        )
    }

    /// This location, and where it can send a transfer: the other locations it has heard of (none before it has
    /// joined a company and synced).
    public func locations() async throws(NorthwindError) -> (here: String, others: [String]) {
        try await read { db in
            let here = try Self.location(db)
            return (here, try ShopSync.membership(db) == nil ? [] : try Self.otherLocations(db, here: here))
        }
    }

    /// This installation's site code: the one it joined with, else the one it made for its order numbers.
    static func location(_ db: Database) throws -> String {
        try ShopSync.membership(db)?.siteCode ?? StoreMetadata.siteCode(db)
    }

    /// The other locations this store has heard of: those whose stock or zone reached it by sync.
    static func otherLocations(_ db: Database, here: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT location FROM stock_levels WHERE location <> :here
                UNION SELECT substr(key, 12) FROM sync_state WHERE key LIKE 'token:site-%' AND substr(key, 12) <> :here
                ORDER BY 1
                """,
            arguments: ["here": here]
        )
    }
}

extension StockMovement {
    /// The record ID of the one movement that ships an order line, or receives a transfer: the same wherever and
    /// however often it is made. A store put back to an older copy of itself, before the server has said so, may ship
    /// or receive again what it already did; the second movement is then the same record as the first, which the
    /// server and every installation hold once, instead of a second movement that one ledger refuses and another
    /// keeps.
    static func onceOnlyRecordID(_ reason: StockMovementReason, of parent: String) -> String {
        derivedRecordID("northwind-movement:\(reason.rawValue):\(parent)")
    }

    /// A record ID made from a name: the same wherever and however often it is made.
    static func derivedRecordID(_ name: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        // A name-based UUID (version 5 bits, RFC 4122 variant), as every other record ID is a UUID.
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString.lowercased()
    }
}
