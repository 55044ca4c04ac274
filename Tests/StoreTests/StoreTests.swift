import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Store")
struct StoreTests {
    @Test func migratesAnEmptyFileToTheWholeClassicSchema() throws {
        let store = try TemporaryStore()
        let tables = try store.store.pool.read { db in
            try String.fetchSet(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'products_fts%'"
            )
        }
        #expect(
            tables == [
                "categories", "suppliers", "products", "customers", "customer_demographics", "customer_demographic_links",
                "employees", "shippers", "orders", "order_lines", "regions", "territories", "employee_territories",
                "stock_movements", "change_log", "store_metadata", "grdb_migrations", "credentials", "access_tokens",
                "order_totals", "product_year_sales", "customer_year_sales", "employee_year_sales", "sync_state", "sync_records", "sync_waiting",
                "sync_conflicts", "stock_levels",
                "stock_transfers", "sync_conflict_assets", "sync_refetch", "settings", "user_settings", "user_setting_sync", "user_setting_tokens",
                "quotes", "quote_lines", "quote_versions", "quote_sessions", "sync_refused", "sync_held", "sync_resend",
                "purchase_orders", "purchase_order_lines", "shipments", "shipment_lines", "returns", "return_lines", "invoices", "invoice_lines",
                "record_offers", "record_offer_answers", "sync_removed", "sync_snapshot", "product_year_margin", "order_day_fill",
                "shipped_day_fill", "sync_zone_sums", "sync_set_aside",
            ]
        )
        let (journal, foreignKeys, violations) = try store.store.pool.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Bool.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count
            )
        }
        #expect(journal == "wal")
        #expect(foreignKeys == true)
        #expect(violations == 0)
        // Reopening runs no migration twice.
        _ = try store.reopen()
    }

    @Test func everyForeignKeyHasAnIndex() throws {
        let store = try TemporaryStore()
        try store.store.pool.read { db in
            for table in Store.syncedTables {
                let indexedFirstColumns = Set(try db.indexes(on: table).compactMap(\.columns.first))
                for foreignKey in try db.foreignKeys(on: table) {
                    let column = try #require(foreignKey.originColumns.first)
                    #expect(indexedFirstColumns.contains(column), "\(table).\(column) has no index")
                }
            }
        }
    }

    @Test(arguments: [
        "INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount) VALUES (1, 1, 100, 0, 0)",
        "INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount) VALUES (1, 1, 100, 1, 1.5)",
        "INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount) VALUES (1, 1, -1, 1, 0)",
        "UPDATE products SET unitsInStock = -1",
        "UPDATE products SET unitPriceCents = -5",
        "INSERT INTO products (name, categoryID) VALUES ('Ghost', 999)",
    ])
    func constraintsGuardTheData(sql: String) async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        _ = try await store.backoffice.orders.create(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 1)])
        )
        await #expect(throws: DatabaseError.self) { try await store.store.pool.write { db in try db.execute(sql: sql) } }
    }

    @Test func everyWriteIsInTheChangeLogWithItsRecordID() async throws {
        let store = try TemporaryStore()
        let b = store.backoffice
        let created = try await b.records.create(Category(name: "Produce"))
        var edited = created
        edited.description = "Fresh"
        _ = try await b.records.update(edited)
        try await b.records.delete(Category.self, id: try #require(created.id))
        let log = try await store.store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT tableName, recordID, operation FROM change_log ORDER BY seq")
                .map { [$0[0] as String, $0[1] as String, $0[2] as String] }
        }
        #expect(
            log == [
                ["categories", created.recordID, "insert"], ["categories", created.recordID, "update"], ["categories", created.recordID, "delete"],
            ]
        )
        // A raw SQL insert gets a record id too, and the id never changes.
        try await store.store.pool.write { db in
            try db.execute(sql: "INSERT INTO shippers (companyName) VALUES ('Raw')")
            let id = try #require(try String.fetchOne(db, sql: "SELECT recordID FROM shippers WHERE companyName = 'Raw'"))
            #expect(id.count == 36)
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE shippers SET recordID = 'x'") }
        }
    }

    @Test func storeLocationFollowsFlagThenEnvironmentThenXDG() {
        #expect(StoreConfiguration.resolvePath(explicit: "/a.sqlite", environment: ["NORTHWIND_STORE": "/b.sqlite"]) == "/a.sqlite")
        #expect(StoreConfiguration.resolvePath(explicit: nil, environment: ["NORTHWIND_STORE": "/b.sqlite", "XDG_DATA_HOME": "/x"]) == "/b.sqlite")
        #expect(
            StoreConfiguration.resolvePath(explicit: nil, environment: ["XDG_DATA_HOME": "/x", "HOME": "/home/ann"])
                == "/x/northwind/northwind.sqlite"
        )
        #expect(
            StoreConfiguration.resolvePath(explicit: nil, environment: ["HOME": "/home/ann"]) == "/home/ann/.local/share/northwind/northwind.sqlite"
        )
    }

    @Test func openingCreatesAndSeedsOnlyANewStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nested/first.sqlite").path
        let seeded = try Backoffice.open(StoreConfiguration(path: path))
        #expect(try await seeded.records.list(Category.self).total == 8)
        try await seeded.store.pool.write { db in
            _ = try db.execute(sql: "DELETE FROM shippers WHERE id NOT IN (SELECT shipVia FROM orders WHERE shipVia IS NOT NULL)")
        }
        // Opening an existing store never seeds it again.
        let reopened = try Backoffice.open(StoreConfiguration(path: path))
        #expect(try await reopened.records.list(Category.self).total == 8)
        let empty = try Backoffice.open(StoreConfiguration(path: directory.appendingPathComponent("empty.sqlite").path), seedIfCreated: false)
        #expect(try empty.store.isEmpty())
    }

    @Test func anUnopenableStoreGivesAClearError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let notADatabase = directory.appendingPathComponent("notes.txt")
        try Data("these are not the pages you are looking for, not at all, no".utf8).write(to: notADatabase)
        #expect {
            _ = try Store(StoreConfiguration(path: notADatabase.path))
        } throws: { error in
            guard case NorthwindError.storeUnavailable(let message) = error else { return false }
            return message.hasPrefix("Cannot open the store at \(notADatabase.path)")
        }
    }
}

