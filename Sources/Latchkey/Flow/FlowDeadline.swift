#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The time one flow may spend waiting on providers (``Embedded/Configuration/flowTimeout``),
/// shared by every request the flow makes, the OAuth client's included: it travels as a
/// task-local value, so a request made anywhere under ``FlowContext/run(_:)`` draws on it.
///
/// Only time spent in requests counts. Time the app's step handler takes (a person typing
/// a code) and the pauses of a transfer waiting for the other device do not: those are
/// bounded by the person and by the transfer code's own lifetime, not by the provider.
final class FlowDeadline: Sendable {
    @TaskLocal static var current: FlowDeadline?

    let total: Duration
    private let remaining: Mutex<Duration>

    init(total: Duration) {
        self.total = total
        remaining = Mutex(total)
    }

    /// What is left of the flow's time.
    var left: Duration { remaining.withLock { $0 } }

    /// Records time spent waiting on a provider.
    func spend(_ time: Duration) {
        remaining.withLock { $0 -= time }
    }
}
