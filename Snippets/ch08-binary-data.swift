// Chapter 8: a large picture goes to a file beside the store; a small one stays in its row; orphans are swept.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("northwind.sqlite").path
let backoffice = try Backoffice.open(StoreConfiguration(path: path))
let files = backoffice.store.binaries.directory
func count() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: files.path)) ?? []).count }
func picture(_ size: Int) -> BinaryContent {
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    return BinaryContent(bytes: Data(png + (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7919) }), contentType: "image/png")
}

// guide: begin external-storage
try await backoffice.catalogue.setPicture(categoryID: 1, picture(150_000))
print("A 150 KB picture: \(count()) file beside the store")
try await backoffice.catalogue.setPicture(categoryID: 1, picture(20_000))
print("Replaced by a 20 KB one: \(count()) files; it lives in its row")
// guide: end external-storage
precondition(count() == 0, "the replaced file went after the commit")
let stored = try await backoffice.catalogue.picture(categoryID: 1)
precondition(stored == picture(20_000), "the picture reads back byte for byte")

// guide: begin orphan-sweep-demo
// A crash between writing a file and committing leaves a file no row names. The next open sweeps it.
try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
try Data(count: 200_000).write(to: files.appendingPathComponent(UUID().uuidString))
try backoffice.store.close()
_ = try Store(StoreConfiguration(path: path, orphanGracePeriod: 0))
print("After reopening: \(count()) files")
// guide: end orphan-sweep-demo
precondition(count() == 0, "the orphan was swept")
