import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind

/// A store in a fresh temporary folder, removed when the value goes away.
final class TemporaryStore: Sendable {
    let directory: URL
    let backoffice: Backoffice

    var path: String { backoffice.store.configuration.path }
    var store: Store { backoffice.store }

    init(threshold: Int = 100 * 1024, seed: DemoData.Options? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-tests-\(UUID().uuidString)")
        let configuration = StoreConfiguration(
            path: directory.appendingPathComponent("store.sqlite").path,
            externalStorageThreshold: threshold,
            orphanGracePeriod: 0
        )
        backoffice = try Backoffice.open(configuration, seedIfCreated: false)
        if let seed { try DemoData.seed(into: backoffice.store, options: seed) }
    }

    /// Another handle on the same file, as a second process would have.
    func reopen(threshold: Int = 100 * 1024, gracePeriod: TimeInterval = 0) throws -> Backoffice {
        try Backoffice.open(StoreConfiguration(path: path, externalStorageThreshold: threshold, orphanGracePeriod: gracePeriod), seedIfCreated: false)
    }

    func count(_ sql: String, _ arguments: StatementArguments = []) throws -> Int {
        try store.pool.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// The error a throwing call raised, for asserting on its kind and message.
func northwindError(_ body: () async throws -> Void) async -> NorthwindError? {
    do {
        try await body()
        return nil
    } catch let error as NorthwindError {
        return error
    } catch {
        Issue.record("Expected a NorthwindError, got \(error)")
        return nil
    }
}

extension TemporaryStore {
    /// Writes with a connection of its own, as an older Northwind or an editor of the file would: past the write gate,
    /// which lives on the store's writer connection. For tests of what the store must survive reading.
    func writePastTheGate(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        var configuration = Configuration()
        // The store's triggers call its SQL functions; the gate's function is the one thing this connection lacks.
        configuration.prepareDatabase { db in ReportFunctions.register(db) }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try await queue.write(body)
        try queue.close()
    }
}
