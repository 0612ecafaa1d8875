import Foundation
import Synchronization

/// This instance's estimate of pending sign-ins: a count read from the store, plus the
/// sessions it made since; stale after a second.
final class PendingCount: Sendable {
    private let state = Mutex<(count: Int, takenAt: Date)>((0, .distantPast))

    func count(now: Date) -> Int? {
        state.withLock { now.timeIntervalSince($0.takenAt) < 1 ? $0.count : nil }
    }

    func set(_ count: Int, now: Date) {
        state.withLock { $0 = (count, now) }
    }

    func added() {
        state.withLock { $0.count += 1 }
    }
}
