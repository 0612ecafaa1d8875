public import Foundation
public import LatchkeyIdP
import Synchronization

/// A clock a test moves: the provider judges lifetimes and intervals by it
/// (``ProviderConfiguration/clock``), so a test of an expiry, a `slow_down` interval or a
/// key's publication delay says how much time passes instead of sleeping and hoping the
/// machine kept up (issue 49). It starts at the host's time and stands still until
/// ``advance(by:)``.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    public init(startingAt start: Date = Date()) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    /// Moves the clock `seconds` forward.
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// This clock, for ``ProviderConfiguration/clock``.
    public var provider: ProviderClock {
        ProviderClock { [self] in now }
    }
}
