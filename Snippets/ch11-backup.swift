// Chapter 11: back up a store while it works, restore it somewhere else, and find everything, pictures included.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("shop/northwind.sqlite").path))
let photo = BinaryContent(bytes: Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }), contentType: "image/jpeg")
try await backoffice.people.setPhoto(employeeID: 1, photo)

// guide: begin backup-restore
let backups = BackupFolder(url: folder.appendingPathComponent("backups"))
// Orders go on while the backup runs: it reads one snapshot, and a reader never blocks the writer.
let backingUp = Task { try await backoffice.backups.create(in: backups, kind: .manual) }
for _ in 0..<20 { _ = try await backoffice.stock.receive(productID: 17, quantity: 1) }
let backup = try await backingUp.value
guard let manifest = backup.manifest else { fatalError(backup.problem ?? "unreadable") }
print("\(backup.sizeText), \(manifest.entries.count) entries, \(manifest.counts["orders"] ?? 0) orders, checked: \(backup.check != nil)")

// A new machine: restore into a folder where no store is yet.
let target = StoreFiles(path: folder.appendingPathComponent("new-machine/northwind.sqlite").path)
for line in try await Restore.plan(backup.file, over: target).lines { print(line) }
_ = try await Restore.perform(backup.file, over: target, folder: backups, force: false)
let restored = Backoffice(store: try Store(StoreConfiguration(path: target.path)))
// guide: end backup-restore
let back = try await restored.people.photo(employeeID: 1)
print("The photo came back: \(back == photo)")
precondition(back == photo, "the external picture is restored byte for byte")
let count = try await restored.records.list(Customer.self, limit: 1).total
precondition(count == manifest.counts["customers"], "every customer is back")
