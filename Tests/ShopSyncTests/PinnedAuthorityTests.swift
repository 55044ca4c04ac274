import Foundation
import GRDB
import Northwind
import NorthwindStore
import SyncServer
import Synchronization
import Testing

@testable import NorthwindSync
@testable import NorthwindTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Caddy, as the appliance runs it: HTTPS with its own certificate authority (`tls internal`), `/ca.crt`, and
/// everything else proxied to the sync server. CI installs Debian's `caddy` and sets `NORTHWIND_E2E=require`.
enum CaddySupport {
    static let binary = ["/usr/bin/caddy", "/usr/local/bin/caddy"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let required = ProcessInfo.processInfo.environment["NORTHWIND_E2E"] == "require"
    static var enabled: Bool { binary != nil || required }
    static let skipMessage = "Caddy is not installed (apt-get install caddy); NORTHWIND_E2E=require makes this a failure"
}

/// Head office's sync server behind Caddy with a certificate authority of its own, reached by IP address as a
/// shop across town would: the certificate names northwind.local, not the address.
final class HeadOfficeBehindCaddy: Sendable {
    let directory: URL
    let port: Int
    let syncPort: Int
    private let caddy: Mutex<ChildProcess?>

    init(syncPort: Int, directory: URL) async throws {
        guard let binary = CaddySupport.binary else { throw CLIError(description: CaddySupport.skipMessage) }
        self.directory = directory
        self.syncPort = syncPort
        port = try Self.freePort()
        let httpPort = try Self.freePort()
        let caddyfile = directory.appendingPathComponent("Caddyfile")
        try """
        {
        \tadmin off
        \tskip_install_trust
        \tauto_https disable_redirects
        \tdefault_sni northwind.local
        \tstorage file_system \(directory.path)/caddy
        \thttp_port \(httpPort)
        \thttps_port \(port)
        }
        (app) {
        \thandle /ca.crt {
        \t\troot * \(directory.path)/caddy/pki/authorities/local
        \t\trewrite * /root.crt
        \t\tfile_server
        \t}
        \thandle {
        \t\treverse_proxy 127.0.0.1:\(syncPort) {
        \t\t\tflush_interval -1
        \t\t}
        \t}
        }
        northwind.local {
        \ttls internal
        \timport app
        }
        https:// {
        \ttls internal
        \timport app
        }
        """.write(to: caddyfile, atomically: true, encoding: .utf8)
        caddy = Mutex(try Self.launch(binary, in: directory))
        try await waitUntilServing()
    }

    deinit { stop() }

    var url: String { "https://127.0.0.1:\(port)/" }
    var rootCertificate: URL { directory.appendingPathComponent("caddy/pki/authorities/local/root.crt") }

    /// The root's SHA-256 fingerprint as `openssl x509 -fingerprint -sha256` prints it ("sha256 Fingerprint=AB:…"),
    /// as a person would copy it from a console.
    func fingerprint() async throws -> String {
        let result = try await ChildProcess.runOffPool(
            "/usr/bin/openssl",
            ["x509", "-noout", "-fingerprint", "-sha256", "-in", rootCertificate.path]
        )
        guard result.0.status == 0 else { throw CLIError(description: "openssl: \(result.2)") }
        return result.1.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops Caddy.
    func stop() {
        caddy.withLock { process in
            _ = process?.stop()
            process = nil
        }
    }

    /// Head office reinstalled: Caddy again, with a new certificate authority, at the same address.
    func restartWithNewAuthority() async throws {
        stop()
        try FileManager.default.removeItem(at: directory.appendingPathComponent("caddy"))
        guard let binary = CaddySupport.binary else { return }
        let process = try Self.launch(binary, in: directory)
        caddy.withLock { $0 = process }
        try await waitUntilServing()
    }

    /// `caddy run` on the Caddyfile in `directory`, keeping its data and configuration there.
    private static func launch(_ binary: String, in directory: URL) throws -> ChildProcess {
        let environment = ["HOME": directory.path, "XDG_DATA_HOME": directory.path, "XDG_CONFIG_HOME": directory.path]
        let caddyfile = directory.appendingPathComponent("Caddyfile").path
        return try ChildProcess(binary, ["run", "--config", caddyfile, "--adapter", "caddyfile"], environment: environment)
    }

    /// Until the root certificate exists and the port takes connections.
    private func waitUntilServing() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: rootCertificate.path), Self.accepts(port) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIError(description: "Caddy did not serve on \(port) within 30 s")
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CLIError(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

@Suite(
    "A head office with its own certificate authority",
    .serialized,
    .enabled(if: CaddySupport.enabled, Comment(rawValue: CaddySupport.skipMessage))
)
struct PinnedAuthorityTests {
    /// Head office with the demo data on a sync server, behind Caddy; a shop's store not made yet.
    static func headOffice() async throws -> (Company, HeadOfficeBehindCaddy) {
        let company = try Company()
        try await company.start(shops: [])
        let caddy = try await HeadOfficeBehindCaddy(syncPort: company.server.port, directory: company.directory)
        return (company, caddy)
    }

    static func membership(_ company: Company, _ store: String) throws -> SyncMembership? {
        guard FileManager.default.fileExists(atPath: company.store(store)) else { return nil }
        return try company.open(store).store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'membership'")
                .map { try JSONDecoder().decode(SyncMembership.self, from: Data($0.utf8)) }
        }
    }

    @Test func aShopJoinsByTheFingerprintOnHeadOfficesConsoleAndSyncs() async throws {
        // Given head office behind its own certificate authority, reached by IP address
        let (company, caddy) = try await Self.headOffice()
        // When a new shop joins with the authority's fingerprint as openssl prints it, then syncs
        let joined = try await CLI.run(
            [
                "sync", "join", caddy.url, try await company.token(role: .shop), "--fingerprint", try await caddy.fingerprint(), "--store",
                company.store("oxf"), "--empty",
            ]
        )
        let synced = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        // Then it joined, pinned the authority, and has head office's catalogue
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.stdout.contains("pinned"))
        #expect(synced.status == 0, "\(synced.stderr)")
        let pinned = try #require(try Self.membership(company, "oxf")?.authority)
        #expect(pinned.contains("BEGIN CERTIFICATE"))
        let products = try await company.open("oxf").store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM products") ?? 0 }
        #expect(products == 77)
    }

