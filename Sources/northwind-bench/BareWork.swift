import Foundation
import GRDBSQLite
import Northwind
import NorthwindLoading
import NorthwindStore

/// The same reads and writes the domain layer performs for an order, through the bare C API.
enum BareOrders {
    static let linesSQL = """
        SELECT order_lines.*, products.name AS productName, products.unitsInStock AS inStock
        FROM order_lines JOIN products ON products.id = order_lines.productID
        WHERE order_lines.orderID = ? ORDER BY order_lines.id
        """

    static func create(_ db: BareSQLite, customerCode: String, products: [Int64]) throws -> String {
        try db.exec("BEGIN IMMEDIATE")
        do {
            guard let customer = try db.run("SELECT * FROM customers WHERE code = ?", customerCode).first, let customerID = customer[0] as? Int64
            else {
                throw BenchError("no customer")
            }
            _ = try db.run("SELECT * FROM employees WHERE id = ?", 1)
            _ = try db.run("SELECT * FROM shippers WHERE id = ?", 1)
            let site = try db.run("SELECT value FROM store_metadata WHERE key = 'siteCode'")[0][0] as? String ?? ""
            let last = try db.run("SELECT CAST(value AS INTEGER) FROM store_metadata WHERE key = 'orderSequence'")[0][0] as? Int64 ?? 0
            try db.run("UPDATE store_metadata SET value = ? WHERE key = 'orderSequence'", String(last + 1))
            let number = "\(site)-\(last + 1)"
            try db.run(
                """
                INSERT INTO orders (recordID, number, customerID, employeeID, orderDate, requiredDate, shippedDate, status,
                  shipVia, freightCents, shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry, version)
                VALUES (?, ?, ?, ?, ?, NULL, NULL, 'new', ?, ?, ?, ?, ?, ?, ?, ?, 1)
                """,
                newRecordID(),
                number,
                customerID,
                1,
                LocalDate.today.description,
                1,
                1234,
                customer[3],
                customer[6],
                customer[7],
                customer[8],
                customer[9],
                customer[10]
            )
            let orderID = db.lastInsertedRowID
            for product in products {
                guard let row = try db.run("SELECT * FROM products WHERE id = ?", product).first else { throw BenchError("no product") }
                let price = row[7] as? Int64 ?? 0
                try db.run(
                    "INSERT INTO order_lines (recordID, orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    newRecordID(),
                    orderID,
                    product,
                    price,
                    2,
                    0.05,
                    ReportFunctions.extendedPriceCents(unitPriceCents: price, quantity: 2, discount: 0.05)
                )
            }
            try readBack(db, number: number)
            try db.exec("COMMIT")
            return number
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    static func execute(_ db: BareSQLite, number: String) throws {
        try db.exec("BEGIN IMMEDIATE")
        do {
            guard let order = try db.run("SELECT * FROM orders WHERE number = ?", number).first, let orderID = order[0] as? Int64 else {
                throw BenchError("no order")
            }
            let lines = try db.run(linesSQL, orderID)
            // inStock is the last column, after order_lines.* (whose width the schema may change).
            for line in lines where (line[5] as? Int64 ?? 0) > (line.last as? Int64 ?? 0) { throw BenchError("short") }
            let now = Date().formatted(.iso8601)
            for line in lines {
                try db.run(
                    "INSERT INTO stock_movements (recordID, productID, delta, reason, orderID, employeeID, note, createdAt) VALUES (?, ?, ?, 'shipped', ?, ?, NULL, ?)",
                    newRecordID(),
                    line[3],
                    -(line[5] as? Int64 ?? 0),
                    orderID,
                    order[4],
                    now
                )
            }
            try db.run(
                "UPDATE orders SET status = 'shipped', shippedDate = ?, version = version + 1 WHERE id = ?",
                LocalDate.today.description,
                orderID
            )
            try readBack(db, number: number)
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    /// What `OrderDetail` reads: the order, its customer, employee, shipper and lines.
    static func readBack(_ db: BareSQLite, number: String) throws {
        guard let order = try db.run("SELECT * FROM orders WHERE number = ?", number).first else { throw BenchError("no order") }
        try db.run("SELECT * FROM customers WHERE id = ?", order[3])
        try db.run(linesSQL, order[0])
        try db.run("SELECT * FROM employees WHERE id = ?", order[4])
        try db.run("SELECT * FROM shippers WHERE id = ?", order[9])
    }
}

/// Inserts rows of the demo data's shapes and counts through the C API, as the baseline for the seeding rate. It
/// loads the way the demo data does (multi-row inserts, change-log triggers and secondary indexes lifted and
/// restored in the same transaction), so the comparison measures our layers, not a different method.
enum BareSeeder {
    /// A multi-row INSERT through the C API.
    struct Bulk {
        let db: BareSQLite
        let prefix: String
        let columns: Int
        var rows: [[Any?]] = []

        mutating func append(_ values: Any?...) throws {
            rows.append(values)
            if rows.count == 256 { try flush() }
        }

        mutating func flush() throws {
            guard !rows.isEmpty else { return }
            let tuple = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
            let statement = try db.statement(prefix + " VALUES " + Array(repeating: tuple, count: rows.count).joined(separator: ","))
            db.bind(statement, rows.flatMap { $0 })
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("bulk insert failed") }
            rows.removeAll(keepingCapacity: true)
        }
    }

    /// Returns the seconds taken and the rows inserted.
    static func seed(path: String, scale: Int) throws -> (seconds: Double, rows: Int) {
        let db = try BareSQLite(path: path)
        let start = DispatchTime.now().uptimeNanoseconds
        try db.exec("PRAGMA cache_size = -\(64_000 + scale * 1_500)")
        try db.exec("PRAGMA temp_store = MEMORY")
        try db.exec("BEGIN IMMEDIATE")
        try db.exec("PRAGMA defer_foreign_keys = ON")
        let indexes = try db.run("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name NOT LIKE 'products_fts%'")
        let triggers = try db.run("SELECT name, sql, tbl_name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_log_insert'")
        // The margin and fill summaries (v29) read an order's lines by an index lifted here: bare leaves them out,
        // where ours computes them in one pass after the load.
        let summaries = try db.run(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (sql LIKE '%product_year_margin%' OR sql LIKE '%\\_day\\_fill%' ESCAPE '\\')"
        )
        for index in indexes { try db.exec("DROP INDEX \(index[0] as? String ?? "")") }
        for trigger in triggers + summaries { try db.exec("DROP TRIGGER \(trigger[0] as? String ?? "")") }

        var ids = AscendingIDs()
        try seedCatalogue(db, scale: scale, ids: &ids)
        try seedPeople(db, scale: scale, ids: &ids)
        try seedShipping(db, scale: scale, ids: &ids)
        let lines = try seedOrders(db, scale: scale, ids: &ids)

        for index in indexes { try db.exec(index[1] as? String ?? "") }
        for trigger in summaries { try db.exec(trigger[1] as? String ?? "") }
        for trigger in triggers {
            let table = trigger[2] as? String ?? ""
            try db.exec("INSERT INTO change_log (tableName, recordID, operation) SELECT '\(table)', recordID, 'insert' FROM \(table) ORDER BY id")
            try db.exec(trigger[1] as? String ?? "")
        }
        try db.exec("COMMIT")
        let rows = scale * (8 + 29 + 77 + 77 + 91 + 9 + 3 + 53 + 53 + 830) + 4 + lines
        return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, rows)
    }

    private static func seedCatalogue(_ db: BareSQLite, scale: Int, ids: inout AscendingIDs) throws {
        var categories = Bulk(db: db, prefix: "INSERT INTO categories (id, recordID, name, description)", columns: 4)
        for id in 1...(8 * scale) { try categories.append(id, ids.next(), "Category \(id)", "Things") }
        try categories.flush()
        var suppliers = Bulk(
            db: db,
            prefix: "INSERT INTO suppliers (id, recordID, companyName, contactName, contactTitle, address, city, postalCode, country, phone)",
            columns: 10
        )
        for id in 1...(29 * scale) {
            try suppliers.append(id, ids.next(), "Supplier \(id)", "Ann Smith", "Owner", "1 Main Street", "Lyon", "69001", "France", "(555) 555-5555")
        }
        try suppliers.flush()
        var products = Bulk(
            db: db,
            prefix:
                "INSERT INTO products (id, recordID, name, supplierID, categoryID, quantityPerUnit, unitPriceCents, unitsOnOrder, reorderLevel, discontinued)",
            columns: 10
        )
        var movements = Bulk(db: db, prefix: "INSERT INTO stock_movements (recordID, productID, delta, reason, createdAt)", columns: 5)
        for id in 1...(77 * scale) {
            try products.append(id, ids.next(), "Product \(id)", 1 + id % (29 * scale), 1 + id % (8 * scale), "12 jars", 1850, 0, 10, 0)
            try movements.append(ids.next(), id, 50, "initial", "2026-06-30T08:00:00.000Z")
        }
        try products.flush()
        try movements.flush()
    }

    private static func seedPeople(_ db: BareSQLite, scale: Int, ids: inout AscendingIDs) throws {
        var customers = Bulk(
            db: db,
            prefix:
                "INSERT INTO customers (id, recordID, code, companyName, contactName, contactTitle, address, city, postalCode, country, phone, fax)",
            columns: 12
        )
        for id in 1...(91 * scale) {
            try customers.append(
                id,
                ids.next(),
                "C\(id)",
                "Customer \(id)",
                "Ann Smith",
                "Owner",
                "1 Main Street",
                "Lyon",
                "69001",
                "France",
                "(555) 555-5555",
                nil
            )
        }
        try customers.flush()
        var employees = Bulk(
            db: db,
            prefix:
                "INSERT INTO employees (id, recordID, lastName, firstName, title, titleOfCourtesy, birthDate, hireDate, address, city, postalCode, country, homePhone, extension, notes, reportsTo)",
            columns: 16
        )
        for id in 1...(9 * scale) {
            try employees.append(
                id,
                ids.next(),
                "Smith",
                "Ann",
                "Sales Representative",
                "Ms.",
                "1980-01-01",
                "2020-01-01",
                "1 Main Street",
                "Lyon",
                "69001",
                "France",
                "(555) 555-5555",
                "123",
                "Notes",
                nil
            )
        }
        try employees.flush()
    }

    private static func seedShipping(_ db: BareSQLite, scale: Int, ids: inout AscendingIDs) throws {
        var shippers = Bulk(db: db, prefix: "INSERT INTO shippers (id, recordID, companyName, phone)", columns: 4)
        for id in 1...(3 * scale) { try shippers.append(id, ids.next(), "Shipper \(id)", "(555) 555-5555") }
        try shippers.flush()
        for id in 1...4 { try db.run("INSERT INTO regions (id, recordID, description) VALUES (?, ?, ?)", id, ids.next(), "Region \(id)") }
        var territories = Bulk(db: db, prefix: "INSERT INTO territories (id, recordID, code, description, regionID)", columns: 5)
        var assignments = Bulk(db: db, prefix: "INSERT INTO employee_territories (recordID, employeeID, territoryID)", columns: 3)
        for id in 1...(53 * scale) {
            try territories.append(id, ids.next(), "T\(id)", "Territory", 1 + id % 4)
            try assignments.append(ids.next(), 1 + id % (9 * scale), id)
        }
        try territories.flush()
        try assignments.flush()
    }

    /// Returns the number of order lines.
    private static func seedOrders(_ db: BareSQLite, scale: Int, ids: inout AscendingIDs) throws -> Int {
        var orders = Bulk(
            db: db,
            prefix:
                "INSERT INTO orders (id, recordID, number, employeeID, orderDate, requiredDate, shippedDate, status, shipVia, freightCents, customerID, shipName, shipAddress, shipCity, shipPostalCode, shipCountry)",
            columns: 16
        )
        var orderLines = Bulk(
            db: db,
            prefix: "INSERT INTO order_lines (recordID, orderID, productID, unitPriceCents, quantity, discount, extendedPriceCents)",
            columns: 7
        )
        var random = SeededRandom(seed: 42)
        var lines = 0
        let extendedPrice = ReportFunctions.extendedPriceCents(unitPriceCents: 1850, quantity: 12, discount: 0.05)
        for id in 1...(830 * scale) {
            try orders.append(
                id,
                ids.next(),
                "BARE-\(id)",
                1 + id % (9 * scale),
                "2025-01-01",
                "2025-01-29",
                "2025-01-05",
                "shipped",
                1 + id % (3 * scale),
                3238,
                1 + id % (91 * scale),
                "Customer",
                "1 Main Street",
                "Lyon",
                "69001",
                "France"
            )
            var used: [Int] = []
            let lineCount = 1 + Int(random.next() % 4) + (random.next() % 5 == 0 ? 1 : 0)
            lines += lineCount
            while used.count < lineCount {
                let product = 1 + Int(random.next() % UInt64(77 * scale))
                if !used.contains(product) { used.append(product) }
            }
            for product in used { try orderLines.append(ids.next(), id, product, 1850, 12, 0.05, extendedPrice) }
            if id % 50 == 0 {
                try orders.flush()
                try orderLines.flush()
            }
        }
        try orders.flush()
        try orderLines.flush()
        return lines
    }

}

/// Ascending record ids, as the demo data's are, so both sides fill the unique index the same way.
struct AscendingIDs {
    private var counter = 0
    mutating func next() -> String {
        counter += 1
        let hex = String(counter, radix: 16)
        return "00000000-0000-8000-9000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }
}
