import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Northwind
import Synchronization

/// A head office with a certificate authority of its own (a Northwind appliance: Caddy's `tls internal`), which no
/// shop trusts out of the box. The shop is given that authority's SHA-256 fingerprint, read off head office's console;
/// it fetches the root from `/ca.crt`, keeps it only if the fingerprint matches, and from then on trusts that root
/// alone for its sync server. The host name is not checked against the certificate: only head office holds that
/// authority's key, and a shop often reaches it by an address (an IP, a VPN name) its certificate does not list.
enum PinnedAuthority {
    static func fingerprint(ofDER der: [UInt8]) -> String {
        SHA256.hash(data: der).map { String(format: "%02x", $0) }.joined()
    }

    /// Fetches the root at `server`'s `/ca.crt`, trusting nothing (the fingerprint is the trust), and returns it as
    /// PEM when its SHA-256 fingerprint is `fingerprint`.
    static func fetch(from server: URL, fingerprint: String) async throws(ShopSyncError) -> String {
        guard let expected = CertificateFingerprint.normalised(fingerprint) else {
            throw ShopSyncError(.untrusted, CertificateFingerprint.problem(fingerprint))
        }
        guard server.scheme == "https", var address = URLComponents(url: server, resolvingAgainstBaseURL: false) else {
            throw ShopSyncError(
                .untrusted,
                "A certificate fingerprint is for an https:// address; \(server.absoluteString) is not one. Give head office's https:// address."
            )
        }
        address.path = "/ca.crt"
        address.query = nil
        address.fragment = nil
        guard let url = address.url else { throw ShopSyncError(.notJoined, "\(server.absoluteString) is not a server address.") }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(tlsConfiguration: tls, timeout: .init(connect: .seconds(10), read: .seconds(10)))
        )
        let der: [UInt8]
        do {
            der = try await Self.download(url, with: client)
            try? await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw ShopSyncError(
                .offline,
                "Cannot fetch head office's certificate authority from \(url.absoluteString): \(error). Check that head "
                    + "office is running and that the address is right: a Northwind appliance serves its authority there."
            )
        }
        let found = Self.fingerprint(ofDER: der)
        guard found == expected else {
            throw ShopSyncError(
                .untrusted,
                "The certificate authority at \(url.absoluteString) has the fingerprint \(CertificateFingerprint.display(found)), not the "
                    + "\(CertificateFingerprint.display(expected)) given: this is not the head office whose console you read, or the fingerprint "
                    + "was mistyped. Nothing was changed and the token is not spent."
            )
        }
        // Trusted alone and without the name checked, a public authority would accept anyone's certificate from it.
        if Self.publicFingerprints().contains(found) {
            throw ShopSyncError(
                .untrusted,
                "The fingerprint \(CertificateFingerprint.display(found)) is a public certificate authority's, which issues "
                    + "certificates to anyone: this machine trusts head office's certificate already, so leave the fingerprint empty."
            )
        }
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// The SHA-256 fingerprints of the authorities this machine trusts (Debian's ca-certificates bundle).
    static func publicFingerprints(bundle: String = "/etc/ssl/certs/ca-certificates.crt") -> Set<String> {
        guard let roots = try? NIOSSLCertificate.fromPEMFile(bundle) else { return [] }
        return Set(roots.compactMap { try? fingerprint(ofDER: $0.toDERBytes()) })
    }

    /// The certificate's DER bytes, from a PEM or DER answer.
    private static func download(_ url: URL, with client: HTTPClient) async throws -> [UInt8] {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(10))
        guard response.status == .ok else { throw ShopSyncError(.offline, "it answered \(response.status.code)") }
        let body = Array(buffer: try await response.body.collect(upTo: 64 * 1024))
        if let pem = try? NIOSSLCertificate.fromPEMBytes(body).first { return try pem.toDERBytes() }
        return try NIOSSLCertificate(bytes: body, format: .der).toDERBytes()
    }

    /// One HTTP client per pinned root, kept for the life of the process (a sync client is made per sync).
    private static let clients = Mutex<[String: HTTPClient]>([:])

    /// The client that trusts `pem` alone.
    static func client(trusting pem: String) throws(ShopSyncError) -> HTTPClient {
        if let client = clients.withLock({ $0[pem] }) { return client }
        let roots: [NIOSSLCertificate]
        do {
            roots = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            if roots.isEmpty { throw ShopSyncError(.notJoined, "no certificate in it") }
        } catch {
            throw ShopSyncError(
                .notJoined,
                "The certificate authority this store pinned when it joined is damaged (\(error)); join again with "
                    + "`northwind sync join URL TOKEN --again --fingerprint FP`."
            )
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(roots)
        tls.certificateVerification = .noHostnameVerification
        // Sync's client's settings (its read timeout ends a stream whose server has gone), with this trust.
        var configuration = SyncClient.configuration()
        configuration.tlsConfiguration = tls
        configuration.timeout.connect = .seconds(10)
        let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let kept = clients.withLock { clients in
            if let existing = clients[pem] { return existing }
            clients[pem] = made
            return made
        }
        if kept !== made { try? made.syncShutdown() }
        return kept
    }
}
