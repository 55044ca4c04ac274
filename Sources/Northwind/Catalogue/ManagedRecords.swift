import Foundation
import GRDB
import NorthwindStore

/// A record that people list, show, create, update and delete through the generic operations below:
/// categories, suppliers, customers, employees and shippers.
public protocol ManagedRecord: Codable, Sendable, FetchableRecord, MutablePersistableRecord, Identifiable
where ID == Int64?, Columns: ColumnExpression & CaseIterable {
    /// How people call one of these, e.g. "category".
    static var entityName: String { get }
    var id: Int64? { get set }
    /// The id that names the record on every installation.
    var recordID: String { get }
    /// The list's order.
    static var defaultOrdering: [any SQLOrderingTerm] { get }
    /// What identifies this record to a person, e.g. "Beverages".
    var displayName: String { get }
    /// `displayName` as SQL, for choices read without the whole record.
    static var choiceName: any SQLSelectable { get }
    var version: Int { get set }
    /// Field problems, named by the field's coding key. Empty when valid.
    mutating func normalizeAndValidate() -> [NorthwindError.FieldError]
    /// What still refers to the record, in words ("12 products"); deletion is refused while any remain.
    static func dependents(_ db: Database, id: Int64) throws -> [String]
    /// A record with its required fields empty: where a new one starts.
    static func blank() -> Self
    /// The fields a person may set, in the record's order (see `RecordField`).
    static var fields: [RecordField<Self>] { get }
}

extension ManagedRecord {
    public static func dependents(_ db: Database, id: Int64) throws -> [String] { [] }

    /// The names of the fields a person may set: all but the ids and the version, which the store keeps.
    public static var editableFields: [String] { fields.map(\.name) }

    /// Normalizes the record, then checks it against its kind's own rules and every field's stored rule
    /// (`RecordRules`), reporting every problem at once.
    /// `current`, for an edit: a value left as it was is not refused, as the store's gate does not refuse it (a
    /// customer code sync gave, "ALFKI-OXF", stays editable).
    mutating func validated(unchangedFrom current: Self? = nil) throws(NorthwindError) {
        var errors = normalizeAndValidate()
        let values = (try? databaseDictionary) ?? [:]
        for error in RecordRules.check(Self.databaseTableName, values) where !errors.contains(where: { $0.field == error.field }) {
            errors.append(error)
        }
        if let current, let before = try? current.databaseDictionary {
            errors.removeAll { error in
                let column = [error.field, error.field + "Cents"].first { values[$0] != nil || before[$0] != nil }
                guard let column else { return false }
                return (values[column] ?? nil)?.databaseValue == (before[column] ?? nil)?.databaseValue
            }
        }
        // In the record's own field order, as a form lists them.
        let order = Self.fields.map(\.name)
        try errors.sorted { (order.firstIndex(of: $0.field) ?? .max) < (order.firstIndex(of: $1.field) ?? .max) }.throwIfAny()
    }

    static func count(_ db: Database, _ noun: String, sql: String, id: Int64) throws -> [String] {
        let n = try Int.fetchOne(db, sql: sql, arguments: [id]) ?? 0
        return n == 0 ? [] : ["\(n) \(noun)\(n == 1 ? "" : "s")"]
    }
}

extension Records {
    /// Lists records of one kind, in their natural order.
    public func list<R: ManagedRecord>(_ type: R.Type, limit: Int = 100, offset: Int = 0) async throws(NorthwindError) -> Page<R> {
        try checkPaging(limit: limit, offset: offset)
        return try await measuredRead("list \(R.databaseTableName)") { db in
            let items = try R.all().order(R.defaultOrdering).limit(limit, offset: offset).fetchAll(db)
            return Page(items: items, total: try R.fetchCount(db), offset: offset, limit: limit)
        }
    }

    public func find<R: ManagedRecord>(_ type: R.Type, id: Int64) throws(NorthwindError) -> R {
        try quickRead { db in try Self.fetch(R.self, id: id, db) }
    }

    /// Inserts a new record and returns it with its id.
    public func create<R: ManagedRecord>(_ record: R) async throws(NorthwindError) -> R {
        var record = record
        record.id = nil
        record.version = 1
        try record.validated()
        let valid = record
        return try await write { db in
            var inserted = valid
            try inserted.insert(db)
            return inserted
        }
    }

