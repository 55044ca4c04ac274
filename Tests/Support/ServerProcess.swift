import Foundation

/// A `northwind-sync-server` process on loopback, and the port it reported listening on.
final class ServerProcess: Sendable {
    let process: Process
    let port: Int

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ServerProcess {
        guard let binary = CLI.binary("northwind-sync-server") else {
            throw CLIError(description: "no northwind-sync-server binary beside the tests: build it first (swift build)")
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Hummingbird logs "Server started and listening on 127.0.0.1:PORT".
        var seen = ""
        while !seen.contains("listening on") || !seen.hasSuffix("\n") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { throw CLIError(description: "the sync server stopped before listening: \(seen)") }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        guard let match = seen.firstMatch(of: /listening on [0-9.]+:([0-9]+)/), let port = Int(match.1) else {
            throw CLIError(description: "no port in the server's log: \(seen)")
        }
        drain(errors.fileHandleForReading)
        return ServerProcess(process: process, port: port)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Kills the server as a power cut would: no chance to finish or clean up.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// Reads a child's output until it ends, on a thread of its own, so that the child never blocks on a full pipe. (A
/// `readabilityHandler` left in place when the handle goes away leaves libdispatch watching a closed descriptor,
/// which crashed the test process once.)
func drain(_ handle: FileHandle) {
    Thread.detachNewThread {
        while !handle.availableData.isEmpty {}
    }
}
