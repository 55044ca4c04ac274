import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback between an installation and the sync server, which does to new connections what a bad
/// network does (`Fault`). Its own port never changes, so a test never races other tests for a server's port.
final class FaultProxy: Sendable {
    /// What happens to a connection accepted while the fault is on.
    enum Fault: Sendable, Equatable, CustomStringConvertible {
        case none
        /// Closed at once: the network is down.
        case cut
        /// The request reaches the server, which commits it; the answer is thrown away and the connection closed.
        case dropResponse
        /// Requests reach the server; answers never come back, and the connection stays open until healed.
        case cutResponses
        /// Nothing passes either way, and the connection stays open until healed.
        case halfOpen
        /// Every chunk waits this long, each way.
        case delay(milliseconds: Int)
        /// Everything the client sends is sent again on a second connection, whose answers are thrown away.
        case duplicate

        var description: String {
            switch self {
            case .none: "none"
            case .cut: "cut"
            case .dropResponse: "drop responses"
            case .cutResponses: "cut responses"
            case .halfOpen: "half open"
            case .delay(let milliseconds): "delay \(milliseconds) ms"
            case .duplicate: "duplicate requests"
            }
        }
    }

    let port: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var upstream = 0
        var fault = Fault.none
        var closed = false
        /// Connections held open by `cutResponses` or `halfOpen`, or slowed by `delay`, closed when the fault is healed.
        var held: [Int32] = []
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
    func cut(_ isCut: Bool) { inject(isCut ? .cut : .none) }

    /// Applies `fault` to the connections accepted from now on. Healing (`.none`) also drops the connections held
    /// open, as a network that comes back resets them.
    func inject(_ fault: Fault) {
        state.withLock { state in
            state.fault = fault
            guard fault == .none else { return }
            for fd in state.held { shutdown(fd, Int32(SHUT_RDWR)) }
            state.held = []
        }
    }

    /// The fault new connections meet now.
    var fault: Fault { state.withLock { $0.fault } }

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
            let (fault, closed, upstream) = state.withLock { ($0.fault, $0.closed, $0.upstream) }
            if closed {
                if client >= 0 { Glibc.close(client) }
                Glibc.close(listener)
                return
            }
            guard client >= 0 else { continue }
            guard fault != .cut, let server = Self.connect(port: upstream) else {
                Glibc.close(client)
                continue
            }
            // A delayed connection kept alive would stay slow after healing (a full refetch through it can take
            // half a minute), where a network that comes back is fast again: healing resets it too.
            var slow = false
            if case .delay = fault { slow = true }
            if fault == .cutResponses || fault == .halfOpen || slow { state.withLock { $0.held += [client, server] } }
            let copy = fault == .duplicate ? Self.connect(port: upstream) : nil
            let finished = Atomic<Int>(0)
            // The copy closes when both its reader and the connection it copies are done.
            let copyDone = Atomic<Int>(0)
            let closeCopy: @Sendable (Int32) -> Void = { fd in
                if copyDone.add(1, ordering: .acquiringAndReleasing).newValue == 2 { Glibc.close(fd) }
            }
            for (from, to, direction) in [(client, server, Direction.request), (server, client, Direction.response)] {
                Thread.detachNewThread {
                    Self.pump(from: from, to: to, direction: direction, fault: fault, copy: copy)
                    // The second direction to finish closes both ends.
                    if finished.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                        // Under the lock, so that healing never shuts down a descriptor that has been reused.
                        self.state.withLock { state in
                            state.held.removeAll { $0 == client || $0 == server }
                            Glibc.close(client)
                            Glibc.close(server)
                        }
                        if let copy {
                            shutdown(copy, Int32(SHUT_RDWR))
                            closeCopy(copy)
                        }
                    }
                }
            }
            if let copy {
                // The copy's answers are read and thrown away, so that its server never blocks on them.
                Thread.detachNewThread {
                    Self.discard(copy)
                    closeCopy(copy)
                }
            }
        }
    }

    private enum Direction { case request, response }

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

    /// Copies bytes one way until the sender closes, then passes the close on; the fault decides what passes.
    private static func pump(from: Int32, to: Int32, direction: Direction, fault: Fault, copy: Int32?) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        outer: while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            switch (fault, direction) {
            case (.halfOpen, _), (.cutResponses, .response): continue
            case (.dropResponse, .response): break outer
            case (.delay(let milliseconds), _): usleep(useconds_t(milliseconds * 1000))
            case (.duplicate, .request): if let copy { _ = send(buffer, count: count, to: copy) }
            default: break
            }
            guard send(buffer, count: count, to: to) else { break }
        }
        shutdown(to, Int32(SHUT_WR))
        shutdown(from, Int32(SHUT_RD))
        if fault == .dropResponse, direction == .response { shutdown(to, Int32(SHUT_RDWR)) }
    }

    private static func send(_ buffer: [UInt8], count: Int, to: Int32) -> Bool {
        var sent = 0
        while sent < count {
            let written = buffer.withUnsafeBytes { Glibc.send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    private static func discard(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
