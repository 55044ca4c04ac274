import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `northwind-sync-server` process on loopback, and the port it reported listening on.
final class ServerProcess: Sendable {
    let process: ChildProcess
    let port: Int

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ServerProcess {
        guard let binary = CLI.binary("northwind-sync-server") else {
            throw CLIError(description: "no northwind-sync-server binary beside the tests: build it first (swift build)")
        }
        let process = try ChildProcess(binary.path, arguments, environment: environment, errors: .pipe)
        let errors = process.errors!
        // Hummingbird logs "Server started and listening on 127.0.0.1:PORT".
        let seen = process.read(errors, until: { $0.contains("listening on") && $0.hasSuffix("\n") }, within: .seconds(60))
        guard seen.contains("listening on") else { throw CLIError(description: "the sync server stopped before listening: \(seen)") }
        guard let match = seen.firstMatch(of: /listening on [0-9.]+:([0-9]+)/), let port = Int(match.1) else {
            throw CLIError(description: "no port in the server's log: \(seen)")
        }
        drain(errors)
        return ServerProcess(process: process, port: port)
    }

    /// Asks the server to stop (SIGTERM) and waits for it. One that is still running 20 s later is a failed test,
    /// and is killed, so that a server stuck in its shutdown never hangs the suite.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        process.signal(SIGTERM)
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning {
            Issue.record("the sync server (pid \(process.pid)) was still running 20 s after SIGTERM", sourceLocation: sourceLocation)
            kill()
        }
    }

    /// Kills the server as a power cut would: no chance to finish or clean up.
    func kill() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}
