#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// When a device polls the token endpoint (RFC 8628 §3.4, §3.5): every `interval` seconds,
/// 5 seconds more after each `slow_down` (§3.5: "the interval MUST be increased by 5
/// seconds for this and all subsequent requests"), and never after the device code has
/// expired. A value with no clock of its own, so the logic is tested without waiting.
public struct DevicePolling: Hashable, Sendable {
    /// Seconds to wait before the next poll.
    public private(set) var interval: Int
    /// When the device code expires (`expires_in` after it was issued).
    public let expiresAt: Date

    public init(_ response: DeviceAuthorizationResponse, issuedAt: Date) {
        interval = response.interval ?? DeviceAuthorizationResponse.defaultInterval
        expiresAt = issuedAt.addingTimeInterval(TimeInterval(response.expiresIn))
    }

    /// What the token endpoint answered one poll.
    public enum Outcome: Hashable, Sendable {
        /// `authorization_pending`: the person has not decided yet.
        case pending
        /// `slow_down`: polled too fast.
        case slowDown
    }

    /// Takes in a poll's outcome (a `slow_down` lengthens the interval for good).
    public mutating func record(_ outcome: Outcome) {
        if outcome == .slowDown { interval += 5 }
    }

    /// When to poll next after a poll made at `now`; nil when that would be past expiry
    /// (the device then stops and reports the code expired).
    public func nextPoll(after now: Date) -> Date? {
        let next = now.addingTimeInterval(TimeInterval(interval))
        return next < expiresAt ? next : nil
    }
}