    @Test func aWrongFingerprintIsRefusedAndTheTokenIsNotSpent() async throws {
        // Given head office behind its own authority, and a token for a shop
        let (company, caddy) = try await Self.headOffice()
        let token = try await company.token(role: .shop)
        let right = try await caddy.fingerprint()
        // When a shop joins with a fingerprint one digit off (another machine's, or mistyped), then with the right one
        let last = right.last == "0" ? "1" : "0"
        let wrong = String(right.dropLast()) + last
        let refused = try await CLI.run(["sync", "join", caddy.url, token, "--fingerprint", wrong, "--store", company.store("oxf"), "--empty"])
        let unjoined = try Self.membership(company, "oxf")
        let joined = try await CLI.run(["sync", "join", caddy.url, token, "--fingerprint", right, "--store", company.store("oxf"), "--empty"])
        // Then the first is refused saying so, leaving the store unjoined; the same token then works
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("has the fingerprint"), "\(refused.stderr)")
        #expect(unjoined == nil)
        #expect(joined.status == 0, "\(joined.stderr)")
    }

    @Test func withoutAFingerprintAnUntrustedCertificateIsRefusedSayingHowToJoin() async throws {
        // Given head office behind its own authority, which this machine does not trust
        let (company, caddy) = try await Self.headOffice()
        // When a shop joins without the fingerprint
        let refused = try await CLI.run(["sync", "join", caddy.url, try await company.token(role: .shop), "--store", company.store("oxf"), "--empty"])
        // Then it is refused, told to give the fingerprint, and has not joined
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("does not trust"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--fingerprint"))
        #expect(try Self.membership(company, "oxf") == nil)
    }

    @Test func aJoinedShopRefusesAServerWithAnotherAuthorityAtTheSameAddress() async throws {
        // Given a shop joined by the fingerprint
        let (company, caddy) = try await Self.headOffice()
        let joined = try await CLI.run(
            [
                "sync", "join", caddy.url, try await company.token(role: .shop), "--fingerprint", try await caddy.fingerprint(), "--store",
                company.store("oxf"), "--empty",
            ]
        )
        try #require(joined.status == 0, "\(joined.stderr)")
        // When the machine at head office's address answers with certificates from another authority
        try await caddy.restartWithNewAuthority()
        let refused = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        // Then the shop sends nothing there and says the certificate is not from the authority it pinned
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("not signed by the certificate authority this store pinned"), "\(refused.stderr)")
    }
}

@Suite struct PublicAuthorityTests {
    @Test func anAuthorityThisMachineTrustsIsKnownAsPublicAndAFreshOneIsNot() async throws {
        // Given Debian's bundle of public authorities, and an authority made here a moment ago
        let bundle = "/etc/ssl/certs/ca-certificates.crt"
        try #require(FileManager.default.fileExists(atPath: bundle), "ca-certificates is not installed")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fresh-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = try await ChildProcess.runOffPool(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=Fresh CA", "-days", "1",
                "-keyout", folder.appendingPathComponent("key.pem").path, "-out", folder.appendingPathComponent("ca.pem").path,
            ]
        )
        try #require(made.termination.status == 0, "\(made.errors)")
        let fresh = try await ChildProcess.runOffPool(
            "/usr/bin/openssl",
            ["x509", "-noout", "-fingerprint", "-sha256", "-in", folder.appendingPathComponent("ca.pem").path]
        )
        let first = try await ChildProcess.runOffPool("/usr/bin/openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", bundle])
        // When this machine's public fingerprints are read
        let known = PinnedAuthority.publicFingerprints(bundle: bundle)
        // Then the bundle's first authority is among them (as openssl fingerprints it) and the fresh one is not
        #expect(known.count > 50)
        #expect(known.contains(try #require(CertificateFingerprint.normalised(first.output.trimmingCharacters(in: .whitespacesAndNewlines)))))
        #expect(!known.contains(try #require(CertificateFingerprint.normalised(fresh.output.trimmingCharacters(in: .whitespacesAndNewlines)))))
    }
}
