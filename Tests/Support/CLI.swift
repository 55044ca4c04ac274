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
        /// Killed by a signal, as a trap (status 132, SIGILL) is, rather than exiting.
        var crashed = false
    }

    static func run(_ arguments: [String], program: String = "northwind", environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        guard let binary = binary(program) else {
            throw CLIError(description: "no \(program) binary beside the tests: build it first (swift build)")
        }
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        (process.standardOutput, process.standardError) = (out, err)
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self),
            crashed: process.terminationReason == .uncaughtSignal
        )
    }
}
