import Foundation
import GRDB
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Record fields")
struct RecordFieldTests {
    /// Every column but the ids and the version, by its coding key.
    static func columns<R: ManagedRecord>(_ type: R.Type) -> [String] {
        R.Columns.allCases.map(\.name).filter { !["id", "recordID", "version"].contains($0) }
    }

    @Test func eachKindsTableNamesEveryColumnAPersonMaySet() {
        // Then each managed kind's field table has exactly its settable columns, in their order
        #expect(NorthwindStore.Category.editableFields == Self.columns(NorthwindStore.Category.self))
        #expect(Supplier.editableFields == Self.columns(Supplier.self))
        #expect(Customer.editableFields == Self.columns(Customer.self))
        #expect(Employee.editableFields == Self.columns(Employee.self))
        #expect(Shipper.editableFields == Self.columns(Shipper.self))
    }

    @Test func settingTypedFieldsFromText() throws {
        // Given a blank employee
        var employee = Employee.blank()
        // When a date, an id and text are set from text
        try employee.set([("firstName", .text("Nancy")), ("hireDate", .text("1992-05-01")), ("reportsTo", .text("2"))])
        // Then each lands in its typed property
        #expect(employee.firstName == "Nancy")
        #expect(employee.hireDate == LocalDate("1992-05-01"))
        #expect(employee.reportsTo == 2)
    }

    @Test func aWrongValueIsRefusedNamingTheFieldAndNothingChanges() throws {
        // Given an employee
        var employee = Employee(firstName: "Nancy", lastName: "Davolio")
        // When a good value and two bad ones are set together
        var caught: NorthwindError?
        do {
            try employee.set([("title", .text("Sales")), ("hireDate", .text("1992-13-01")), ("reportsTo", .text("boss"))])
        } catch {
            caught = error
        }
        // Then both bad fields are named, and the record keeps every old value
        guard case let .invalid(fields) = caught else {
            Issue.record("expected a field error, got \(String(describing: caught))")
            return
        }
        #expect(Set(fields.map(\.field)) == ["hireDate", "reportsTo"])
        #expect(employee.title == nil)
    }

    @Test func emptyTextClearsAnOptionalField() throws {
        // Given a shipper with a phone number
        var shipper = Shipper(companyName: "Speedy Express", phone: "(503) 555-9831")
        // When the phone is set to nothing
        try shipper.set([("phone", .text(""))])
        // Then it is absent, not an empty string
        #expect(shipper.phone == nil)
    }
}
