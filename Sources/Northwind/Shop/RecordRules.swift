import Foundation
import GRDB
import NorthwindStore

/// What one stored field may hold. The message is the one every way in shows, word for word.
public enum FieldRule: Sendable, Equatable {
    /// Text of at most this many characters (as SQLite counts them: Unicode scalars).
    case text(max: Int)
    /// A customer's code: 1 to 10 letters or digits.
    case customerCode
    /// An order's or a quote's number: this site's code and a sequence ("7KQ2XM-1042"), or a classic number.
    case documentNumber
    /// Integer cents within `Limits.money`.
    case money
    /// A whole number within the range.
    case whole(ClosedRange<Int>)
    /// A calendar day as stored: "yyyy-MM-dd", a day that exists.
    case date
    /// A moment as stored: "yyyy-MM-ddTHH:MM:SS.sssZ".
    case timestamp

    /// Why `value` breaks the rule, or nil. NULL passes: whether a value is required is the schema's NOT NULL.
    /// `renamedBySync` also takes the customer codes only sync writes, settling a clash ("ALFKI-OXF").
    public func refusal(_ value: DatabaseValue, renamedBySync: Bool = false) -> String? {
        switch (self, value.storage) {
        case (_, .null): return nil
        case (.text(let max), .string(let text)):
            // The store's text ends at a NUL: a value holding one would be kept cut short.
            if text.unicodeScalars.contains("\u{0}") { return Self.nulMessage }
            return text.unicodeScalars.count > max ? "must be at most \(Limits.grouped(max)) characters" : nil
        case (.text(let max), .blob(let data)):
            return data.count > max ? "must be at most \(Limits.grouped(max)) characters" : nil
        case (.customerCode, .string(let text)):
            return Self.isCustomerCode(text, renamedBySync: renamedBySync) ? nil : Self.customerCodeMessage
        case (.documentNumber, .string(let text)):
            return Self.isCode(text, max: 30, hyphens: true) ? nil : Self.documentNumberMessage
        case (.money, .int64(let cents)):
            return Limits.money.contains(Money(cents: Int(cents))) ? nil : Limits.check(Money(cents: Int(cents)), Limits.money, "")?.message
        case (.whole(let range), .int64(let number)):
            return range.contains(Int(number)) ? nil : Limits.outOfRange(range, "").message
        case (.date, .string(let text)):
            return LocalDate(text)?.description == text ? nil : Self.dateMessage
        case (.timestamp, .string(let text)):
            return Timestamp(text)?.description == text ? nil : Self.timestampMessage
        case (.date, _):
            return Self.dateMessage
        case (.timestamp, _):
            return Self.timestampMessage
        case (.text, _), (.customerCode, _), (.documentNumber, _):
            return "must be text"
        case (.money, _), (.whole, _):
            return "must be a whole number"
        }
    }

    public static let customerCodeMessage = "must be 1 to 10 letters or digits, e.g. VINET"
    public static let documentNumberMessage = "must be 1 to 30 letters, digits and hyphens, e.g. 7KQ2XM-1042"
    public static let nulMessage = "must not hold a NUL character (U+0000)"
    public static let dateMessage = "must be a day written yyyy-MM-dd, e.g. 1996-07-04"
    public static let timestampMessage = "must be a moment written yyyy-MM-ddTHH:MM:SS.sssZ, e.g. 1996-07-04T09:30:00.000Z"

    /// 1 to 10 letters or digits; sync, settling two shops' clash over one code, may append "-" and a site code
    /// ("ALFKI-OXF"), which only it writes.
    public static func isCustomerCode(_ text: String, renamedBySync: Bool) -> Bool {
        if isCode(text, max: 10, hyphens: false) { return true }
        // "ALFKI-OXF", or "ALFKI-OXF-2" when that was taken too.
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return renamedBySync && (2...3).contains(parts.count) && isCode(String(parts[0]), max: 10, hyphens: false)
            && parts.dropFirst().allSatisfy { isCode(String($0), max: 6, hyphens: false) }
    }

