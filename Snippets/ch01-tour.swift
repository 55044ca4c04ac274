// Chapter 1: open a store the way every part of Northwind does, and look around.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }

// guide: begin tour-open
// A new file: the store creates its tables, then fills them with the demo company.
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))
let products = try await backoffice.catalogue.list()
let customers = try await backoffice.records.list(Customer.self, limit: 1)
let orders = try await backoffice.orders.list()
print("\(products.total) products, \(customers.total) customers, \(orders.total) orders")
// guide: end tour-open

precondition(products.total == 77 && customers.total > 0 && orders.total > 0, "the demo company is there")
