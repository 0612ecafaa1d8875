import Foundation
import Synchronization

/// Fixed-window rate limiting per key (endpoint and client address): at most `limit`
/// requests a minute. Guessing a code or replaying assertions at speed is then slow,
/// on top of the per-job attempt limits. Memory is bounded: old windows are dropped.
///
/// A lock, not an actor: a count is a dictionary update, and every `POST` of a sign-in
/// asks for one, so an actor's hop (a job enqueued and resumed) cost more than the work
/// (docs/PERFORMANCE.md, "Less per request").
final class RateLimiter: Sendable {
    /// Requests a key may make per window.
    let limit: Int
    /// How long a window lasts, in seconds.
    let windowSeconds = 60
    private var window: TimeInterval { TimeInterval(windowSeconds) }
    private let counts = Mutex<[String: (start: Date, count: Int)]>([:])
    private static let maximumKeys = 50_000

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether `key` has used up its limit in the current window, without counting.
    func isExhausted(_ key: String, now: Date = ProviderClock.now) -> Bool {
        guard let entry = counts.withLock({ $0[key] }), now.timeIntervalSince(entry.start) < window else { return false }
        return entry.count >= limit
    }

    /// Counts a request; false when the key is over its limit.
    func allow(_ key: String, now: Date = ProviderClock.now) -> Bool {
        count(key, now: now) <= limit
    }

    /// The key's requests so far in its window, this one counted: over ``limit`` means
    /// refused, and exactly one over is when the limit engaged (the one refusal the audit
    /// log keeps for the window, docs/PROTOCOL.md, "Audit log").
    func count(_ key: String, now: Date = ProviderClock.now) -> Int {
        let window = window
        return counts.withLock { counts in
            if counts.count > Self.maximumKeys {
                counts = counts.filter { now.timeIntervalSince($0.value.start) < window }
                if counts.count > Self.maximumKeys { counts.removeAll() }
            }
            var entry = counts[key] ?? (now, 0)
            if now.timeIntervalSince(entry.start) >= window { entry = (now, 0) }
            entry.count += 1
            counts[key] = entry
            return entry.count
        }
    }
}
