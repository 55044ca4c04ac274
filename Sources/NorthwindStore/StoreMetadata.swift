import GRDB

/// Per-installation facts kept in `store_metadata`.
public enum StoreMetadata {
    /// Crockford's base-32 alphabet: no I, L, O or U, so a code read over the phone is unambiguous.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    static func prepare(_ db: Database) throws {
        let code = String((0..<6).map { _ in alphabet.randomElement() ?? "0" })
        try db.execute(sql: "INSERT OR IGNORE INTO store_metadata (key, value) VALUES ('siteCode', ?)", arguments: [code])
        try db.execute(sql: "INSERT OR IGNORE INTO store_metadata (key, value) VALUES ('orderSequence', '0')")
    }

    /// This installation's code: six random base-32 characters (about a billion possibilities), made when the store
    /// is created. It prefixes every order number made here.
    public static func siteCode(_ db: Database) throws -> String {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM store_metadata WHERE key = 'siteCode'")) ?? "000000"
    }

    /// Gives this installation another code (a store joining with the code its enrolment names, or the first run's
    /// choice), inside the caller's transaction.
    public static func setSiteCode(_ db: Database, _ code: String) throws {
        try db.execute(sql: "UPDATE store_metadata SET value = ? WHERE key = 'siteCode'", arguments: [code])
    }

    /// A fact kept under `key`, or nil.
    public static func value(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM store_metadata WHERE key = ?", arguments: [key])
    }

    /// Keeps `value` under `key`; nil forgets it.
    public static func setValue(_ db: Database, _ key: String, _ value: String?) throws {
        if let value {
            try db.execute(sql: "INSERT OR REPLACE INTO store_metadata (key, value) VALUES (?, ?)", arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM store_metadata WHERE key = ?", arguments: [key])
        }
    }

    /// The next order number, e.g. "7KQ2XM-1042".
    ///
    /// Two installations that take orders offline never produce the same number, because each number carries the
    /// installation's site code; the sequence after it is local. Call inside the write transaction that inserts
    /// the order, so that a rollback gives the number back.
    public static func nextOrderNumber(_ db: Database) throws -> String {
        // A number already taken (a restored store's sequence is behind what sync brings back; an import keeps its
        // order's number) is passed over.
        while true {
            let number = try nextOrderNumbers(db, count: 1)[0]
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM orders WHERE number = ?)", arguments: [number]) == false { return number }
        }
    }

    /// The next quote number, e.g. "7KQ2XM-Q12": like an order number, with a sequence of its own.
    public static func nextQuoteNumber(_ db: Database) throws -> String {
        let site = try siteCode(db)
        var last = try Int.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM store_metadata WHERE key = 'quoteSequence'")) ?? 0
        repeat {
            last += 1
        } while try Bool.fetchOne(
            db,
            sql: "SELECT EXISTS (SELECT 1 FROM quotes WHERE number = ?)",
            arguments: ["\(site)-Q\(last)"]
        ) == true
        try db.execute(sql: "INSERT OR REPLACE INTO store_metadata (key, value) VALUES ('quoteSequence', ?)", arguments: [String(last)])
        return "\(site)-Q\(last)"
    }

    /// Reserves `count` consecutive order numbers at once (used by seeding).
    public static func nextOrderNumbers(_ db: Database, count: Int) throws -> [String] {
        let site = try siteCode(db)
        let last = try Int.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM store_metadata WHERE key = 'orderSequence'")) ?? 0
        try db.cachedStatement(sql: "UPDATE store_metadata SET value = ? WHERE key = 'orderSequence'").execute(arguments: [String(last + count)])
        return (1...max(count, 1)).prefix(count).map { "\(site)-\(last + $0)" }
    }
}