    /// Letters A–Z and digits (ASCII: codes travel in addresses and file names), and hyphens inside where allowed.
    static func isCode(_ text: String, max: Int, hyphens: Bool) -> Bool {
        let scalars = text.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= max, scalars.first != "-", scalars.last != "-" else { return false }
        return scalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || (hyphens && $0 == "-") }
    }
}

/// Every stored field's rule, per table: declared once here, enforced on every write of every path by the store's
/// write gate (`RecordGate`), and read by the domain's own validation so that a form shows the same message.
public enum RecordRules {
    public static let tables: [String: [String: FieldRule]] = {
        let name = FieldRule.text(max: Limits.nameLength)
        let short = FieldRule.text(max: Limits.shortTextLength)
        let address = FieldRule.text(max: Limits.addressLength)
        let long = FieldRule.text(max: Limits.longTextLength)
        let place: [String: FieldRule] = ["address": address, "city": short, "region": short, "postalCode": short, "country": short]
        let contact: [String: FieldRule] = ["contactName": short, "contactTitle": short, "phone": short, "fax": short]
        let units = FieldRule.whole(Limits.units)
        return [
            "categories": ["name": .text(max: 40), "description": long, "pictureType": short, "taxBasisPoints": .whole(0...10_000)],
            "suppliers": ["companyName": name, "homePage": long].merging(place) { $1 }.merging(contact) { $1 },
            "products": [
                "name": .text(max: 80), "quantityPerUnit": short, "unitPriceCents": .money, "unitsInStock": units, "unitsOnOrder": units,
                "reorderLevel": units, "taxBasisPoints": .whole(0...10_000),
            ],
            "customers": ["code": .customerCode, "companyName": name].merging(place) { $1 }.merging(contact) { $1 },
            "customer_demographics": ["code": short, "description": long],
            "employees": [
                "lastName": .text(max: 40), "firstName": .text(max: 40), "title": short, "titleOfCourtesy": short,
                "birthDate": .date, "hireDate": .date, "homePhone": short, "extension": short, "notes": long,
                "photoPath": long, "photoType": short,
            ].merging(place) { $1 },
            "shippers": ["companyName": name, "phone": short],
            "orders": [
                "number": .documentNumber, "orderDate": .date, "requiredDate": .date, "shippedDate": .date,
                "freightCents": .money, "shipName": name, "shipAddress": address, "shipCity": short,
                "shipRegion": short, "shipPostalCode": short, "shipCountry": short, "sourceNumber": .text(max: 64),
                "cancelledUnits": units,
            ],
            "order_lines": ["unitPriceCents": .money, "quantity": .whole(Limits.lineQuantity)],
            "regions": ["description": short],
            "territories": ["code": short, "description": short],
            "stock_movements": [
                "delta": .whole(-Limits.units.upperBound...Limits.units.upperBound), "note": .text(max: 2 * Limits.noteLength),
                "location": short, "createdAt": .timestamp, "unitCostCents": .money, "averageCostCents": .money,
                "requestKey": .text(max: 100), "overReceipt": .text(max: Limits.noteLength),
            ],
            "purchase_orders": [
                "number": .documentNumber, "expectedDate": .date, "note": .text(max: Limits.noteLength), "createdAt": .timestamp,
                "sentAt": .timestamp, "closedAt": .timestamp, "location": short,
            ],
            "purchase_order_lines": ["quantity": .whole(1...Limits.units.upperBound), "unitCostCents": .money],
            "shipments": ["sequence": .whole(1...1_000_000), "shippedDate": .date, "createdAt": .timestamp, "requestKey": .text(max: 100)],
            "shipment_lines": ["quantity": .whole(Limits.lineQuantity)],
            "returns": [
                "sequence": .whole(1...1_000_000), "returnedDate": .date, "reason": .text(max: Limits.noteLength),
                "createdAt": .timestamp, "requestKey": .text(max: 100),
            ],
            "return_lines": ["quantity": .whole(Limits.lineQuantity)],
            "invoices": [
                "kind": .text(max: 20), "rounding": .text(max: 10), "site": .text(max: 40), "year": .whole(1900...9999),
                "counter": .whole(1...999_999_999), "number": .text(max: 80),
                "issuedDate": .date, "seller": .text(max: 2000), "buyer": .text(max: 2000), "netCents": .whole(0...Int.max),
                "taxCents": .whole(0...Int.max), "grossCents": .whole(0...Int.max), "rendition": .text(max: Limits.documentLength),
                "createdAt": .timestamp,
            ],
            "invoice_lines": [
                "position": .whole(1...100_000), "description": .text(max: 200), "quantity": .whole(Limits.lineQuantity),
                "unitPriceCents": .money, "discountBasisPoints": .whole(0...10_000), "netCents": .whole(0...Int.max),
                "taxBasisPoints": .whole(0...10_000), "taxName": .text(max: 40), "taxCents": .whole(0...Int.max),
            ],
            "stock_transfers": [
                "quantity": .whole(1...Limits.units.upperBound), "fromLocation": short, "toLocation": short,
                "note": .text(max: Limits.noteLength), "sentAt": .timestamp,
            ],
            "quotes": [
                "number": .documentNumber, "notes": long, "orderNumber": .documentNumber, "createdBy": short,
                "sourceNumber": .text(max: 64), "validUntil": .date, "createdAt": .timestamp, "updatedAt": .timestamp,
            ],
            "quote_lines": ["unitPriceCents": .money, "quantity": .whole(Limits.lineQuantity)],
            "quote_versions": [
                "label": name, "content": .text(max: Limits.documentLength), "author": short, "createdAt": .timestamp,
            ],
            "record_offers": [
                "site": .text(max: 40), "zoneName": .text(max: 64), "recordType": .text(max: 64), "recordName": .text(max: 255),
                "changeTag": .text(max: 255), "body": .text(max: 400_000), "createdAt": .timestamp,
            ],
            "record_offer_answers": ["site": .text(max: 40), "accepted": .whole(0...1), "reason": .text(max: 1000), "createdAt": .timestamp],
        ]
    }()

