import Foundation

/// Fixed-window rate limiting per key (endpoint and client address): at most `limit`
/// requests a minute. Guessing a code or replaying assertions at speed is then slow,
/// on top of the per-job attempt limits. Memory is bounded: old windows are dropped.
actor RateLimiter {
    private let limit: Int
    private let window: TimeInterval = 60
    private var counts: [String: (start: Date, count: Int)] = [:]
    private static let maximumKeys = 50_000

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether `key` has used up its limit in the current window, without counting.
    func isExhausted(_ key: String, now: Date = ProviderClock.now) -> Bool {
        guard let entry = counts[key], now.timeIntervalSince(entry.start) < window else { return false }
        return entry.count >= limit
    }

    /// Counts a request; false when the key is over its limit.
    func allow(_ key: String, now: Date = ProviderClock.now) -> Bool {
        if counts.count > Self.maximumKeys {
            counts = counts.filter { now.timeIntervalSince($0.value.start) < window }
            if counts.count > Self.maximumKeys { counts.removeAll() }
        }
        var entry = counts[key] ?? (now, 0)
        if now.timeIntervalSince(entry.start) >= window { entry = (now, 0) }
        entry.count += 1
        counts[key] = entry
        return entry.count <= limit
    }
}
