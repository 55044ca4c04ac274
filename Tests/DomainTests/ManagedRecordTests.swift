import Foundation
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Categories, suppliers, customers, employees and shippers")
struct ManagedRecordTests {
    @Test func createListShowUpdateDelete() async throws {
        let store = try TemporaryStore()
        let b = store.backoffice
        let created = try await b.records.create(Shipper(companyName: "  United Package ", phone: "(503) 555-3199"))
        #expect(created.companyName == "United Package")
        #expect(try await b.records.list(Shipper.self).items.map(\.companyName) == ["United Package"])
        var edited = try b.records.find(Shipper.self, id: try #require(created.id))
        edited.phone = "  "
        let saved = try await b.records.update(edited)
        #expect(saved.phone == nil)
        #expect(saved.version == 2)
        try await b.records.delete(Shipper.self, id: try #require(created.id))
        #expect(try await b.records.list(Shipper.self).total == 0)
        #expect(
            await northwindError { _ = try b.records.find(Shipper.self, id: try #require(created.id)) }
                == .notFound(entity: "shipper", key: "#\(created.id ?? 0)")
        )
    }

    @Test func deletingSomethingStillInUseIsRefusedInWords() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        #expect(
            await northwindError { try await b.records.delete(Category.self, id: try #require(w.beverages.id)) }
                == .inUse("Category 'Beverages' is still used by 3 products; reassign or delete those first.")
        )
        #expect(
            await northwindError { try await b.records.delete(Employee.self, id: try #require(w.andrew.id)) }
                == .inUse("Employee 'Andrew Fuller' is still used by 1 direct report; reassign or delete those first.")
        )
        _ = try await b.orders.create(OrderDraft(customerCode: "vinet", employeeID: w.nancy.id, lines: [.init(productID: w.chai.key, quantity: 1)]))
        #expect(
            await northwindError { try await b.records.delete(Customer.self, id: try #require(w.vinet.id)) }
                == .inUse("Customer 'Vins et alcools Chevalier' is still used by 1 order; reassign or delete those first.")
        )
        #expect(try await b.records.list(Category.self).total == 2)
    }

    @Test func validationNamesEachField() async throws {
        let store = try TemporaryStore()
        let b = store.backoffice
        #expect(
            await northwindError { _ = try await b.records.create(Customer(code: "no spaces!", companyName: "")) }
                == .invalid([.init("code", "must be 1 to 10 letters or digits, e.g. VINET"), .init("companyName", "is required")])
        )
        var employee = Employee(firstName: "A", lastName: "B")
        employee.birthDate = LocalDate("1990-01-01")
        employee.hireDate = LocalDate("1980-01-01")
        #expect(await northwindError { _ = try await b.records.create(employee) } == .invalid([.init("hireDate", "must be after the birth date")]))
        _ = try await b.records.create(Category(name: "Produce"))
        let duplicate = await northwindError { _ = try await b.records.create(Category(name: "produce")) }
        guard case .invalid(let errors) = duplicate else {
            Issue.record("expected a validation error")
            return
        }
        #expect(errors == [.init("name", "is already used by another record")])
    }

    @Test func aStaleUpdateIsRefused() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        var first = w.vinet
        first.city = "Paris"
        _ = try await store.backoffice.records.update(first)
        var second = w.vinet
        second.phone = "26.47.15.10"
        let error = await northwindError { _ = try await store.backoffice.records.update(second) }
        guard case .conflict(let message) = error else {
            Issue.record("expected a conflict")
            return
        }
        #expect(message.contains("city is now Paris"))
        #expect(try store.backoffice.people.customer(code: "VINET").phone == nil)
    }

    @Test func customersAreFoundByCodeWhateverTheCase() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        #expect(try store.backoffice.people.customer(code: " vinet ").id == w.vinet.id)
        #expect(await northwindError { _ = try store.backoffice.people.customer(code: "NOONE") } == .notFound(entity: "customer", key: "'NOONE'"))
    }
}
