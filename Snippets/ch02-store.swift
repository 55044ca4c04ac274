// Chapter 2: a record is a Swift value; the store's schema comes from migrations; the SQL log shows what ran.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("northwind.sqlite").path

// guide: begin store-record
// An empty store: opening it runs every migration, and nothing else.
let backoffice = try Backoffice.open(StoreConfiguration(path: path), seedIfCreated: false)
let beverages = try await backoffice.records.create(Category(name: "Beverages", description: "Soft drinks, coffees, teas, beers and ales"))
var chai = Product(name: "Chai", categoryID: beverages.id, quantityPerUnit: "10 boxes x 20 bags", unitPrice: Money(cents: 1800))
chai = try await backoffice.catalogue.create(chai)
// A record is a Codable value: what the store holds, and what JSON carries.
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
print(String(decoding: try encoder.encode(chai), as: UTF8.self))
// guide: end store-record

precondition(chai.id != nil && chai.version == 1 && chai.unitPrice == Money(cents: 1800), "the product was saved as given")
let again = try backoffice.catalogue.product(id: chai.id!).product
precondition(again == chai, "what comes back is what went in")
print("Read back equal: \(again == chai)")
