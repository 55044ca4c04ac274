// Chapter 3: create, read, update and delete through the domain layer; a mistake gets an error a person can act on.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))

// guide: begin crud-customer
var customer = try await backoffice.records.create(Customer(code: "bolid", companyName: "Bólido Comidas preparadas"))
print("Created \(customer.code): \(customer.companyName), version \(customer.version)")
customer.city = "Madrid"
customer = try await backoffice.records.update(customer)
print("Updated: \(customer.city ?? ""), version \(customer.version)")
// guide: end crud-customer
precondition(customer.code == "BOLID" && customer.version == 2, "codes are upper case; each save counts")

// guide: begin crud-errors
// Two mistakes at once: both are named, and nothing is saved.
var product = try backoffice.catalogue.product(id: 17).product
let before = product
product.name = " "
product.unitPrice = Money(cents: -300)
do {
    _ = try await backoffice.catalogue.update(product)
} catch {
    // `error` is a NorthwindError: the compiler knows, because the method says `throws(NorthwindError)`.
    switch error {
    case .invalid(let fields): for field in fields { print("\(field.field): \(field.message)") }
    default: print(error)
    }
}
// guide: end crud-errors
let unchanged = try backoffice.catalogue.product(id: 17).product
precondition(unchanged == before, "a failed save changes nothing")

// guide: begin crud-stale
// Two people edit the same product: the second save is refused, not lost.
var mine = try backoffice.catalogue.product(id: 17).product
var theirs = mine
theirs.unitPrice = Money(cents: 2000)
_ = try await backoffice.catalogue.update(theirs)
mine.reorderLevel = 25
do {
    _ = try await backoffice.catalogue.update(mine)
} catch {
    print(error)
}
// guide: end crud-stale
let after = try backoffice.catalogue.product(id: 17).product
precondition(after.unitPrice == Money(cents: 2000) && after.reorderLevel == before.reorderLevel, "the first save stands, the stale one is refused")
