import Foundation
import NorthwindStore

/// A value for one field of a managed record, as a person or a client gives it: text, a whole number (an id), or
/// nothing, which clears an optional field.
public enum FieldInput: Sendable, Hashable {
    case null
    case text(String)
    case number(Int64)
}

/// One field a person may set on a managed record, typed: the CLI's `--set` and its printing, and the API's bodies
/// and PATCH, read and write fields through this table instead of reflection or a JSON round trip.
public struct RecordField<Record> {
    public enum Kind: Sendable {
        /// Required text.
        case text
        /// Text that may be absent.
        case optionalText
        /// A day, "yyyy-MM-dd", that may be absent.
        case optionalDate
        /// Another record's id, that may be absent.
        case optionalID
    }

    public let name: String
    public let kind: Kind
    /// The value as JSON would carry it: nil, a string, or an id.
    public let value: (Record) -> FieldInput
    fileprivate let assign: (inout Record, FieldInput) -> NorthwindError.FieldError?

    /// Sets the field; a value of the wrong kind is a field error that names the field. Empty text or null clears
    /// an optional field and empties a required one, which validation then refuses.
    public func set(_ input: FieldInput, on record: inout Record) -> NorthwindError.FieldError? {
        assign(&record, input)
    }

    /// The value as a person reads it; empty when absent.
    public func text(of record: Record) -> String {
        switch value(record) {
        case .null: ""
        case let .text(text): text
        case let .number(number): String(number)
        }
    }

    public static func text(_ name: String, _ keyPath: WritableKeyPath<Record, String>) -> RecordField {
        RecordField(
            name: name,
            kind: .text,
            value: { .text($0[keyPath: keyPath]) },
            assign: { record, input in
                switch input {
                case .null: record[keyPath: keyPath] = ""
                case let .text(text): record[keyPath: keyPath] = text
                case .number: return .init(name, "must be text")
                }
                return nil
            }
        )
    }

    public static func optionalText(_ name: String, _ keyPath: WritableKeyPath<Record, String?>) -> RecordField {
        RecordField(
            name: name,
            kind: .optionalText,
            value: { $0[keyPath: keyPath].map(FieldInput.text) ?? .null },
            assign: { record, input in
                switch input {
                case .null: record[keyPath: keyPath] = nil
                case let .text(text): record[keyPath: keyPath] = text.isEmpty ? nil : text
                case .number: return .init(name, "must be text")
                }
                return nil
            }
        )
    }

    public static func date(_ name: String, _ keyPath: WritableKeyPath<Record, LocalDate?>) -> RecordField {
        RecordField(
            name: name,
            kind: .optionalDate,
            value: { $0[keyPath: keyPath].map { .text($0.description) } ?? .null },
            assign: { record, input in
                switch input {
                case .null: record[keyPath: keyPath] = nil
                case let .text(text) where text.isEmpty: record[keyPath: keyPath] = nil
                case let .text(text):
                    guard text.count == 10, let day = LocalDate(text) else { return .init(name, "must be a date, YYYY-MM-DD") }
                    record[keyPath: keyPath] = day
                case .number: return .init(name, "must be a date, YYYY-MM-DD")
                }
                return nil
            }
        )
    }

    public static func id(_ name: String, _ keyPath: WritableKeyPath<Record, Int64?>) -> RecordField {
        RecordField(
            name: name,
            kind: .optionalID,
            value: { $0[keyPath: keyPath].map(FieldInput.number) ?? .null },
            assign: { record, input in
                switch input {
                case .null: record[keyPath: keyPath] = nil
                case let .text(text) where text.isEmpty: record[keyPath: keyPath] = nil
                case let .number(number) where number > 0: record[keyPath: keyPath] = number
                case let .text(text):
                    guard let number = Int64(text), number > 0 else { return .init(name, "must be a record id, a whole number from 1") }
                    record[keyPath: keyPath] = number
                case .number: return .init(name, "must be a record id, a whole number from 1")
                }
                return nil
            }
        )
    }
}

extension ManagedRecord {
    /// Sets the named fields, all or nothing: an unknown name or a value of the wrong kind is refused with every
    /// problem at once, naming each field.
    public mutating func set(_ inputs: [(name: String, value: FieldInput)]) throws(NorthwindError) {
        var errors: [NorthwindError.FieldError] = []
        var edited = self
        for (name, input) in inputs {
            guard let field = Self.fields.first(where: { $0.name == name }) else {
                errors.append(.init(name, "is not a field of \(Self.entityName); fields: \(Self.editableFields.joined(separator: ", "))"))
                continue
            }
            if let error = field.set(input, on: &edited) { errors.append(error) }
        }
        try errors.throwIfAny()
        self = edited
    }
}

// MARK: - The managed kinds' fields

extension Category {
    public static func blank() -> Category { Category(name: "") }
    public static var fields: [RecordField<Category>] {
        [.text("name", \.name), .optionalText("description", \.description)]
    }
}

extension Supplier {
    public static func blank() -> Supplier { Supplier(companyName: "") }
    public static var fields: [RecordField<Supplier>] {
        [
            .text("companyName", \.companyName), .optionalText("contactName", \.contactName),
            .optionalText("contactTitle", \.contactTitle), .optionalText("address", \.address), .optionalText("city", \.city),
            .optionalText("region", \.region), .optionalText("postalCode", \.postalCode), .optionalText("country", \.country),
            .optionalText("phone", \.phone), .optionalText("fax", \.fax), .optionalText("homePage", \.homePage),
        ]
    }
}

extension Customer {
    public static func blank() -> Customer { Customer(code: "", companyName: "") }
    public static var fields: [RecordField<Customer>] {
        [
            .text("code", \.code), .text("companyName", \.companyName), .optionalText("contactName", \.contactName),
            .optionalText("contactTitle", \.contactTitle), .optionalText("address", \.address), .optionalText("city", \.city),
            .optionalText("region", \.region), .optionalText("postalCode", \.postalCode), .optionalText("country", \.country),
            .optionalText("phone", \.phone), .optionalText("fax", \.fax),
        ]
    }
}

extension Employee {
    public static func blank() -> Employee { Employee(firstName: "", lastName: "") }
    public static var fields: [RecordField<Employee>] {
        [
            .text("lastName", \.lastName), .text("firstName", \.firstName), .optionalText("title", \.title),
            .optionalText("titleOfCourtesy", \.titleOfCourtesy), .date("birthDate", \.birthDate), .date("hireDate", \.hireDate),
            .optionalText("address", \.address), .optionalText("city", \.city), .optionalText("region", \.region),
            .optionalText("postalCode", \.postalCode), .optionalText("country", \.country), .optionalText("homePhone", \.homePhone),
            .optionalText("extension", \.extension), .optionalText("notes", \.notes), .id("reportsTo", \.reportsTo),
            .optionalText("photoPath", \.photoPath),
        ]
    }
}

extension Shipper {
    public static func blank() -> Shipper { Shipper(companyName: "") }
    public static var fields: [RecordField<Shipper>] {
        [.text("companyName", \.companyName), .optionalText("phone", \.phone)]
    }
}
