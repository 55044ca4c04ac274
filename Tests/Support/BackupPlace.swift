import Foundation
import Northwind
import NorthwindStore

/// A temporary folder for backups and the stores restored from them, removed when the value goes away.
final class BackupPlace: Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-backups-\(UUID().uuidString)")
    var folder: BackupFolder { BackupFolder(url: directory.appendingPathComponent("backups")) }
    /// A store path in this folder that nothing has opened.
    func fresh(_ name: String = "restored") -> StoreFiles { StoreFiles(path: directory.appendingPathComponent("\(name)/northwind.sqlite").path) }
    init() {}
    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// Bytes that do not compress, larger than the 100 KiB that sends a picture to a file of its own.
func largePicture(seed: UInt64, size: Int = 150_000) -> BinaryContent {
    var random = SplitMix64(seed: seed)
    return BinaryContent(bytes: Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }), contentType: "image/png")
}
