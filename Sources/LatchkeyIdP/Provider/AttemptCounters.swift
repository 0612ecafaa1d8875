import Foundation

/// Counters shared by every instance, in fixed windows (ten minutes unless a caller asks
/// for a day): wrong codes per client address and per account or e-mail address, and
/// flow starts per address (docs/SECURITY.md, "Limits"). They live in the store because a
/// guesser spreading attempts over instances must meet the same limit as one hitting a
/// single instance. A key names its window, so one key is always counted in one window.
enum AttemptCounters {
    static let window: TimeInterval = 600
    static let day: TimeInterval = 86_400

    /// The count in the current window.
    static func count(_ key: String, window: TimeInterval = window, now: Date, in transaction: any SQLTransaction) async throws -> Int {
        let row = try await transaction.first("""
            SELECT count FROM attempt_counters WHERE key = \(key) AND window_start > \(now.addingTimeInterval(-window))
            """)
        return try row?.decode("count", as: Int.self) ?? 0
    }

    /// Adds one and returns the new count (a window that has passed starts over).
    @discardableResult
    static func increment(_ key: String, window: TimeInterval = window, now: Date, in transaction: any SQLTransaction) async throws -> Int {
        let windowStart = now.addingTimeInterval(-window)
        let row = try await transaction.first("""
            INSERT INTO attempt_counters (key, window_start, count) VALUES (\(key), \(now), 1)
            ON CONFLICT (key) DO UPDATE SET
                count = CASE WHEN attempt_counters.window_start <= \(windowStart) THEN 1 ELSE attempt_counters.count + 1 END,
                window_start = CASE WHEN attempt_counters.window_start <= \(windowStart) THEN \(now) ELSE attempt_counters.window_start END
            RETURNING count
            """)
        return try row?.decode("count", as: Int.self) ?? 1
    }

    /// Drops counters whose window has passed (the longest window any key uses).
    static func prune(now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM attempt_counters WHERE window_start <= \(now.addingTimeInterval(-day))")
    }
}
