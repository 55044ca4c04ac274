// Chapter 4: two employees ship the same product at once. First the race, then the transaction that prevents it.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))
let coffee = try await backoffice.stock.adjust(productID: 17, countedQuantity: 10, note: "Stock take")

// guide: begin race
// The race: each employee reads the stock, checks it, then writes what is left. Both read 10.
let anna = try backoffice.catalogue.product(id: coffee.id!).product.unitsInStock
let ben = try backoffice.catalogue.product(id: coffee.id!).product.unitsInStock
if anna >= 8 { _ = try await backoffice.stock.adjust(productID: coffee.id!, countedQuantity: anna - 8, note: "Anna ships 8") }
if ben >= 8 { _ = try await backoffice.stock.adjust(productID: coffee.id!, countedQuantity: ben - 8, note: "Ben ships 8") }
print("Shipped 16 of 10; the shelf says \(try backoffice.catalogue.product(id: coffee.id!).product.unitsInStock)")
// guide: end race
let afterRace = try backoffice.catalogue.product(id: coffee.id!).product.unitsInStock
precondition(afterRace == 2, "the second write overwrote the first: a lost update")

_ = try await backoffice.stock.adjust(productID: coffee.id!, countedQuantity: 10, note: "Stock take again")
let customer = try await backoffice.records.list(Customer.self, limit: 1).items[0].code

// guide: begin no-race
// The fix: each order is checked and booked out in one transaction, and SQLite runs one write transaction at a time.
func order() async throws -> String {
    let draft = OrderDraft(customerCode: customer, employeeID: nil, lines: [OrderLineDraft(productID: coffee.id!, quantity: 8)])
    return try await backoffice.orders.create(draft).order.number
}
let (first, second) = (try await order(), try await order())
let annaShips = Task { try await backoffice.orders.execute(number: first) }
let benShips = Task { try await backoffice.orders.execute(number: second) }
var refused: [any Error] = []
for shipping in [annaShips, benShips] {
    if case .failure(let error) = await shipping.result { refused.append(error) }
}
print("\(2 - refused.count) order shipped, \(refused.count) refused:")
for error in refused { print("  \(error)") }
print("The shelf says \(try backoffice.catalogue.product(id: coffee.id!).product.unitsInStock)")
// guide: end no-race
let afterFix = try backoffice.catalogue.product(id: coffee.id!).product.unitsInStock
precondition(afterFix == 2 && refused.count == 1, "one order shipped, the other was refused")
