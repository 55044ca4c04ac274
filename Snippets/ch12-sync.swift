// Chapter 12: what a shop sends to the sync server: its changes as typed records, in one batch with a stable id.
import Foundation
@_spi(SyncEngine) import Northwind
import NorthwindLoading
import NorthwindStore
import SyncProtocol

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path), seedIfCreated: false)

// guide: begin outbox
// A new shop's first goods, then it joins its company (here without a server: `northwind sync join` asks one).
let drinks = try await backoffice.records.create(Category(name: "Drinks"))
var chai = try await backoffice.catalogue.create(Product(name: "Chai", categoryID: drinks.id, unitPrice: Money(cents: 1800)))
let membership = SyncMembership(server: "http://127.0.0.1:8444", container: "acme", siteCode: "OXF", role: "hq", credential: "nws_…")
try await backoffice.syncEngine.join(membership, containerHasData: false)
// Then a price changes: one transaction, so one batch.
chai.unitPrice = Money(cents: 1950)
chai = try await backoffice.catalogue.update(chai)
print("Changes waiting: \(try await backoffice.sync.pendingChanges())")
// Each batch is one transaction: its changes arrive together or not at all. The server answers each record; here
// we answer "saved" for it, so that the next batch comes.
var batches: [OutboxBatch] = []
while let batch = try await backoffice.syncEngine.nextOutboxBatch() {
    print("Batch \(batch.batchID):")
    for operation in batch.operations {
        let record = operation.record
        let fields = record.fields.keys.sorted().joined(separator: ", ")
        print("  \(operation.kind) \(record.zoneID.zoneName)/\(record.recordType) \(record.recordName.prefix(8))…: \(fields)")
    }
    _ = try await backoffice.syncEngine.acknowledge(batch, outcomes: batch.operations.map { .saved($0.record) })
    batches.append(batch)
}
// guide: end outbox
precondition(batches.map(\.operations.count) == [1, 1], "the product's two changes travel as one record")
precondition(batches[1].operations[0].record.fields["unitPriceCents"] == .int64(1950), "as the row is now")
precondition(batches[1].operations[0].record.fields["unitsInStock"] == nil, "stock stays at its location")
let waiting = try await backoffice.sync.pendingChanges()
precondition(waiting == 0, "everything was answered")
