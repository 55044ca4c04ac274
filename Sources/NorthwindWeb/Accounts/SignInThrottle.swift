import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Northwind
import NorthwindStore
import Synchronization

/// Slows down password guessing: after `limit` wrong passwords for one login within `window`, that login is refused
/// until the oldest failure leaves the window. A right password clears its record.
final class SignInThrottle: Sendable {
    let limit: Int
    let window: Duration
    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])

    init(limit: Int = 5, window: Duration = .seconds(15 * 60)) {
        self.limit = limit
        self.window = window
    }

    /// How long `login` must wait before trying again, or nil when it may try now.
    func wait(for login: String, now: ContinuousClock.Instant = .now) -> Duration? {
        failures.withLock { failures in
            let key = login.lowercased()
            let recent = (failures[key] ?? []).filter { now - $0 < window }
            failures[key] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return window - (now - oldest)
        }
    }

    func failed(_ login: String, now: ContinuousClock.Instant = .now) {
        failures.withLock { failures in
            var recent = (failures[login.lowercased()] ?? []).filter { now - $0 < window }
            recent.append(now)
            // Bound memory however many logins are tried: keep only what the limit needs.
            failures[login.lowercased()] = Array(recent.suffix(limit))
            if failures.count > 10_000 { failures = failures.filter { now - ($0.value.last ?? now) < window } }
        }
    }

    func succeeded(_ login: String) {
        failures.withLock { _ = $0.removeValue(forKey: login.lowercased()) }
    }
}
