import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import NorthwindTestSupport

/// What the migrations add up to, written down where a reader finds it, and the record types that read rows by
/// position instead of by name (faster on the hottest paths) held to the columns those positions really hold.
@Suite("The schema in force")
struct SchemaInForceTests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/schema.sql")

    /// The schema as `sqlite3 store .schema` prints it: every statement in `sqlite_master`, in the order made.
    static func schema(of store: Store) throws -> String {
        let statements = try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        }
        return "-- The schema a new store has after every migration (docs/architecture.md). Generated: do not edit;\n"
            + "-- NORTHWIND_SCHEMA_UPDATE=1 swift test --filter SchemaInForceTests rewrites it.\n"
            + statements.map { $0 + ";\n" }.joined()
    }

    @Test func docsSchemaSqlIsTheSchemaOfANewStore() throws {
        // Given a new store, migrated to the newest version
        let store = try TemporaryStore()

        // When its schema is read
        let schema = try Self.schema(of: store.store)

        // Then docs/schema.sql says exactly that
        if ProcessInfo.processInfo.environment["NORTHWIND_SCHEMA_UPDATE"] == "1" {
            try schema.write(to: Self.document, atomically: true, encoding: .utf8)
        }
        let written = try String(contentsOf: Self.document, encoding: .utf8)
        #expect(written == schema, "docs/schema.sql is stale: NORTHWIND_SCHEMA_UPDATE=1 swift test --filter SchemaInForceTests rewrites it")
    }

    /// Each decoder that reads by position, checked against the encoder, which writes by name: a column added
    /// anywhere but last, or a position miscounted, makes some row's value land under another column's name.
    @Test(arguments: [
        Product.databaseTableName, Customer.databaseTableName, Employee.databaseTableName, Shipper.databaseTableName,
        Order.databaseTableName, OrderLine.databaseTableName,
    ])
    func aPositionalDecoderReadsEachColumnUnderItsOwnName(table: String) throws {
        // Given a store with the demo data, where the columns of a table hold different values row after row
        let store = try TemporaryStore(seed: .init(scale: 1))

        // When every row is decoded by position and encoded again by column name
        let mismatches = try store.store.pool.read { db in
            var found: [String] = []
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table)")
            #expect(rows.count > 1, "the demo data has no \(table)")
            for row in rows {
                let encoded: [String: DatabaseValue] = try Self.decodedAndEncoded(table, row)
                for (column, value) in encoded where row[column] as DatabaseValue != value {
                    found.append("\(table).\(column) of row \(row["id"] as DatabaseValue): read \(value), stored \(row[column] as DatabaseValue)")
                }
            }
            return found
        }

        // Then every value comes back under the column it was read from
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10).joined(separator: "\n"))")
    }

    static func decodedAndEncoded(_ table: String, _ row: Row) throws -> [String: DatabaseValue] {
        switch table {
        case Product.databaseTableName: try Product(row: row).databaseDictionary
        case Customer.databaseTableName: try Customer(row: row).databaseDictionary
        case Employee.databaseTableName: try Employee(row: row).databaseDictionary
        case Shipper.databaseTableName: try Shipper(row: row).databaseDictionary
        case Order.databaseTableName: try Order(row: row).databaseDictionary
        case OrderLine.databaseTableName: try OrderLine(row: row).databaseDictionary
        default: throw NorthwindError.invalidState("No positional decoder for \(table)")
        }
    }
}