    /// Saves an edited record. `record.version` must be the version that was read: when someone else saved in
    /// between, the save is refused with a conflict that says what they changed.
    public func update<R: ManagedRecord>(_ record: R) async throws(NorthwindError) -> R {
        guard let id = record.id ?? nil else { throw .invalid("id", "is required to update a \(R.entityName)") }
        var record = record
        try record.validated(unchangedFrom: try? find(R.self, id: id))
        let edited = record
        if let zone = SyncTable.sharedZone(of: R.databaseTableName) { await refreshBeforeEdit?(zone) }
        return try await write { db in
            let current = try Self.fetch(R.self, id: id, db)
            guard current.version == edited.version else {
                throw NorthwindError.conflict(Self.conflictMessage(R.entityName, current.displayName, theirs: current, mine: edited))
            }
            var saved = edited
            saved.version = current.version + 1
            try saved.update(db)
            return saved
        }
    }

    /// Deletes a record nothing refers to any more.
    public func delete<R: ManagedRecord>(_ type: R.Type, id: Int64) async throws(NorthwindError) {
        let binaries = store.binaries
        try await write { db in
            let current = try Self.fetch(R.self, id: id, db)
            let dependents = try R.dependents(db, id: id)
            guard dependents.isEmpty else {
                throw NorthwindError.inUse(
                    "\(R.entityName.capitalized) '\(current.displayName)' is still used by \(dependents.joined(separator: " and ")); reassign or delete those first."
                )
            }
            for (table, attribute) in Store.binaryAttributes where table == R.databaseTableName {
                try binaries.prepareDelete(db, table: table, attribute: attribute, id: id)
            }
            _ = try R.deleteOne(db, id: id)
        }
    }

    static func fetch<R: ManagedRecord>(_ type: R.Type, id: Int64, _ db: Database) throws -> R {
        guard let record = try fetchOne(R.self, db, sql: "SELECT * FROM \(R.databaseTableName) WHERE id = ?", [id]) else {
            throw NorthwindError.notFound(entity: R.entityName, key: "#\(id)")
        }
        return record
    }

    /// "Someone else saved … since you opened it: unitPrice 18.00 → 19.00." Lists the fields where their saved
    /// values differ from what this caller tried to save.
    static func humanize(_ key: String) -> String {
        let name = key.hasSuffix("ID") ? String(key.dropLast(2)) : key
        return name.reduce(into: "") { text, character in
            text += character.isUppercase ? " " + character.lowercased() : String(character)
        }
    }

    static func conflictMessage<R: Encodable>(_ entity: String, _ name: String, theirs: R, mine: R) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let theirFields = (try? JSONSerialization.jsonObject(with: encoder.encode(theirs))) as? [String: Any] ?? [:]
        let myFields = (try? JSONSerialization.jsonObject(with: encoder.encode(mine))) as? [String: Any] ?? [:]
        let changes = theirFields.keys.sorted().filter { $0 != "version" }.compactMap { key -> String? in
            let theirs = theirFields[key].map { "\($0)" } ?? "—"
            let mine = myFields[key].map { "\($0)" } ?? "—"
            guard theirs != mine else { return nil }
            // Say it as a person would: "unit price is now 19.50", not "unitPriceCents is now 1950".
            if key.hasSuffix("Cents"), let cents = theirFields[key] as? Int {
                return "\(humanize(String(key.dropLast(5)))) is now \(Money(cents: cents))"
            }
            return "\(humanize(key)) is now \(theirs)"
        }
        let detail = changes.isEmpty ? "" : ": \(changes.joined(separator: ", "))"
        return "Someone else saved \(entity) '\(name)' after you opened it\(detail). Reload it, reapply your change and save again."
    }
}

// MARK: - The managed kinds

/// Trims a required field; its length is the field's rule in `RecordRules`.
func required(_ value: inout String, _ field: String, _ errors: inout [NorthwindError.FieldError]) {
    value = value.trimmingCharacters(in: .whitespacesAndNewlines)
    if value.isEmpty { errors.append(.init(field, "is required")) }
}

extension Category: ManagedRecord {
    public static let entityName = "category"
    public static var defaultOrdering: [any SQLOrderingTerm] { [Columns.name] }
    public var displayName: String { name }
    public static var choiceName: any SQLSelectable { Columns.name }
    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        required(&name, "name", &errors)
        description = clean(description)
        return errors
    }
    public static func dependents(_ db: Database, id: Int64) throws -> [String] {
        try count(db, "product", sql: "SELECT count(*) FROM products WHERE categoryID = ?", id: id)
    }
}

extension Supplier: ManagedRecord {
    public static let entityName = "supplier"
    public static var defaultOrdering: [any SQLOrderingTerm] { [Columns.companyName] }
    public var displayName: String { companyName }
    public static var choiceName: any SQLSelectable { Columns.companyName }
    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        required(&companyName, "companyName", &errors)
        (contactName, contactTitle, address, city) = (clean(contactName), clean(contactTitle), clean(address), clean(city))
        (region, postalCode, country, phone, fax, homePage) = (
            clean(region), clean(postalCode), clean(country), clean(phone), clean(fax), clean(homePage)
        )
        return errors
    }
    public static func dependents(_ db: Database, id: Int64) throws -> [String] {
        try count(db, "product", sql: "SELECT count(*) FROM products WHERE supplierID = ?", id: id)
            + count(db, "purchase order", sql: "SELECT count(*) FROM purchase_orders WHERE supplierID = ?", id: id)
    }
}

