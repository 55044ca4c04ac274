import Foundation
import Hummingbird
import Northwind
import NorthwindStore
import Synchronization

/// Encoded answers to repeated read-only requests, kept until the store next changes.
///
/// Search as you type sends the same few prefixes from every till ("c", "co", "cot"), and a search costs a full-text
/// query, a join and a JSON encoding. Entries belong to one `ChangeFeed.generation`: any commit empties the cache,
/// so an answer is never older than the last change this process made, or the feed's poll interval for changes
/// made by other processes.
final class ResponseCache: Sendable {
    private struct State {
        var generation = -1
        var entries: [String: ByteBuffer] = [:]
        var bytes = 0
    }

    private let state = Mutex(State())
    private let feed: ChangeFeed
    /// The most the entries may hold, keys and bodies together; a full cache starts again empty.
    let capacity: Int

    init(feed: ChangeFeed, capacity: Int = 16 << 20) {
        self.feed = feed
        self.capacity = capacity
    }

    /// The cached body for `key`, or `make()`'s, which is kept unless the store changed meanwhile.
    func body(for key: String, make: () throws -> ByteBuffer) throws -> ByteBuffer {
        // Read the generation before the data, so an answer built from older data is never filed under a newer one.
        let generation = feed.generation
        if let hit = lookup(key, generation) { return hit }
        let body = try make()
        keep(body, for: key, generation)
        return body
    }

    /// The same, for an answer made asynchronously; `make` answers nil for one not to keep (an error).
    func body(for key: String, make: () async throws -> ByteBuffer?) async throws -> ByteBuffer? {
        let generation = feed.generation
        if let hit = lookup(key, generation) { return hit }
        guard let body = try await make() else { return nil }
        keep(body, for: key, generation)
        return body
    }

    private func lookup(_ key: String, _ generation: Int) -> ByteBuffer? {
        state.withLock { $0.generation == generation ? $0.entries[key] : nil }
    }

    private func keep(_ body: ByteBuffer, for key: String, _ generation: Int) {
        state.withLock { state in
            if state.generation != generation {
                guard state.generation < generation else { return }
                state = State(generation: generation)
            }
            let size = key.utf8.count + body.readableBytes
            guard size <= capacity / 8, state.entries[key] == nil else { return }
            if state.bytes + size > capacity { state = State(generation: generation) }
            state.entries[key] = body
            state.bytes += size
        }
    }
}
