import Foundation
import NorthwindLoading
import NorthwindStore
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The real `northwind serve`, started as a newcomer would on a fresh store: it seeds demo data and prints the
/// one-time demo sign-ins, which the tests then use.
final class LiveServer: Sendable {
    struct SignIn: Sendable {
        var login: String
        var password: String
    }

    let process: ChildProcess
    let directory: URL
    let storePath: String
    let base: String
    let manager: SignIn
    let rep: SignIn
    /// Everything the server printed so far, its log included.
    private let printed = Printed()

    private final class Printed: Sendable {
        let text = Mutex("")
    }

    /// `environment` adds to the test's own; the server's log goes to the same pipe as what it prints.
    init(environment: [String: String] = [:]) async throws {
        guard let binary = CLI.binary("northwind") else {
            throw CLIError(description: "no northwind binary beside the tests: build it first (swift build)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storePath = directory.appendingPathComponent("shop.sqlite").path
        let process = try ChildProcess(
            binary.path,
            ["serve", "--store", storePath, "--port", "0"],
            environment: environment,
            output: .pipe,
            errors: .toOutput
        )
        let printed = self.printed
        let output = process.output!
        // Read on a thread of its own until the server's output ends, so that it never blocks on a full pipe.
        Thread.detachNewThread {
            while case let data = output.availableData, !data.isEmpty {
                printed.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }
        self.process = process

        let signIn = /Demo sign-in \(shown once\): login (\S+), password (\S+) — [^,]+, (.+)/
        var lines: [Substring] = []
        try await waitFor("the server to print its address and two demo sign-ins", timeout: .seconds(120)) {
            lines = printed.text.withLock { $0 }.split(separator: "\n")
            return lines.count(where: { $0.firstMatch(of: signIn) != nil }) >= 2 || !process.isRunning
        }
        guard let address = lines.lazy.compactMap({ $0.firstMatch(of: /Northwind is serving .* at (http:\/\/\S+)\//)?.1 }).first else {
            throw CLIError(description: "serve printed no address: \(lines)")
        }
        base = String(address)
        let credentials = lines.compactMap { $0.firstMatch(of: signIn) }
        guard let manager = credentials.first(where: { AccessPolicy.defaultManagerTitles.contains(String($0.3)) }),
            let rep = credentials.first(where: { !AccessPolicy.defaultManagerTitles.contains(String($0.3)) })
        else {
            throw CLIError(description: "serve printed no demo sign-in for a manager and a representative: \(lines)")
        }
        self.manager = SignIn(login: String(manager.1), password: String(manager.2))
        self.rep = SignIn(login: String(rep.1), password: String(rep.2))
    }

    /// Another handle on the store, as the CLI in another process would have: for facts and for outside changes.
    func backoffice() throws -> Backoffice {
        try Backoffice.open(StoreConfiguration(path: storePath), seedIfCreated: false)
    }

    func url(_ path: String) -> String { base + path }

    /// What the server printed and logged so far.
    var log: String { printed.text.withLock { $0 } }

    /// Stops the server as an operator would (SIGTERM, a graceful stop), and kills it if it has not gone in 10 s.
    func stop() async {
        process.signal(SIGTERM)
        if await process.exit(within: .seconds(10)) == nil {
            process.signal(SIGKILL)
            await process.exit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A live server and chromedriver for one test, stopped however the test ends.
func withLiveBrowser(environment: [String: String] = [:], _ body: (LiveServer, ChromeDriver) async throws -> Void) async throws {
    let server = try await LiveServer(environment: environment)
    let driver: ChromeDriver
    do {
        driver = try await ChromeDriver()
    } catch {
        await server.stop()
        throw error
    }
    do {
        try await body(server, driver)
    } catch {
        await driver.stop()
        await server.stop()
        throw error
    }
    await driver.stop()
    await server.stop()
}

extension Browser {
    /// Signs in through the form and lands on `next`.
    func signIn(_ server: LiveServer, as who: LiveServer.SignIn, next: String = "/") async throws {
        try await go(server.url("/signin?next=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")))
        try await find("#login").replace(with: who.login)
        try await find("#password").type(who.password)
        try await find("form[action='/signin'] button[type=submit]").click()
        try await waitFor("sign-in to land on \(next)") { try await url == server.url(next) }
    }
}
