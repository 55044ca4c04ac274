import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindWeb

/// What the generic list/show/add/edit/delete commands need to know about one kind of record.
protocol ManagedKind {
    associatedtype Record: ManagedRecord
    static var plural: String { get }
    static func tableHeaders() -> [String]
    static func tableRow(_ record: Record) -> [String]
    /// Turns what a person typed ("7", or a customer code) into an id.
    static func resolve(_ key: String, _ backoffice: Backoffice) async throws -> Int64
}

extension ManagedKind {
    static func resolve(_ key: String, _ backoffice: Backoffice) async throws -> Int64 {
        guard let id = Int64(key) else { throw ValidationError("'\(key)' is not \(withArticle(Record.entityName)) id.") }
        return id
    }

    static var fieldHelp: String {
        "Set a field, as NAME=VALUE (repeatable; an empty VALUE clears it). Fields: "
            + Record.editableFields.joined(separator: ", ") + "."
    }

    /// Applies NAME=VALUE pairs through the record's field table (`RecordField`), all or nothing.
    static func apply(_ assignments: [String], to record: Record) throws -> Record {
        var inputs: [(name: String, value: FieldInput)] = []
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "=") else {
                throw ValidationError("'\(assignment)' is not NAME=VALUE.")
            }
            let name = String(assignment[..<equals])
            guard Record.editableFields.contains(name) else {
                throw ValidationError("\(plural.capitalized) have no field '\(name)'. Fields: \(Record.editableFields.joined(separator: ", ")).")
            }
            inputs.append((name, .text(String(assignment[assignment.index(after: equals)...]))))
        }
        var edited = record
        try edited.set(inputs)
        return edited
    }
}

struct ManagedList<Kind: ManagedKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration { CommandConfiguration(commandName: "list", abstract: "List \(Kind.plural).") }
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "Rows per page (1–1000).") var limit = 100
    @Option(help: "Rows to skip.") var offset = 0

    func run() async throws {
        let page = try await storeOptions.open().records.list(Kind.Record.self, limit: limit, offset: offset)
        if output.json { return try printJSON(Wire.records(page)) }
        var table = TextTable(headers: Kind.tableHeaders())
        for record in page.items { table.rows.append(Kind.tableRow(record)) }
        print(table.render())
        print(pageFooter(page))
    }
}

struct ManagedShow<Kind: ManagedKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration { CommandConfiguration(commandName: "show", abstract: "Show one \(Kind.Record.entityName).") }
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "Its id.") var id: String

    func run() async throws {
        let backoffice = try await storeOptions.open()
        let record = try backoffice.records.find(Kind.Record.self, id: try await Kind.resolve(id, backoffice))
        if output.json { return try printJSON(Wire.record(record)) }
        print(describe(record))
    }
}

/// "name: value" lines in the record's field order, with its id and version.
func describe<R: ManagedRecord>(_ record: R) -> String {
    let lines =
        [("id", record.id.map { String($0) } ?? ""), ("recordID", record.recordID)]
        + R.fields.map { ($0.name, $0.text(of: record)) } + [("version", String(record.version))]
    let width = lines.map(\.0.count).max() ?? 0
    return lines.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
}

struct ManagedAdd<Kind: ManagedKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "add", abstract: "Add \(withArticle(Kind.Record.entityName)).", discussion: Kind.fieldHelp)
    }
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .customLong("set"), help: "NAME=VALUE; see the fields below.") var assignments: [String] = []

    func run() async throws {
        let record = try Kind.apply(assignments, to: Kind.Record.blank())
        let created = try await storeOptions.open().records.create(record)
        if output.json { return try printJSON(Wire.record(created)) }
        print("Added \(Kind.Record.entityName) #\(created.id.map { String($0) } ?? ""): \(created.displayName).")
    }
}

struct ManagedEdit<Kind: ManagedKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "edit", abstract: "Change \(withArticle(Kind.Record.entityName))'s details.", discussion: Kind.fieldHelp)
    }
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "Its id.") var id: String
    @Option(name: .customLong("set"), help: "NAME=VALUE; see the fields below.") var assignments: [String] = []

    func validate() throws {
        if assignments.isEmpty { throw ValidationError("Nothing to change: give at least one --set NAME=VALUE.") }
    }

    func run() async throws {
        let backoffice = try await storeOptions.open()
        let current = try backoffice.records.find(Kind.Record.self, id: try await Kind.resolve(id, backoffice))
        let saved = try await backoffice.records.update(try Kind.apply(assignments, to: current))
        if output.json { return try printJSON(Wire.record(saved)) }
        print("Saved \(Kind.Record.entityName) \(id): \(saved.displayName).")
    }
}

struct ManagedDelete<Kind: ManagedKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "delete", abstract: "Delete \(withArticle(Kind.Record.entityName)) that nothing refers to.")
    }
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "Its id.") var id: String

    func run() async throws {
        let backoffice = try await storeOptions.open()
        try await backoffice.records.delete(Kind.Record.self, id: try await Kind.resolve(id, backoffice))
        print("Deleted \(Kind.Record.entityName) \(id).")
    }
}

// MARK: - The five kinds

enum CategoryKind: ManagedKind {
    static let plural = "categories"
    static func tableHeaders() -> [String] { ["ID", "Name", "Description"] }
    static func tableRow(_ r: Category) -> [String] { [String(r.id ?? 0), r.name, text(r.description)] }
}

enum SupplierKind: ManagedKind {
    static let plural = "suppliers"
    static func tableHeaders() -> [String] { ["ID", "Company", "Contact", "City", "Country", "Phone"] }
    static func tableRow(_ r: Supplier) -> [String] {
        [String(r.id ?? 0), r.companyName, text(r.contactName), text(r.city), text(r.country), text(r.phone)]
    }
}

