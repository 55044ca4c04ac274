import Foundation

/// Wakes the event streams of a container: after this instance commits, when another instance's commit is
/// announced (PostgreSQL's NOTIFY), and on each stream's own timer. A wake is only a hint; streams read the truth.
actor ChangeSignal {
    enum Wake: Sendable {
        case changed
        /// Time for a keep-alive ping, and a poll in case an announcement was lost.
        case tick
    }

    private var streams: [UUID: (container: String, continuation: AsyncStream<Wake>.Continuation)] = [:]

    /// A stream of wakes for one container; it ends when `remove` is called.
    func add(container: String) -> (UUID, AsyncStream<Wake>) {
        let id = UUID()
        // Wakes that arrive while a stream is busy collapse into one: it rereads everything anyway.
        let (stream, continuation) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(2))
        streams[id] = (container, continuation)
        return (id, stream)
    }

    func remove(_ id: UUID) {
        streams.removeValue(forKey: id)?.continuation.finish()
    }

    func changed(_ container: String) {
        for (_, stream) in streams where stream.container == container { stream.continuation.yield(.changed) }
    }

    func tick(_ id: UUID) {
        streams[id]?.continuation.yield(.tick)
    }
}
