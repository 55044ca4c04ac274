import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback between an installation and the sync server. It can cut the link, as a dead network
/// would: while cut, it takes each new connection and closes it at once. Its own port never changes, so a test never
/// races other tests for a server's port.
final class FaultProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var upstream = 0
        var cut = false
        var closed = false
    }

    init(upstreamPort: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CLIError(description: "the proxy has no socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0 && listen(fd, 64) == 0
            }
        }
        guard listening else {
            Glibc.close(fd)
            throw CLIError(description: "the proxy could not listen on loopback")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        state.withLock { $0.upstream = upstreamPort }
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    deinit { close() }

    /// Cuts the link (new connections are closed at once) or restores it.
    func cut(_ isCut: Bool) { state.withLock { $0.cut = isCut } }

    /// Sends later connections to a server on another port (a restarted server).
    func forward(to port: Int) { state.withLock { $0.upstream = port } }

    /// Stops listening. The accepting thread closes the socket once it sees this, never before the shutdown (under
    /// the same lock), so no other descriptor that reuses the number is ever touched.
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            shutdown(listener, Int32(SHUT_RDWR))
            state.closed = true
        }
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            let (isCut, closed, upstream) = state.withLock { ($0.cut, $0.closed, $0.upstream) }
            if closed {
                if client >= 0 { Glibc.close(client) }
                Glibc.close(listener)
                return
            }
            guard client >= 0 else { continue }
            guard !isCut, let server = Self.connect(port: upstream) else {
                Glibc.close(client)
                continue
            }
            let finished = Atomic<Int>(0)
            for (from, to) in [(client, server), (server, client)] {
                Thread.detachNewThread {
                    Self.pump(from: from, to: to)
                    // The second direction to finish closes both ends.
                    if finished.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                        Glibc.close(client)
                        Glibc.close(server)
                    }
                }
            }
        }
    }

    private static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if connected { return fd }
        Glibc.close(fd)
        return nil
    }

    /// Copies bytes one way until the sender closes, then passes the close on.
    private static func pump(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        outer: while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { break outer }
                sent += written
            }
        }
        shutdown(to, Int32(SHUT_WR))
        shutdown(from, Int32(SHUT_RD))
    }
}