extension Customer: ManagedRecord {
    public static let entityName = "customer"
    public static var defaultOrdering: [any SQLOrderingTerm] { [Columns.companyName] }
    public var displayName: String { companyName }
    public static var choiceName: any SQLSelectable { Columns.companyName }
    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        code = code.trimmingCharacters(in: .whitespaces).uppercased()
        // People give letters and digits only; the store also takes sync's renaming of a clash ("ALFKI-OXF").
        if !FieldRule.isCustomerCode(code, renamedBySync: false) { errors.append(.init("code", FieldRule.customerCodeMessage)) }
        required(&companyName, "companyName", &errors)
        (contactName, contactTitle, address, city) = (clean(contactName), clean(contactTitle), clean(address), clean(city))
        (region, postalCode, country, phone, fax) = (clean(region), clean(postalCode), clean(country), clean(phone), clean(fax))
        return errors
    }
    public static func dependents(_ db: Database, id: Int64) throws -> [String] {
        try count(db, "order", sql: "SELECT count(*) FROM orders WHERE customerID = ?", id: id)
    }
}

extension Employee: ManagedRecord {
    public static let entityName = "employee"
    public static var defaultOrdering: [any SQLOrderingTerm] { [Columns.lastName, Columns.firstName] }
    public var displayName: String { fullName }
    public static var choiceName: any SQLSelectable { SQL("firstName || ' ' || lastName") }
    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        required(&firstName, "firstName", &errors)
        required(&lastName, "lastName", &errors)
        (title, titleOfCourtesy, address, city, region) = (clean(title), clean(titleOfCourtesy), clean(address), clean(city), clean(region))
        (postalCode, country, homePhone, `extension`, notes, photoPath) = (
            clean(postalCode), clean(country), clean(homePhone), clean(`extension`), clean(notes), clean(photoPath)
        )
        if let birthDate, let hireDate, hireDate < birthDate { errors.append(.init("hireDate", "must be after the birth date")) }
        if let reportsTo, reportsTo == id { errors.append(.init("reportsTo", "an employee cannot report to themselves")) }
        return errors
    }
    public static func dependents(_ db: Database, id: Int64) throws -> [String] {
        try count(db, "order", sql: "SELECT count(*) FROM orders WHERE employeeID = ?", id: id)
            + count(db, "direct report", sql: "SELECT count(*) FROM employees WHERE reportsTo = ?", id: id)
    }
}

extension Shipper: ManagedRecord {
    public static let entityName = "shipper"
    public static var defaultOrdering: [any SQLOrderingTerm] { [Columns.companyName] }
    public var displayName: String { companyName }
    public static var choiceName: any SQLSelectable { Columns.companyName }
    public mutating func normalizeAndValidate() -> [NorthwindError.FieldError] {
        var errors: [NorthwindError.FieldError] = []
        required(&companyName, "companyName", &errors)
        phone = clean(phone)
        return errors
    }
    public static func dependents(_ db: Database, id: Int64) throws -> [String] {
        try count(db, "order", sql: "SELECT count(*) FROM orders WHERE shipVia = ?", id: id)
    }
}

// MARK: - Binary attributes and lookups

extension BackofficeFeature {
    func binary<R: ManagedRecord>(_ type: R.Type, attribute: String, id: Int64) async throws(NorthwindError) -> BinaryContent? {
        let binaries = store.binaries
        return try await read { db in
            _ = try Records.fetch(R.self, id: id, db)
            return try binaries.load(db, table: R.databaseTableName, attribute: attribute, id: id)
        }
    }

    func setBinary<R: ManagedRecord>(_ type: R.Type, attribute: String, id: Int64, _ content: BinaryContent?) async throws(NorthwindError) {
        if let content, !content.contentType.contains("/") {
            throw .invalid(attribute, "needs a MIME type such as image/jpeg, not '\(content.contentType)'")
        }
        let binaries = store.binaries
        try await write { db in
            _ = try Records.fetch(R.self, id: id, db)
            try binaries.save(db, content, table: R.databaseTableName, attribute: attribute, id: id)
        }
    }
}

extension Records {
    static func customer(code: String, _ db: Database) throws -> Customer {
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        guard let customer = try fetchOne(Customer.self, db, sql: "SELECT * FROM customers WHERE code = ?", [trimmed.uppercased()]) else {
            throw NorthwindError.notFound(entity: "customer", key: "'\(trimmed)'")
        }
        return customer
    }
}
