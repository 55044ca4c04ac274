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

    /// What `orders.execute` writes since issue 40: a shipment with a line per order line, each line's movement at
    /// the product's average cost, the order shipped, and the shipment's invoice (the next number of the site's
    /// series, a line per shipped line and one for freight, tax per line at the product's or its category's rate,
    /// and a stored rendition of the size ours writes, 2.3 KB for three lines, as plain text).
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
            let today = LocalDate.today
            let sequence = try db.run("SELECT ifnull(max(sequence), 0) + 1 FROM shipments WHERE orderID = ?", orderID)[0][0] as? Int64 ?? 1
            try db.run(
                "INSERT INTO shipments (recordID, orderID, sequence, shippedDate, employeeID, createdAt) VALUES (?, ?, ?, ?, ?, ?)",
                newRecordID(),
                orderID,
                sequence,
                today.description,
                order[4],
                now
            )
            let shipmentID = db.lastInsertedRowID
            for line in lines {
                try db.run(
                    "INSERT INTO shipment_lines (recordID, shipmentID, orderLineID, quantity) VALUES (?, ?, ?, ?)",
                    newRecordID(),
                    shipmentID,
                    line[0],
                    line[5]
                )
                try db.run(
                    """
                    INSERT INTO stock_movements (recordID, productID, delta, reason, orderID, employeeID, note, createdAt, shipmentLineID,
                      unitCostCents)
                    VALUES (?1, ?2, ?3, 'shipped', ?4, ?5, NULL, ?6, ?7, (SELECT averageCostCents FROM stock_movements
                      WHERE productID = ?2 AND location IS NULL AND averageCostCents IS NOT NULL ORDER BY id DESC LIMIT 1))
                    """,
                    newRecordID(),
                    line[3],
                    -(line[5] as? Int64 ?? 0),
                    orderID,
                    order[4],
                    now,
                    db.lastInsertedRowID
                )
            }
            try db.run(
                "UPDATE orders SET status = 'shipped', shippedDate = ?, version = version + 1 WHERE id = ?",
                today.description,
                orderID
            )
            try invoice(db, order: order, shipmentID: shipmentID, date: today, now: now)
            try readBack(db, number: number)
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    private static func invoice(_ db: BareSQLite, order: [Any?], shipmentID: Int64, date: LocalDate, now: String) throws {
        let site = try db.run("SELECT value FROM store_metadata WHERE key = 'siteCode'").first?[0] as? String ?? "000000"
        let counter =
            try db.run("SELECT ifnull(max(counter), 0) + 1 FROM invoices WHERE site = ? AND kind = 'invoice' AND year = ?", site, date.year)[0][0]
            as? Int64 ?? 1
        var lines = try db.run(
            """
            SELECT s.id, l.productID, p.name, s.quantity, l.unitPriceCents, l.extendedPriceCents,
              coalesce(p.taxBasisPoints, c.taxBasisPoints, 2300)
            FROM shipment_lines s JOIN order_lines l ON l.id = s.orderLineID JOIN products p ON p.id = l.productID
            LEFT JOIN categories c ON c.id = p.categoryID
            WHERE s.shipmentID = ? ORDER BY l.id
            """,
            shipmentID
        )
        let freight = order[10] as? Int64 ?? 0
        if freight > 0 { lines.append([nil, nil, "Freight", Int64(1), freight, freight, Int64(2300)]) }
        let taxes = lines.map { ($0[5] as? Int64 ?? 0) * ($0[6] as? Int64 ?? 0) / 10_000 }
        let net = lines.reduce(0) { $0 + ($1[5] as? Int64 ?? 0) }
        let tax = taxes.reduce(0, +)
        let number = "\(site)/\(date.year)/\(counter)"
        let text = lines.map { "\($0[2] ?? "")\t\($0[3] ?? "")\t\($0[4] ?? "")\t\($0[5] ?? "")" }.joined(separator: "\n")
        let rendition = text + String(repeating: " ", count: max(0, 2_300 - text.utf8.count))
        try db.run(
            """
            INSERT INTO invoices (recordID, kind, site, year, counter, number, orderID, shipmentID, issuedDate, seller, buyer,
              rounding, netCents, taxCents, grossCents, rendition, createdAt)
            VALUES (?, 'invoice', ?, ?, ?, ?, ?, ?, ?, '{"name":"Northwind Traders"}', ?, 'line', ?, ?, ?, ?, ?)
            """,
            newRecordID(),
            site,
            date.year,
            counter,
            number,
            order[0],
            shipmentID,
            date.description,
            "{\"customerID\":\(order[3] ?? 0)}",
            net,
            tax,
            net + tax,
            rendition,
            now
        )
        let invoiceID = db.lastInsertedRowID
        for (index, line) in lines.enumerated() {
            try db.run(
                """
                INSERT INTO invoice_lines (recordID, invoiceID, position, shipmentLineID, productID, description, quantity,
                  unitPriceCents, discountBasisPoints, netCents, taxBasisPoints, taxName, taxCents)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 'Standard', ?)
                """,
                newRecordID(),
                invoiceID,
                index + 1,
                line[0],
                line[1],
                line[2],
                line[3],
                line[4],
                line[5],
                line[6],
                taxes[index]
            )
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