    /// The field errors of one value, or none: what the domain's validation asks before it writes.
    public static func check(_ table: String, _ field: String, _ value: (any DatabaseValueConvertible)?) -> NorthwindError.FieldError? {
        guard let rule = tables[table]?[field] else { return nil }
        return rule.refusal(value?.databaseValue ?? .null).map { .init(fieldName(field), $0) }
    }

    /// A column as clients name the field: money columns hold cents ("unitPriceCents") but read as amounts.
    static func fieldName(_ column: String) -> String {
        column.hasSuffix("Cents") ? String(column.dropLast(5)) : column
    }

    /// The field errors of a record about to be written, every one at once.
    public static func check(_ table: String, _ values: [String: (any DatabaseValueConvertible)?]) -> [NorthwindError.FieldError] {
        values.sorted { $0.key < $1.key }.compactMap { check(table, $0.key, $0.value) }
    }

    /// Rows already stored that break a rule, at most `limit`, as "table #id: field …": what a restore refuses.
    public static func violations(_ db: Database, limit: Int = 20) throws -> [String] {
        var found: [String] = []
        for (table, rules) in tables.sorted(by: { $0.key < $1.key }) {
            let columns = try Set(db.columns(in: table).map(\.name))
            let checked = rules.keys.filter(columns.contains).sorted()
            guard !checked.isEmpty else { continue }
            // Text read back ends at a NUL, so whether one is stored is asked of the bytes.
            let nuls = checked.map { "instr(CAST(\($0.quotedDatabaseIdentifier) AS BLOB), x'00') > 0" }
            let selected = (checked.map(\.quotedDatabaseIdentifier) + nuls).joined(separator: ", ")
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, \(selected) FROM \(table)")
            while let row = try cursor.next() {
                for (index, column) in checked.enumerated() {
                    if row[1 + checked.count + index] as Bool? == true {
                        found.append("\(table) #\(row["id"] as Int64? ?? 0): \(fieldName(column)) \(FieldRule.nulMessage)")
                        if found.count >= limit { return found }
                        continue
                    }
                    // A stored code may be one sync gave.
                    if let message = rules[column]?.refusal(row[column] as DatabaseValue, renamedBySync: true) {
                        found.append("\(table) #\(row["id"] as Int64? ?? 0): \(fieldName(column)) \(message)")
                        if found.count >= limit { return found }
                    }
                }
            }
        }
        return found
    }
}

