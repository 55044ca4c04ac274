import Foundation
import GRDB
import GRDBSQLite
import NorthwindLoading
import Testing

@testable import Northwind
@testable import NorthwindStore
@testable import NorthwindTestSupport

@Suite("Hardening: the store")
struct StoreHardeningTests {
    @Test func aNewStoreAndItsJournalAreReadableByTheirOwnerOnly() async throws {
        // Given a store created by Northwind, under the usual umask (022), written to
        let store = try TemporaryStore(seed: .init(scale: 1))
        _ = try await store.backoffice.stock.receive(productID: 1, quantity: 1)
        // When its files' modes are read
        let modes = try [store.path, store.path + "-wal", store.path + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }.map {
            (try FileManager.default.attributesOfItem(atPath: $0)[.posixPermissions] as? Int ?? 0) & 0o777
        }
        // Then none is readable by others: the store holds password hashes and session tokens
        #expect(!modes.isEmpty)
        #expect(modes.allSatisfy { $0 == 0o600 }, "\(modes.map { String($0, radix: 8) })")
    }

    @Test func everyCommitReachesTheDiskBeforeItIsReported() async throws {
        // Given a store opened by Northwind (GRDB's pool would leave it at NORMAL, where a power cut undoes commits)
        let store = try TemporaryStore()
        // When the writer's durability is read
        let level = try await store.backoffice.store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        // Then it is FULL (2): the write-ahead log is synced at every commit
        #expect(level == 2)
    }

    @Test func integrityCheckPassesWithoutTheAppsFunctions() throws {
        // Given a store with orders, written by the app
        let store = try TemporaryStore(seed: .init(scale: 1, seed: 3))
        // When a tool without the app's SQL functions checks it
        let bare = try BareStore(path: store.path)
        // Then both checks pass
        #expect(try bare.run("PRAGMA integrity_check").get() == ["ok"])
        #expect(try bare.run("PRAGMA quick_check").get() == ["ok"])
    }

    @Test func aWriterWithoutTheLineAmountFunctionIsStillRefused() throws {
        // Given a store with an order
        let store = try TemporaryStore(seed: .init(scale: 1, seed: 3))
        let bare = try BareStore(path: store.path)
        // When a tool without the app's functions changes a line's amount
        let result = bare.run("UPDATE order_lines SET extendedPriceCents = extendedPriceCents + 1 WHERE id = 1")
        // Then the trigger that holds the one definition refuses it
        guard case let .failure(error) = result else {
            Issue.record("the write went through")
            return
        }
        #expect(error.description.contains("sqlserver_line_cents"))
    }

    @Test func aWrongLineAmountIsRefusedByTheApp() async throws {
        // Given a store with an order, opened by the app
        let store = try TemporaryStore(seed: .init(scale: 1, seed: 3))
        // When a line's stored amount is set to something the definition does not give
        let error = #expect(throws: DatabaseError.self) {
            try store.store.pool.write { db in
                try db.execute(sql: "UPDATE order_lines SET extendedPriceCents = extendedPriceCents + 1 WHERE id = 1")
            }
        }
        // Then the store refuses it and says why
        #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER)
        #expect(error?.message?.contains("line amount") == true)
    }

    /// A v5 store (line amounts under a CHECK that calls an app function) keeps its lines and its summaries' triggers.
    @Test func aV5StoreMovesItsCheckIntoTriggers() throws {
        // Given a store at v5 with an order of one line
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in ReportFunctions.register(db) }
            let old = try DatabaseQueue(path: path, configuration: configuration)
            try Schema.migrator.migrate(old, upTo: "v5: report summaries")
            try old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO customers (id, code, companyName) VALUES (1, 'VINET', 'Vins et alcools Chevalier');
                        INSERT INTO products (id, name, unitPriceCents) VALUES (1, 'Chai', 1800), (2, 'Ikura', 3100);
                        INSERT INTO orders (id, number, customerID, orderDate, status) VALUES (1, '10248', 1, '1996-07-04', 'new');
                        INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)
                          VALUES (1, 1, 1800, 12, 0, 21600);
                        """
                )
            }
            #expect(throws: CLIError.self) { try BareStore(path: path).run("PRAGMA integrity_check").get() }
        }
        // When the app opens it and a second line is added
        let store = try Store(StoreConfiguration(path: path))
        try store.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO order_lines (orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)
                    VALUES (1, 2, 3100, 10, 0.25, 23250)
                    """
            )
        }
        // Then the file checks clean without the app, the old line is kept, and the summary counts both lines
        #expect(try BareStore(path: path).run("PRAGMA integrity_check").get() == ["ok"])
        try store.pool.read { (db: Database) throws in
            #expect(try Int.fetchAll(db, sql: "SELECT extendedPriceCents FROM order_lines ORDER BY id") == [21600, 23250])
            #expect(
                try Row.fetchOne(db, sql: "SELECT lineCount, amountCents FROM order_totals WHERE orderID = 1")
                    == ["lineCount": 2, "amountCents": 44850]
            )
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM change_log WHERE tableName = 'order_lines'") == 2)
        }
    }
}

