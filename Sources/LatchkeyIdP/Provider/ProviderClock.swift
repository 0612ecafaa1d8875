public import Foundation

/// What the provider takes for the time now. Every lifetime, interval and expiry it judges
/// (codes, tickets, sessions, `slow_down` intervals, signing-key publication, rate-limit
/// windows) reads this clock, so a test moves time instead of waiting for it and a loaded
/// machine cannot make a "too fast" poll look slow (docs/ARCHITECTURE.md, "Time").
///
/// ``ProviderConfiguration/clock`` sets it; it is ``system`` unless a test says otherwise.
/// The provider binds its clock to the tasks that do its work (each request, through
/// ``ProviderClockMiddleware``, and its background services), and its parts read
/// ``now`` there.
public struct ProviderClock: Sendable {
    private let read: @Sendable () -> Date
    /// Whether this is the host's clock, which needs no binding: it is the default.
    let isSystem: Bool

    /// A clock that answers `read()` for the time now.
    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
        isSystem = false
    }

    private init(system read: @escaping @Sendable () -> Date) {
        self.read = read
        isSystem = true
    }

    /// The host's clock.
    public static let system = ProviderClock(system: { Date() })

    /// The time now by this clock.
    public var now: Date { read() }

    /// The clock of the provider whose work the current task does.
    @TaskLocal static var current: ProviderClock = .system

    /// The time now by the clock of the provider whose work the current task does (the
    /// host's clock outside any provider's work).
    static var now: Date { current.now }

    /// Runs `body` with this clock as the provider's.
    func bound<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        if isSystem { return try await body() }
        return try await Self.$current.withValue(self) { try await body() }
    }
}
