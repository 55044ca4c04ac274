import Foundation
import Synchronization

/// A token bucket per installation: `rate` requests a second on average, in bursts of up to `burst`. Per server
/// instance: behind a load balancer each instance grants its own share.
final class Throttle: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    let rate: Double
    let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes one request's token, or says how many seconds to wait for one.
    func take(_ key: String, now: Double = Date().timeIntervalSince1970) -> Int? {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}
