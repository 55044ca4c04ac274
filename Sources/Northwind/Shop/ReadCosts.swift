import Synchronization

/// The last measured duration of each shape of read, and how many measured reads are running, so that
/// `Backoffice.measuredRead` can tell when a read may run on the caller's thread.
final class ReadCosts: Sendable {
    /// Reads measured under this run on the caller's thread. A few hundred microseconds is what a request may hold
    /// one of the cooperative pool's two threads for; the thread hop it saves costs about 100 µs.
    static let budget = Duration.microseconds(200)

    private let last = Mutex<[String: Duration]>([:])
    private let inFlight = Atomic<Int>(0)

    /// Counts a read in; returns how many others were running.
    func begin() -> Int { inFlight.add(1, ordering: .relaxed).oldValue }
    func end() { inFlight.subtract(1, ordering: .relaxed) }

    /// Whether the last read of `shape` took less than the budget. A shape never measured is not cheap: its first read
    /// goes to a reader thread, where a slow one does no harm.
    func isCheap(_ shape: String) -> Bool {
        last.withLock { $0[shape] }.map { $0 < Self.budget } ?? false
    }

    func record(_ shape: String, _ duration: Duration) {
        last.withLock { $0[shape] = duration }
    }
}
