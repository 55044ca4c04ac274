import Foundation
import Synchronization

/// Named moments at which a fault test can have this process killed with SIGKILL: `NORTHWIND_CRASH_AT=name`, or
/// `name:n` for the n-th time. The convergence harness kills `northwind sync now` this way at exactly the moment it
/// wants (between the server's commit and the acknowledgement, say), which a timer hits only by luck, and the same
/// seed then kills it at the same moment every time. Unset, a crash point does nothing.
///
/// Debug builds only (`NORTHWIND_TEST_HOOKS`): in a release build `reach` is empty, and the binary refuses to start
/// with the variable set (`TestSwitches`).
public enum CrashPoint {
    #if NORTHWIND_TEST_HOOKS
    private static let chosen: (name: String, count: Int)? = {
        guard let value = ProcessInfo.processInfo.environment["NORTHWIND_CRASH_AT"], !value.isEmpty else { return nil }
        let parts = value.split(separator: ":", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? max(Int(parts[1]) ?? 1, 1) : 1)
    }()
    private static let reached = Atomic<Int>(0)

    public static func reach(_ name: StaticString) {
        guard let chosen, chosen.name == name.description else { return }
        if reached.add(1, ordering: .relaxed).newValue >= chosen.count { kill(getpid(), SIGKILL) }
    }
    #else
    @inlinable @inline(__always)
    public static func reach(_ name: StaticString) {}
    #endif
}
