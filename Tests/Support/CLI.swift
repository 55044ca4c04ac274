import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import Testing

struct CLIError: Error, CustomStringConvertible {
    var description: String
}

/// Runs the real `northwind` (or `northwind-bench`) binary, as a person at a terminal would.
struct CLI {
    static func binary(_ name: String) -> URL? {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url = url.deletingLastPathComponent()
        }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
            url.appendingPathComponent(".build/debug/\(name)"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Killed by a signal (a trap is SIGILL) rather than exiting; `status` is then the signal.
        var crashed = false
    }

    /// Runs the program to its end on a thread of its own: Swift's concurrency pool has one thread per core (two
    /// here), and a test blocked on a child there starves every in-process server and timer of the run.
    static func run(_ arguments: [String], program: String = "northwind", environment: [String: String] = [:]) async throws -> Result {
        guard let binary = binary(program) else {
            throw CLIError(description: "no \(program) binary beside the tests: build it first (swift build)")
        }
        let (termination, stdout, stderr) = try await ChildProcess.runOffPool(binary.path, arguments, environment: environment)
        return Result(status: termination.status, stdout: stdout, stderr: stderr, crashed: termination.signalled)
    }
}
