import Foundation
import GRDB

@testable import NorthwindStore

/// A store file as an older release left it: migrated only up to `migration`, then filled by `fill`, in a fresh
/// temporary folder removed when the value goes away. Opening `path` with `Store` runs the later migrations.
final class OldStoreFile: Sendable {
    let directory: URL
    var path: String { directory.appendingPathComponent("old.sqlite").path }

    init(upTo migration: String, _ fill: (Database) throws -> Void) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.prepareDatabase { db in ReportFunctions.register(db) }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try Schema.migrator.migrate(queue, upTo: migration)
        try queue.write(fill)
        try queue.close()
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}
