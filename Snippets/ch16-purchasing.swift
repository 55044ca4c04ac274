// Chapter 16: a buyer orders what the proposal says from two suppliers' offers at two costs, receives in parts,
// sends one delivery twice, and takes a receipt back. Units on order and the average cost follow every step, kept
// by the store and the ledger, not typed by anyone.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))
let purchasing = backoffice.purchasing

// guide: begin buy
let proposal = try await purchasing.proposal()
let (supplier, wanted) = (proposal[0], proposal[0].lines[0])
print("Proposed: \(wanted.quantity) of \(wanted.productName) from \(supplier.supplierName)")
func show(_ step: String, _ order: PurchaseOrderDetail? = nil) throws {
    let product = try backoffice.catalogue.product(id: wanted.productID).product
    let cost = order?.receipts.last?.movement.averageCost.map { ", average cost \($0)" } ?? ""
    print("\(step): in stock \(product.unitsInStock), on order \(product.unitsOnOrder)\(cost)")
}
try show("Before")

func send(_ quantity: Int, at cost: String) async throws -> String {
    let line = PurchaseLineDraft(productID: wanted.productID, quantity: quantity, unitCost: Money(parsing: cost))
    let draft = try await purchasing.create(PurchaseOrderDraft(supplierID: supplier.supplierID, lines: [line]))
    return try await purchasing.send(number: draft.order.number).order.number
}
let cheap = try await send(20, at: "4.00")
let dear = try await send(10, at: "7.00")
try show("Sent 20 at 4.00 and 10 at 7.00")

func receive(_ number: String, _ quantity: Int, key: String) async throws -> PurchaseOrderDetail {
    try await purchasing.receive(number: number, lines: [ReceiptLine(productID: wanted.productID, quantity: quantity)], requestKey: key)
}
try show("Received 20 at 4.00", try await receive(cheap, 20, key: "delivery-1"))
try show("The same delivery sent again", try await receive(cheap, 20, key: "delivery-1"))
let last = try await receive(dear, 10, key: "delivery-2")
try show("Received 10 at 7.00", last)
let back = try await purchasing.reverse(receiptID: last.receipts[0].movement.id!, note: "Wrong pallet")
try show("Took those 10 back", back)
print("\(back.order.number) is \(back.order.status.words) and awaits \(back.outstanding) again")
// guide: end buy
precondition(back.outstanding == 10 && back.receipts.count == 2, "one receipt and its reversal")