@Suite("Values")
struct ValueTests {
    @Test func datesAreValidatedByTheCalendar() {
        #expect(LocalDate("2024-02-29")?.description == "2024-02-29")
        #expect(LocalDate("2023-02-29") == nil)
        #expect(LocalDate("1900-02-29") == nil)
        #expect(LocalDate("2000-02-29") != nil)
        #expect(LocalDate("2026-04-31") == nil)
        #expect(LocalDate("2026-13-01") == nil)
        #expect(LocalDate("1996-07-04 00:00:00")?.description == "1996-07-04")
        #expect(LocalDate("7/4/1996") == nil)
        #expect(LocalDate("2026-12-31")?.adding(days: 1).description == "2027-01-01")
    }

    @Test func moneyParsesAndPrintsExactly() {
        #expect(Money(parsing: "18.5")?.cents == 1850)
        #expect(Money(parsing: "263.50")?.description == "263.50")
        #expect(Money(parsing: "0.05")?.description == "0.05")
        #expect(Money(parsing: "1.005") == nil)
        #expect(Money(parsing: "abc") == nil)
        #expect(Money(cents: -5).description == "-0.05")
        // 3 × 263.50 less 15% is 671.925, which rounds half up to 671.93.
        #expect(OrderLine(orderID: 1, productID: 1, unitPrice: Money(cents: 26350), quantity: 3, discount: 0.15).total == Money(cents: 67193))
    }
}