@Suite("Hardening: values")
struct ValueHardeningTests {
    @Test(arguments: [
        ("18", 1800), ("18.5", 1850), ("18.50", 1850), (".5", 50), ("-3.00", -300), ("18.500", 1850), (" 7.25 ", 725),
    ])
    func moneyParsesPlainAmounts(text: String, cents: Int) {
        #expect(Money(parsing: text) == Money(cents: cents))
    }

    @Test(arguments: [
        "", "-", ".", "18.", "18.505", "1e3", "1,000.00", "abc", "0x10", "+5", "1 000",
        "92233720368547758.08", "99999999999999999999999999.00",
    ])
    func moneyRefusesAnythingElse(text: String) {
        #expect(Money(parsing: text) == nil)
    }

    @Test func aDecimalTooLargeForCentsIsNoAmount() {
        #expect(Money(Decimal(string: "1e30")!) == nil)
        #expect(Money(Decimal(string: "12.345")!) == Money(cents: 1235))
    }

    @Test func sumsSaturateInsteadOfTrapping() {
        #expect(Money(cents: .max) + Money(cents: 1) == Money(cents: .max))
        #expect(Money(cents: .min) + Money(cents: -1) == Money(cents: .min))
    }

    @Test(arguments: [
        (Int.max, 1, 0.0), (Int.max, Int.max, 0.5), (1_000_000_000_000, 1_000_000, 0.25), (999_999_999, 1_000_000, 0.0),
        (1, Int.max, 2.0), (Int.max / 1_000_000, 1_000_000, Double.nan),
    ])
    func aLineTotalNeverTraps(priceCents: Int, quantity: Int, discount: Double) {
        let line = OrderLine(orderID: 1, productID: 1, unitPrice: Money(cents: priceCents), quantity: quantity, discount: discount)
        #expect(line.total.cents >= 0)
    }

    @Test func aLineTotalAtTheLimitsIsExact() {
        // 9,999,999.99 × 1,000,000 less 25%: 749,999,999,250,000 cents; the old formula's 10⁶ scaling overflowed here.
        let line = OrderLine(orderID: 1, productID: 1, unitPrice: Limits.money.upperBound, quantity: 1_000_000, discount: 0.25)
        #expect(line.total == Money(cents: 749_999_999_250_000))
    }

    @Test func theLineAmountFunctionRefusesWhatItCannotHold() {
        #expect(ReportFunctions.extendedPriceCents(unitPriceCents: 9_000_000_000_000_000_000, quantity: 2, discount: 0) == nil)
        #expect(ReportFunctions.extendedPriceCents(unitPriceCents: 1800, quantity: 1, discount: -0.5) == nil)
        #expect(ReportFunctions.extendedPriceCents(unitPriceCents: 1800, quantity: 12, discount: 0) == 21600)
    }

    @Test func lowStockOfHugeStoredValuesDoesNotTrap() {
        let product = Product(name: "Poison", unitsInStock: .max, unitsOnOrder: .max, reorderLevel: .max)
        #expect(product.isLowStock)
        let plenty = Product(name: "Plenty", unitsInStock: .max, unitsOnOrder: .max, reorderLevel: 10)
        #expect(!plenty.isLowStock)
    }
}