/// The write gate: on the store's writer connection, a trigger before every insert and update of a table with rules
/// hands the new values (and, for an update, the old ones) to one SQL function, which refuses any value that breaks
/// its rule, naming the field and the rule. Pages, the API, the CLI, document imports, sync, demo data and the classic
/// import all write through this connection, so none can skip it; an update that leaves a value as it was is not
/// refused for it, so a store written by an older version still works. Only sync, inside `allowingSyncForms`, may
/// write the customer codes it gives when settling a clash ("ALFKI-OXF").
enum RecordGate {
    static let functionName = "northwind_gate"
    /// A row here, on the writer's connection and inside a transaction only, lets sync's own forms through.
    static let syncFormsTable = "temp.northwind_gate_sync_forms"

    /// Runs `body` with sync's own forms allowed; the marker row goes with the transaction, whatever happens.
    static func allowingSyncForms<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "INSERT INTO \(syncFormsTable) VALUES (1)")
        let result = try body()
        try db.execute(sql: "DELETE FROM \(syncFormsTable)")
        return result
    }

    static func install(on store: Store) {
        store.installOnce("record-gate") { db in
            db.add(function: function)
            var sql = "CREATE TEMP TABLE IF NOT EXISTS \(syncFormsTable.dropFirst(5)) (allowed INTEGER);\n"
            for (table, rules) in RecordRules.tables.sorted(by: { $0.key < $1.key }) {
                let columns = try Set(db.columns(in: table).map(\.name))
                let checked = rules.keys.filter(columns.contains).sorted()
                guard !checked.isEmpty else { continue }
                // The second argument: 1 for an update, plus 2 where sync's forms are allowed (only tables that have any).
                let syncForms = rules.values.contains(.customerCode) ? " + 2 * (SELECT count(*) > 0 FROM \(syncFormsTable))" : ""
                let inserted = checked.map { "'\($0)', NEW.\($0.quotedDatabaseIdentifier), NULL" }.joined(separator: ", ")
                let updated = checked.map { "'\($0)', NEW.\($0.quotedDatabaseIdentifier), OLD.\($0.quotedDatabaseIdentifier)" }
                    .joined(separator: ", ")
                sql += """
                    CREATE TEMP TRIGGER IF NOT EXISTS gate_\(table)_insert BEFORE INSERT ON main.\(table) BEGIN
                      SELECT \(functionName)('\(table)', 0\(syncForms), \(inserted));
                    END;
                    CREATE TEMP TRIGGER IF NOT EXISTS gate_\(table)_update BEFORE UPDATE ON main.\(table) BEGIN
                      SELECT \(functionName)('\(table)', 1\(syncForms), \(updated));
                    END;

                    """
            }
            try db.execute(sql: sql)
        }
    }

    /// `northwind_gate(table, isUpdate, field, new, old, field, new, old, …)`: NULL, or an error naming every field
    /// that breaks its rule.
    static let function = DatabaseFunction(functionName, argumentCount: nil, pure: false) { values in
        guard let table = String.fromDatabaseValue(values[0]), let rules = RecordRules.tables[table] else { return nil }
        let mode = Int.fromDatabaseValue(values[1]) ?? 0
        let (isUpdate, syncForms) = (mode & 1 != 0, mode & 2 != 0)
        var errors: [NorthwindError.FieldError] = []
        var index = 2
        while index + 2 < values.count {
            defer { index += 3 }
            guard let field = String.fromDatabaseValue(values[index]), let rule = rules[field] else { continue }
            let new = values[index + 1]
            if isUpdate && new == values[index + 2] { continue }
            if let message = rule.refusal(new, renamedBySync: syncForms) { errors.append(.init(RecordRules.fieldName(field), message)) }
        }
        guard errors.isEmpty else {
            let detail = (try? JSONEncoder().encode(errors)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            throw DatabaseError(resultCode: .SQLITE_CONSTRAINT_CHECK, message: NorthwindError.gateMarker + table + ":" + detail)
        }
        return nil
    }
}
