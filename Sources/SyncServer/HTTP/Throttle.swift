import Foundation
import Synchronization

/// A token bucket per installation: `rate` requests a second on average, in bursts of up to `burst`. Per server
/// instance: behind a load balancer each instance grants its own share.
/// `systemctl reload` may change the rate and burst while the server runs.
public final class Throttle: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private struct Limits {
        var rate: Double
        var burst: Double
    }

    private let limits: Mutex<Limits>
    private let buckets = Mutex<[String: Bucket]>([:])

    public init(rate: Double, burst: Double) {
        limits = Mutex(Limits(rate: rate, burst: burst))
    }

    /// Requests a second on average, and the burst above it.
    public var rate: Double { limits.withLock { $0.rate } }
    public var burst: Double { limits.withLock { $0.burst } }

    /// New limits, from the next request on.
    public func update(rate: Double, burst: Double) {
        limits.withLock { $0 = Limits(rate: rate, burst: burst) }
    }

    /// Takes one request's token, or says how many seconds to wait for one.
    func take(_ key: String, now: Double = Date().timeIntervalSince1970) -> Int? {
        let (rate, burst) = limits.withLock { ($0.rate, $0.burst) }
        return buckets.withLock { buckets in
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
