import Foundation
import SyncProtocol
import Testing

/// The storage engines the protocol suite runs against. PostgreSQL joins when it is available; with
/// `NORTHWIND_POSTGRES=require` (as CI sets) it always joins, so a missing PostgreSQL fails instead of skipping.
enum SyncEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let all: [SyncEngine] = {
        if PostgresCluster.isAvailable || ProcessInfo.processInfo.environment["NORTHWIND_POSTGRES"] == "require" {
            return [.sqlite, .postgres]
        }
        print("◇ Sync tests on PostgreSQL skipped: set NORTHWIND_SYNC_POSTGRES_URL, or install postgresql (apt-get install postgresql)")
        return [.sqlite]
    }()

    /// Only PostgreSQL, for the tests about several instances.
    static let postgresOnly: [SyncEngine] = all.filter { $0 == .postgres }
}

/// One PostgreSQL for the test run: the cluster at `NORTHWIND_SYNC_POSTGRES_URL`, or a throwaway one started with
/// `scripts/postgres-cluster.sh` and stopped when the tests exit. Each test gets its own database.
actor PostgresCluster {
    static let shared = PostgresCluster()
    private var url: String?

    static var root: URL {
        var root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root = root.deletingLastPathComponent()
        }
        return root
    }

    static var isAvailable: Bool {
        if let url = ProcessInfo.processInfo.environment["NORTHWIND_SYNC_POSTGRES_URL"], !url.isEmpty { return true }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.contains { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb") }
    }

    /// A new, empty database's URL.
    func newDatabase() throws -> String {
        try Self.newDatabase(on: try serverURL())
    }

    private func serverURL() throws -> String {
        if let url { return url }
        if let given = ProcessInfo.processInfo.environment["NORTHWIND_SYNC_POSTGRES_URL"], !given.isEmpty {
            url = given
            return given
        }
        let output = try Self.run(Self.root.appendingPathComponent("scripts/postgres-cluster.sh").path, ["start", "--fast"])
        let parts = output.split(separator: " ").map(String.init)
        guard parts.count == 2 else { throw SyncError(.internalError, "postgres-cluster.sh said: \(output)") }
        Self.started = parts[1]
        atexit {
            if let directory = PostgresCluster.started {
                _ = try? PostgresCluster.run(PostgresCluster.root.appendingPathComponent("scripts/postgres-cluster.sh").path, ["stop", directory])
            }
        }
        url = parts[0]
        return parts[0]
    }

    /// A cluster of one's own, durable (fsync on), for a test that restarts PostgreSQL: the shared one has fsync off,
    /// which a crash-restart could make lose acknowledged commits, and other tests use it meanwhile.
    static func startPrivate() throws -> (url: String, directory: String) {
        let output = try run(script, ["start"])
        let parts = output.split(separator: " ").map(String.init)
        guard parts.count == 2 else { throw SyncError(.internalError, "postgres-cluster.sh said: \(output)") }
        return (parts[0], parts[1])
    }

    /// Stops a cluster at once, as a crash would, and starts it again.
    static func restart(_ directory: String) throws { try run(script, ["restart", directory]) }

    static func stop(_ directory: String) { _ = try? run(script, ["stop", directory]) }

    /// A new, empty database's URL on the server at `server`.
    static func newDatabase(on server: String) throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try run("/usr/bin/env", ["psql", server, "-qc", "CREATE DATABASE \(name)"])
        guard var parts = URLComponents(string: server) else { throw SyncError(.internalError, "bad URL \(server)") }
        parts.path = "/" + name
        return parts.string!
    }

    static var script: String { root.appendingPathComponent("scripts/postgres-cluster.sh").path }

    /// The throwaway cluster's folder, to stop it at exit.
    nonisolated(unsafe) static var started: String?

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let (termination, output, _) = try ChildProcess.run(executable, arguments, mergingErrors: true)
        let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard termination == .init(status: 0, signalled: false) else {
            throw SyncError(.internalError, "\(executable) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }
}
