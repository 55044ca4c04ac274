import Foundation

/// The environment variables that steer the fault tests: a crash point (`NORTHWIND_CRASH_AT`) and the sync server's
/// commit-order hooks. Only debug builds, which the tests run, read them (`NORTHWIND_TEST_HOOKS`); a release binary
/// refuses to start with one set, so that nobody believes a switch took effect on a server it cannot reach.
public enum TestSwitches {
    public static let names = ["NORTHWIND_CRASH_AT", "NORTHWIND_SYNC_TEST_HOLD_MS", "NORTHWIND_SYNC_TEST_PLAIN_SEQUENCE"]

    /// Whether this build reads the switches.
    public static var compiledIn: Bool {
        #if NORTHWIND_TEST_HOOKS
        true
        #else
        false
        #endif
    }

    /// Exits with status 78 (EX_CONFIG) and a message when a switch is set in a build that does not read them.
    public static func refuseUnlessCompiledIn(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard !compiledIn, let name = names.first(where: { environment[$0] != nil }) else { return }
        FileHandle.standardError.write(
            Data("error: \(name) is a switch for the fault tests, which only a debug build reads; this is a release build. Unset it.\n".utf8)
        )
        exit(78)
    }
}
