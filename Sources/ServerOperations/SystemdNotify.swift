import Foundation

/// Tells systemd how the service stands (`Type=notify` units): `READY=1` once the server listens, so that
/// `systemctl start` (and a package's upgrade) returns only when requests are answered. Outside systemd
/// (`NOTIFY_SOCKET` unset) it does nothing. sd_notify(3)'s protocol is one datagram on a Unix socket; no
/// Swift package offers it, and linking libsystemd for 30 lines is not worth a dependency.
public enum SystemdNotify {
    /// Sends `state` (such as `READY=1` or `STATUS=…`) to the service manager. Returns whether it was sent.
    @discardableResult
    public static func send(_ state: String) -> Bool {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return false }
        #if os(Linux)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // A leading '@' names the abstract namespace, which starts with a zero byte.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, message, message.count, 0, socketAddress, length)
            }
        }
        return sent == message.count
    }

    /// The server listens and answers.
    public static func ready(status: String) { send("READY=1\nSTATUS=\(status)") }

    /// A reload (SIGHUP) has begun; `ready` ends it. `MONOTONIC_USEC` is what systemd 253+ asks of
    /// `Type=notify-reload`; older versions ignore it.
    public static func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        send("RELOADING=1\nMONOTONIC_USEC=\(Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000)")
    }

    /// The server is shutting down.
    public static func stopping() { send("STOPPING=1") }
}
