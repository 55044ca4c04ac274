import Foundation
import GRDB
import Northwind
import NorthwindStore

/// Generates Northwind-shaped demo data, deterministically: the same options give the same rows.
///
/// Scale 1 has the classic shape (8 categories, 77 products, 29 suppliers, 91 customers, 9 employees, 3 shippers,
/// about 830 orders with 2,155 lines over three years); scale N has N times the rows. It includes unshipped orders,
/// lines that stock cannot cover, products at or below their reorder level, and discontinued products.
/// Shipped history predates the audit trail, so only opening balances are recorded as stock movements.
public enum DemoData {
    public struct Options: Sendable {
        public var scale: Int
        public var seed: UInt64
        /// The last day of the three years of orders; orders from its last few weeks are still new.
        public var endDate: LocalDate
        /// Clear an existing store first instead of refusing.
        public var replace: Bool
        public init(scale: Int = 1, seed: UInt64 = 1, endDate: LocalDate = .today, replace: Bool = false) {
            self.scale = scale
            self.seed = seed
            self.endDate = endDate
            self.replace = replace
        }
    }

    /// Row counts per table, in the order they were written.
    public struct Summary: Sendable, Codable {
        public var counts: [TableCount]
        public var seconds: Double
    }
    public struct TableCount: Sendable, Codable {
        public var table: String
        public var rows: Int
    }

    @discardableResult
    public static func seed(into store: Store, options: Options) throws(NorthwindError) -> Summary {
        guard (1...10_000).contains(options.scale) else { throw .invalid("scale", "must be between 1 and 10000") }
        let start = Date()
        do {
            // About 1.2 MB of pages per unit of scale, kept until commit.
            let load = BulkLoadOptions(
                replace: options.replace,
                refusal: "The store at \(store.configuration.path) already holds data; use --replace to clear it first, or choose another --store.",
                liftIndexes: true,
                cacheKiB: 64_000 + options.scale * 1_500
            )
            let counts = try store.bulkLoad(load) { db in
                var generator = try Generator(db: db, options: options)
                return try generator.run()
            }
            return Summary(counts: counts, seconds: Date().timeIntervalSince(start))
        } catch {
            throw NorthwindError.translating(error)
        }
    }
}

/// Record ids for seeded rows: UUID-shaped, a per-installation prefix followed by a counter.
///
/// The prefix comes from the site code and the seed, so the same options give the same ids on one installation while
/// two installations never share one. Ascending ids also keep the unique index cheap to fill.
struct SeededRecordIDs {
    private let prefix: [UInt8]
    private var counter: UInt64 = 0
    private static let hex = Array("0123456789abcdef".utf8)

