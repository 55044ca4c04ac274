import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests that run real programs. Foundation's `Process.run()`
/// on Swift 6.3.1 crashes the test process now and then (swift-corelibs-foundation#5472: an over-read while it lists
/// `/proc/self/fd`), and a suite that starts hundreds of processes hits it.
final class ChildProcess: Sendable {
    /// Where a child's standard output or error goes.
    enum Output: Sendable {
        case discard
        /// A pipe; read it from `output` or `errors`.
        case pipe
        /// The same pipe as standard output (for standard error only).
        case toOutput
    }

    /// How the child ended.
    struct Termination: Sendable, Equatable {
        /// The exit status, or the signal's number when `signalled`.
        var status: Int32
        var signalled: Bool
    }

    let pid: pid_t
    /// The read ends of the pipes asked for.
    let output: FileHandle?
    let errors: FileHandle?
    private let ended = Mutex<Termination?>(nil)

    init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        directory: String? = nil,
        output outputMode: Output = .discard,
        errors errorsMode: Output = .discard
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else {
                for fd in parentEnds { close(fd) }
                throw CLIError(description: "no pipe for \(executable): \(String(cString: strerror(errno)))")
            }
            // The child closes every descriptor above 2 as it starts (below), these included.
            parentEnds.append(fds[0])
            childEnds.append(fds[1])
            return (fds[0], fds[1])
        }

        var outputRead: Int32?
        switch outputMode {
        case .discard, .toOutput: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .pipe:
            let ends = try makePipe()
            outputRead = ends.read
            posix_spawn_file_actions_adddup2(&actions, ends.write, 1)
        }
        var errorsRead: Int32?
        switch errorsMode {
        case .discard: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .toOutput: posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .pipe:
            let ends = try makePipe()
            errorsRead = ends.read
            posix_spawn_file_actions_adddup2(&actions, ends.write, 2)
        }
        // Nothing else of the test process's (sockets, proxies' connections) may live on in the child.
        _ = Self.closeFrom?(&actions, 3)
        if let directory {
            guard let chdir = Self.changeDirectory, chdir(&actions, directory) == 0 else {
                throw CLIError(description: "cannot start \(executable) in \(directory)")
            }
        }

        // A server under test makes no scheduled backups (in the tester's own data folder) unless a test asks.
        let environment = ProcessInfo.processInfo.environment.merging(["NORTHWIND_BACKUP_EVERY": "off"]) { $1 }.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }

        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else {
            for fd in parentEnds { close(fd) }
            throw CLIError(description: "could not start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        output = outputRead.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        errors = errorsRead.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not export.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// glibc's `posix_spawn_file_actions_addchdir_np`, likewise.
    private static let changeDirectory: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)
    }()

    /// How it ended, once it has; nil while it runs. Reaps the child.
    var termination: Termination? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            let signal = status & 0x7f
            ended = signal == 0 ? Termination(status: (status >> 8) & 0xff, signalled: false) : Termination(status: signal, signalled: true)
            return ended
        }
    }

    var isRunning: Bool { termination == nil }

    /// Waits for the child to end, blocking this thread.
    @discardableResult
    func waitUntilExit() -> Termination {
        while true {
            if let termination { return termination }
            usleep(10_000)
        }
    }

    /// Waits for the child to end without holding a thread of the concurrency pool.
    @discardableResult
    func exit() async -> Termination {
        while true {
            if let termination { return termination }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits up to `timeout` for the child to end; nil if it has not.
    func exit(within timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let termination { return termination }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return termination
    }

    func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(pid, signal)
    }

    /// Kills the child with SIGKILL if it still runs after `timeout`, unless disarmed first: so that a test blocked
    /// reading a child that hangs fails, rather than holding one of the few threads every test shares for good.
    func watchdog(_ timeout: Duration) -> Watchdog {
        let watchdog = Watchdog()
        let deadline = ContinuousClock.now + timeout
        Thread.detachNewThread { [self] in
            while ContinuousClock.now < deadline {
                if watchdog.disarmed.load(ordering: .acquiring) || !isRunning { return }
                usleep(50_000)
            }
            guard !watchdog.disarmed.load(ordering: .acquiring), isRunning else { return }
            watchdog.fired.store(true, ordering: .releasing)
            signal(SIGKILL)
        }
        return watchdog
    }

    final class Watchdog: Sendable {
        let disarmed = Atomic(false)
        let fired = Atomic(false)
        func disarm() { disarmed.store(true, ordering: .releasing) }
        var hasFired: Bool { fired.load(ordering: .acquiring) }
    }

    /// Asks the child to stop (SIGTERM) and waits up to `timeout`; then kills it. False when it had to be killed.
    @discardableResult
    func stop(within timeout: Duration = .seconds(20)) -> Bool {
        signal(SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        guard isRunning else { return true }
        signal(SIGKILL)
        waitUntilExit()
        return false
    }

    /// Reads `handle` until what it has read satisfies `done`, or it ends; a child that does neither within
    /// `timeout` is killed, which ends the read.
    func read(_ handle: FileHandle, until done: (String) -> Bool, within timeout: Duration = .seconds(120)) -> String {
        let watchdog = watchdog(timeout)
        defer { watchdog.disarm() }
        var seen = ""
        while !done(seen) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        return watchdog.hasFired ? seen + "\n(killed after \(timeout): it neither printed what was awaited nor ended)" : seen
    }

    /// `run`, on a thread of its own rather than one of the concurrency pool's few.
    static func runOffPool(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        directory: String? = nil,
        mergingErrors: Bool = false,
        timeout: Duration = .seconds(300)
    ) async throws -> (termination: Termination, output: String, errors: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try run(executable, arguments, environment: environment, directory: directory, mergingErrors: mergingErrors, timeout: timeout)
                    }
                )
            }
        }
    }

    /// Runs a program to its end and returns what it printed (standard output, then standard error, each read on its
    /// own so that neither pipe fills).
    static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        directory: String? = nil,
        mergingErrors: Bool = false,
        timeout: Duration = .seconds(300)
    ) throws -> (termination: Termination, output: String, errors: String) {
        let child = try ChildProcess(
            executable,
            arguments,
            environment: environment,
            directory: directory,
            output: .pipe,
            errors: mergingErrors ? .toOutput : .pipe
        )
        let errors = Mutex(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        if let handle = child.errors {
            Thread.detachNewThread {
                let data = handle.readDataToEndOfFile()
                errors.withLock { $0 = data }
                errorsRead.signal()
            }
        } else {
            errorsRead.signal()
        }
        // A program that hangs is killed, so that the test fails instead of waiting for ever.
        let watchdog = child.watchdog(timeout)
        let output = child.output?.readDataToEndOfFile() ?? Data()
        errorsRead.wait()
        let termination = child.waitUntilExit()
        watchdog.disarm()
        let killed = watchdog.hasFired ? "\n(\(executable) was killed after running \(timeout))" : ""
        return (termination, String(decoding: output, as: UTF8.self), String(decoding: errors.withLock { $0 }, as: UTF8.self) + killed)
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
