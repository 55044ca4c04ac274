// Chapter 7: the change feed tells a subscriber what a commit changed, whoever made it.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))

// guide: begin change-feed
let feed = try ChangeFeed(store: backoffice.store)
let changes = feed.subscribe()
let listener = Task { () -> ChangeBatch? in
    for await batch in changes { return batch }
    return nil
}
_ = try await backoffice.stock.receive(productID: 17, quantity: 12, note: "Delivery 4711")
let batch = await listener.value
print("Changed: \(batch?.tables.joined(separator: ", ") ?? "nothing")")
// guide: end change-feed
feed.close()
precondition(batch?.tables.contains("products") == true && batch?.tables.contains("stock_movements") == true, "both tables the receipt wrote")