    init(siteCode: String, seed: UInt64) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in siteCode.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var random = SeededRandom(seed: hash ^ seed)
        let bits = random.next()
        // xxxxxxxx-xxxx-8xxx-9xxx-counter: version 8 (custom), RFC 4122 variant.
        var text = Array("00000000-0000-8000-9000-".utf8)
        let nibbles = (0..<16).map { Self.hex[Int((bits >> (60 - 4 * UInt64($0))) & 0xF)] }
        let slots = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 15, 16, 17, 20]
        for (slot, nibble) in zip(slots, nibbles) { text[slot] = nibble }
        prefix = text
    }

    mutating func next() -> String {
        counter += 1
        var bytes = prefix
        for shift in stride(from: 44, through: 0, by: -4) {
            bytes.append(Self.hex[Int((counter >> UInt64(shift)) & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Generates orders and lines, in batches of 100 orders, on its own thread.
private struct OrderProducer: Sendable {
    struct Batch: Sendable {
        var orders: [DatabaseValue] = []
        var orderRows = 0
        var lines: [DatabaseValue] = []
        var lineRows = 0
    }

    var random: SeededRandom
    var ids: SeededRecordIDs
    let numbers: [String]
    let dates: [String]
    let products: [Generator.ProductFacts]
    let customers: [[DatabaseValue]]
    let employeeCount: Int
    let shipperCount: Int
    let orderCount: Int
    let days: Int

    func run(into channel: BatchChannel<Batch>) {
        var producer = self
        producer.generate(into: channel)
    }

    private mutating func generate(into channel: BatchChannel<Batch>) {
        let newOrderDays = 25
        let orderable = products.indices.filter { !products[$0].discontinued }
        let statuses = ["new", "cancelled", "shipped"].map(\.databaseValue)
        let dateValues = dates.map(\.databaseValue)
        var chosen: [Int] = []
        var batch = Batch()
        for index in 0..<orderCount {
            let id = Int64(index + 1)
            // Orders grow over the three years, as the classic data does.
            let position = Double(index) / Double(orderCount)
            let dayIndex = min(days - 1, Int((position.squareRoot() * 0.5 + position * 0.5) * Double(days)))
            let isNew = dayIndex >= days - newOrderDays
            let cancelled = !isNew && random.chance(0.01)
            let status = isNew ? statuses[0] : (cancelled ? statuses[1] : statuses[2])
            let shipped = !isNew && !cancelled ? dateValues[min(days - newOrderDays, dayIndex + random.int(1...14))] : .null
            let freight = random.chance(0.7) ? random.int(2...9_000) : random.int(9_000...100_000)
            batch.orders.append(contentsOf: [
                id.databaseValue, ids.next().databaseValue, numbers[index].databaseValue,
                random.int(1...employeeCount).databaseValue, dateValues[dayIndex],
                dateValues[dayIndex + random.pick([14, 28, 28, 28, 42])], shipped, status,
                random.int(1...shipperCount).databaseValue, freight.databaseValue,
            ])
            batch.orders.append(contentsOf: customers[random.int(0...customers.count - 1)])
            batch.orderRows += 1
            let lines = lineCount()
            chosen.removeAll(keepingCapacity: true)
            while chosen.count < lines {
                let product = orderable[random.int(0...orderable.count - 1)]
                if !chosen.contains(product) { chosen.append(product) }
            }
            for product in chosen {
                var quantity = random.chance(0.8) ? random.int(1...30) : random.int(31...120)
                // Some open orders ask for more than the shelf holds, so staff meet shortages.
                if isNew && random.chance(0.15) { quantity = products[product].stock + random.int(5...25) }
                let discount = random.chance(0.65) ? 0 : random.pick([0.05, 0.1, 0.15, 0.2, 0.25])
                batch.lines.append(contentsOf: [
                    ids.next().databaseValue, id.databaseValue, Int64(product + 1).databaseValue,
                    products[product].price.databaseValue, quantity.databaseValue, discount.databaseValue,
                    ReportFunctions.extendedPriceCents(
                        unitPriceCents: Int64(products[product].price),
                        quantity: Int64(quantity),
                        discount: discount
                    ).databaseValue,
                ])
                batch.lineRows += 1
            }
            if batch.orderRows == 100 || index == orderCount - 1 {
                guard channel.put(batch) else { return }
                batch = Batch()
            }
        }
        channel.finish()
    }

    /// 1 to 5 lines, averaging about 2.6 as the classic data does.
    private mutating func lineCount() -> Int {
        switch random.int(1...100) {
        case ...21: return 1
        case ...52: return 2
        case ...77: return 3
        case ...91: return 4
        default: return 5
        }
    }
}

/// A bounded queue between one producer thread and one consumer.
final class BatchChannel<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []
    private var finished = false
    private var cancelled = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Waits for room; false once the consumer has given up.
    func put(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next item, or nil when the producer has finished and everything was taken.
    func take() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !finished { condition.wait() }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }
}

/// SplitMix64: small, fast and the same on every platform, unlike the system generator.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}

private struct Generator {
    let db: Database
    let options: Options
    var random: SeededRandom
    var ids: SeededRecordIDs
    typealias Options = DemoData.Options

    init(db: Database, options: Options) throws {
        self.db = db
        self.options = options
        random = SeededRandom(seed: options.seed)
        ids = SeededRecordIDs(siteCode: try StoreMetadata.siteCode(db), seed: options.seed)
    }

    var scale: Int { options.scale }

    mutating func run() throws -> [DemoData.TableCount] {
        let categories = try categories()
        let suppliers = try suppliers()
        let products = try products(categoryCount: categories, supplierCount: suppliers)
        let customers = try customers()
        let employees = try employees()
        let shippers = try shippers()
        let territories = try regionsAndTerritories(employeeCount: employees)
        let (orders, lines) = try orders(products: products, customers: customers, employeeCount: employees, shipperCount: shippers)
        return [
            .init(table: "categories", rows: categories), .init(table: "suppliers", rows: suppliers),
            .init(table: "products", rows: products.count), .init(table: "customers", rows: customers.count),
            .init(table: "employees", rows: employees), .init(table: "shippers", rows: shippers),
            .init(table: "regions", rows: Vocabulary.regions.count), .init(table: "territories", rows: territories),
            .init(table: "employee_territories", rows: territories),
            .init(table: "stock_movements", rows: products.filter { $0.stock > 0 }.count),
            .init(table: "orders", rows: orders), .init(table: "order_lines", rows: lines),
        ]
    }

    /// Adds " (set k)" to names of the k-th copy, so names stay unique at any scale.
    func copyName(_ base: String, _ copy: Int) -> String { copy == 0 ? base : "\(base) (set \(copy + 1))" }

    mutating func categories() throws -> Int {
        var statement = BulkInsert(db, into: "categories", columns: ["id", "recordID", "name", "description"])
        var id = 0
        for copy in 0..<scale {
            for (name, description) in Vocabulary.categories {
                id += 1
                try statement.append([id, ids.next(), copyName(name, copy), description])
            }
        }
        try statement.flush()
        return id
    }

    mutating func suppliers() throws -> Int {
        var statement = BulkInsert(
            db,
            into: "suppliers",
            columns: ["id", "recordID", "companyName", "contactName", "contactTitle", "address", "city", "postalCode", "country", "phone"]
        )
        let count = 29 * scale
        for id in 1...count {
            let place = random.pick(Vocabulary.places)
            let name = "\(random.pick(Vocabulary.surnames)) \(random.pick(Vocabulary.supplierKinds))"
            try statement.append([
                id, ids.next(), copyName(name, (id - 1) / 29), contact(), random.pick(Vocabulary.contactTitles),
                address(), place.city, postalCode(), place.country, phone(),
            ])
        }
        try statement.flush()
        return count
    }

    struct ProductFacts {
        var price: Int
        var stock: Int
        var discontinued: Bool
    }

    mutating func products(categoryCount: Int, supplierCount: Int) throws -> [ProductFacts] {
        var statement = BulkInsert(
            db,
            into: "products",
            columns: [
                "id", "recordID", "name", "supplierID", "categoryID", "quantityPerUnit", "unitPriceCents", "unitsOnOrder", "reorderLevel",
                "discontinued",
            ]
        )
        var movement = BulkInsert(db, into: "stock_movements", columns: ["recordID", "productID", "delta", "reason", "createdAt"])
        // The shelf as it stands when the demo is seeded: never dated after now, or a movement recorded before 08:00
        // UTC on the demo's last day would sort behind the opening balance.
        let openedAt = min(Timestamp(options.endDate, hour: 8), .now)
        var facts: [ProductFacts] = []
        facts.reserveCapacity(77 * scale)
        for index in 0..<(77 * scale) {
            let copy = index / 77
            let categoryIndex = index % Vocabulary.categories.count
            let names = Vocabulary.productNames[categoryIndex]
            let name = copyName(names[(index / Vocabulary.categories.count) % names.count], copy)
            let price = priceCents()
            let reorder = random.pick([0, 0, 5, 10, 15, 20, 25, 30])
            // About one product in eight sits at or below its reorder level.
            let low = reorder > 0 && random.chance(0.35)
            let stock = low ? random.int(0...reorder) : random.int(reorder + 1...reorder + 125)
            let onOrder = low && random.chance(0.5) ? 0 : (random.chance(0.15) ? random.pick([10, 20, 30, 40, 50, 60, 70, 80, 100]) : 0)
            let discontinued = random.chance(0.1)
            let id = index + 1
            try statement.append([
                id, ids.next(), name, random.int(1...supplierCount), copy * Vocabulary.categories.count + categoryIndex + 1,
                random.pick(Vocabulary.packagings), price, low ? 0 : onOrder, reorder, discontinued,
            ])
            if stock > 0 { try movement.append([ids.next(), id, stock, "initial", openedAt]) }
            facts.append(ProductFacts(price: price, stock: stock, discontinued: discontinued))
            // Products reach the table before their movements: see the note in `orders`.
            if id % 128 == 0 {
                try statement.flush()
                try movement.flush()
            }
        }
        try statement.flush()
        try movement.flush()
        return facts
    }

    var usedCodes = Set<String>()
    /// The next counter to try per five-letter base, so that finding a free code stays O(1) at any scale.
    var nextCounter: [String: Int] = [:]

    /// What an order copies from its customer: id and shipping address.
    struct CustomerFacts {
        var shipping: [DatabaseValue]
    }

    mutating func customers() throws -> [CustomerFacts] {
        var facts: [CustomerFacts] = []
        var statement = BulkInsert(
            db,
            into: "customers",
            columns: [
                "id", "recordID", "code", "companyName", "contactName", "contactTitle", "address", "city", "postalCode", "country", "phone", "fax",
            ]
        )
        let count = 91 * scale
        for id in 1...count {
            let place = random.pick(Vocabulary.places)
            let surname = random.pick(Vocabulary.surnames)
            let name = "\(surname) \(random.pick(Vocabulary.shopKinds))"
            let street = address()
            let postal = postalCode()
            try statement.append([
                id, ids.next(), customerCode(from: name), name, contact(), random.pick(Vocabulary.contactTitles), street,
                place.city, postal, place.country, phone(), random.chance(0.4) ? phone() : nil,
            ])
            facts.append(
                CustomerFacts(shipping: [
                    id.databaseValue, name.databaseValue, street.databaseValue,
                    place.city.databaseValue, postal.databaseValue, place.country.databaseValue,
                ])
            )
        }
        try statement.flush()
        return facts
    }

    /// Five letters from the name, as the classic codes are (VINET); a base-36 counter replaces the tail on collision.
    mutating func customerCode(from name: String) -> String {
        let letters = name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
            .uppercased().filter { $0.isASCII && $0.isLetter }
        let base = String(letters.prefix(5)).padding(toLength: 5, withPad: "X", startingAt: 0)
        var code = base
        var counter = nextCounter[base, default: 1]
        while !usedCodes.insert(code).inserted {
            let suffix = String(counter, radix: 36).uppercased()
            code = String(base.prefix(max(1, 5 - suffix.count))) + suffix
            counter += 1
        }
        nextCounter[base] = counter
        return code
    }

    mutating func employees() throws -> Int {
        var statement = BulkInsert(
            db,
            into: "employees",
            columns: [
                "id", "recordID", "lastName", "firstName", "title", "titleOfCourtesy", "birthDate", "hireDate", "address", "city", "postalCode",
                "country", "homePhone", "extension", "notes", "reportsTo",
            ]
        )
        let count = 9 * scale
        for id in 1...count {
            // Each team of nine: a vice president, a sales manager and seven representatives.
            let position = (id - 1) % 9
            let teamLead = id - position
            let title =
                position == 0
                ? "Vice President, Sales" : position == 4 ? "Sales Manager" : (position == 7 ? "Inside Sales Coordinator" : "Sales Representative")
            let reportsTo: Int? = position == 0 ? nil : (position > 4 ? teamLead + 4 : teamLead)
            let place = random.pick(Vocabulary.places)
            let first = random.pick(Vocabulary.firstNames)
            let birth = LocalDate(year: random.int(1950...1995), month: random.int(1...12), day: random.int(1...28))
            let hire = options.endDate.adding(days: -random.int(400...6000))
            try statement.append([
                id, ids.next(), random.pick(Vocabulary.surnames), first.name, title, first.courtesy, birth, hire, address(),
                place.city, postalCode(), place.country, phone(), String(random.int(100...9999)),
                "Joined the \(place.city) office.", reportsTo,
            ])
        }
        try statement.flush()
        return count
    }

    mutating func shippers() throws -> Int {
        var statement = BulkInsert(db, into: "shippers", columns: ["id", "recordID", "companyName", "phone"])
        var id = 0
        for copy in 0..<scale {
            for name in Vocabulary.shippers {
                id += 1
                try statement.append([id, ids.next(), copyName(name, copy), phone()])
            }
        }
        try statement.flush()
        return id
    }

    mutating func regionsAndTerritories(employeeCount: Int) throws -> Int {
        var regions = BulkInsert(db, into: "regions", columns: ["id", "recordID", "description"])
        for (index, region) in Vocabulary.regions.enumerated() {
            try regions.append([index + 1, ids.next(), region])
        }
        try regions.flush()
        var territory = BulkInsert(db, into: "territories", columns: ["id", "recordID", "code", "description", "regionID"])
        var assignment = BulkInsert(db, into: "employee_territories", columns: ["recordID", "employeeID", "territoryID"])
        let count = 53 * scale
        for id in 1...count {
            let place = random.pick(Vocabulary.places)
            try territory.append([
                id, ids.next(), String(format: "T%05d", id), copyName(place.city, (id - 1) / 53), random.int(1...Vocabulary.regions.count),
            ])
            try assignment.append([ids.next(), random.int(1...employeeCount), id])
        }
        try territory.flush()
        try assignment.flush()
        return count
    }

    /// Orders and their lines: most of the rows. Another thread generates them while this one inserts, since
    /// making the values costs about as much as SQLite's work and the machine has two cores.
    mutating func orders(products: [ProductFacts], customers: [CustomerFacts], employeeCount: Int, shipperCount: Int) throws -> (Int, Int) {
        let orderCount = 830 * scale
        let days = 365 * 3
        let firstDay = options.endDate.adding(days: -(days - 1))
        let producer = OrderProducer(
            random: random,
            ids: ids,
            numbers: try StoreMetadata.nextOrderNumbers(db, count: orderCount),
            // Day strings computed once: calendar arithmetic per order would dominate the seeding time.
            dates: (0..<(days + 60)).map { firstDay.adding(days: $0).description },
            products: products,
            customers: customers.map(\.shipping),
            employeeCount: employeeCount,
            shipperCount: shipperCount,
            orderCount: orderCount,
            days: days
        )
        let channel = BatchChannel<OrderProducer.Batch>(capacity: 16)
        let thread = Thread { producer.run(into: channel) }
        thread.start()
        let insertOrder = BulkInsert(
            db,
            into: "orders",
            columns: [
                "id", "recordID", "number", "employeeID", "orderDate", "requiredDate", "shippedDate", "status", "shipVia", "freightCents",
                "customerID", "shipName", "shipAddress", "shipCity", "shipPostalCode", "shipCountry",
            ]
        )
        let insertLine = BulkInsert(
            db,
            into: "order_lines",
            columns: ["recordID", "orderID", "productID", "unitPriceCents", "quantity", "discount", "extendedPriceCents"]
        )
        var lineCount = 0
        do {
            // Each batch's orders go in before its lines: a line whose order is still pending is a deferred
            // foreign-key violation, and while any is pending, SQLite searches the children of every parent row
            // inserted, which is quadratic with the indexes lifted.
            while let batch = channel.take() {
                try insertOrder.insert(batch.orders, rows: batch.orderRows)
                try insertLine.insert(batch.lines, rows: batch.lineRows)
                lineCount += batch.lineRows
            }
        } catch {
            channel.cancel()
            throw error
        }
        return (orderCount, lineCount)
    }

    mutating func priceCents() -> Int {
        let roll = random.int(1...100)
        let base = roll <= 60 ? random.int(2...25) : (roll <= 92 ? random.int(25...60) : random.int(60...280))
        return base * 100 + random.pick([0, 0, 25, 50, 75, 95])
    }

    mutating func contact() -> String { "\(random.pick(Vocabulary.firstNames).name) \(random.pick(Vocabulary.surnames))" }
    mutating func address() -> String { "\(random.int(1...250)) \(random.pick(Vocabulary.streets))" }
    mutating func postalCode() -> String { String(random.int(10_000...99_999)) }
    mutating func phone() -> String { "(\(random.int(100...999))) \(random.int(100...999))-\(random.int(1000...9999))" }
}