enum CustomerKind: ManagedKind {
    static let plural = "customers"
    static func tableHeaders() -> [String] { ["ID", "Code", "Company", "Contact", "City", "Country", "Phone"] }
    static func tableRow(_ r: Customer) -> [String] {
        [String(r.id ?? 0), r.code, r.companyName, text(r.contactName), text(r.city), text(r.country), text(r.phone)]
    }
    /// Customers are known by their code on the phone; an id works too.
    static func resolve(_ key: String, _ backoffice: Backoffice) async throws -> Int64 {
        if let id = Int64(key) { return id }
        return try backoffice.people.customer(code: key).id ?? 0
    }
}

enum EmployeeKind: ManagedKind {
    static let plural = "employees"
    static func tableHeaders() -> [String] { ["ID", "Name", "Title", "City", "Reports to"] }
    static func tableRow(_ r: Employee) -> [String] {
        [String(r.id ?? 0), r.fullName, text(r.title), text(r.city), r.reportsTo.map { String($0) } ?? ""]
    }
}

enum ShipperKind: ManagedKind {
    static let plural = "shippers"
    static func tableHeaders() -> [String] { ["ID", "Company", "Phone"] }
    static func tableRow(_ r: Shipper) -> [String] { [String(r.id ?? 0), r.companyName, text(r.phone)] }
}

private func managedSubcommands<Kind: ManagedKind>(_ kind: Kind.Type) -> [any ParsableCommand.Type] {
    [ManagedList<Kind>.self, ManagedShow<Kind>.self, ManagedAdd<Kind>.self, ManagedEdit<Kind>.self, ManagedDelete<Kind>.self]
}

struct CategoriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "categories",
        abstract: "List, show, add, edit and delete categories.",
        subcommands: managedSubcommands(CategoryKind.self) + [BinaryCommand<CategoryPicture>.self]
    )
}
struct SuppliersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suppliers",
        abstract: "List, show, add, edit and delete suppliers.",
        subcommands: managedSubcommands(SupplierKind.self)
    )
}
struct CustomersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customers",
        abstract: "List, show, add, edit and delete customers (by id or code).",
        subcommands: managedSubcommands(CustomerKind.self)
    )
}
struct EmployeesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "employees",
        abstract: "List, show, add, edit and delete employees.",
        subcommands: managedSubcommands(EmployeeKind.self)
            + [BinaryCommand<EmployeePhoto>.self, SetPasswordCommand.self, TokenCommand.self]
    )
}
struct ShippersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shippers",
        abstract: "List, show, add, edit and delete shippers.",
        subcommands: managedSubcommands(ShipperKind.self)
    )
}

// MARK: - Pictures and photos

protocol BinaryAttributeKind {
    static var name: String { get }
    static var owner: String { get }
    static func load(_ backoffice: Backoffice, id: Int64) async throws -> BinaryContent?
    static func save(_ backoffice: Backoffice, id: Int64, _ content: BinaryContent?) async throws
}
enum CategoryPicture: BinaryAttributeKind {
    static let name = "picture"
    static let owner = "category"
    static func load(_ b: Backoffice, id: Int64) async throws -> BinaryContent? { try await b.catalogue.picture(categoryID: id) }
    static func save(_ b: Backoffice, id: Int64, _ c: BinaryContent?) async throws { try await b.catalogue.setPicture(categoryID: id, c) }
}
enum EmployeePhoto: BinaryAttributeKind {
    static let name = "photo"
    static let owner = "employee"
    static func load(_ b: Backoffice, id: Int64) async throws -> BinaryContent? { try await b.people.photo(employeeID: id) }
    static func save(_ b: Backoffice, id: Int64, _ c: BinaryContent?) async throws { try await b.people.setPhoto(employeeID: id, c) }
}

struct BinaryCommand<Kind: BinaryAttributeKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Kind.name, abstract: "Save, replace or remove \(withArticle(Kind.owner))'s \(Kind.name).")
    }
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The \(Kind.owner) id.") var id: Int64
    @Option(help: "Store this image file.") var set: String?
    @Option(help: "Write the stored image to this file.") var output: String?
    @Flag(help: "Remove the stored image.") var remove = false

    func validate() throws {
        if [set != nil, output != nil, remove].filter({ $0 }).count != 1 {
            throw ValidationError("Give exactly one of --set FILE, --output FILE or --remove.")
        }
    }

    func run() async throws {
        let backoffice = try await storeOptions.open()
        if let set {
            guard let bytes = FileManager.default.contents(atPath: set) else { throw ValidationError("Cannot read \(set).") }
            try await Kind.save(
                backoffice,
                id: id,
                BinaryContent(bytes: bytes, contentType: Picture.unwrap(Array(bytes))?.contentType ?? "application/octet-stream")
            )
            print("Stored \(bytes.count) bytes as the \(Kind.name) of \(Kind.owner) #\(id).")
        } else if let output {
            guard let content = try await Kind.load(backoffice, id: id) else {
                throw ValidationError("\(Kind.owner.capitalized) #\(id) has no \(Kind.name).")
            }
            try content.bytes.write(to: URL(fileURLWithPath: output))
            print("Wrote \(content.bytes.count) bytes (\(content.contentType)) to \(output).")
        } else {
            try await Kind.save(backoffice, id: id, nil)
            print("Removed the \(Kind.name) of \(Kind.owner) #\(id).")
        }
    }
}

/// "an employee", "a category".
func withArticle(_ noun: String) -> String {
    (noun.first.map { "aeiou".contains($0.lowercased()) } ?? false ? "an " : "a ") + noun
}
