public import Foundation

/// Dynamic client registration (RFC 7591, with RFC 7592's read and delete), for clients
/// that have no metadata document yet (`serve --client-registration`). Off by default:
/// anyone who may register can put a name on the consent page.
public struct ClientRegistrationPolicy: Sendable {
    public enum Mode: Sendable, Equatable {
        case off
        /// Anyone may register, within ``perAddressPerMinute`` and ``maximumClients``.
        case open
        /// Only with this initial access token (RFC 7591 §3: `Authorization: Bearer`),
        /// kept as its SHA-256 and compared in constant time.
        case initialAccessToken(sha256: Data)
    }

    public var mode: Mode = .off
    /// Registrations one address (an IPv4 /32 or IPv6 /64, as every limit) may make a
    /// minute, per instance.
    public var perAddressPerMinute = 3
    /// Live dynamically registered clients at most, on every instance together.
    public var maximumClients = 1000

    public init() {}
}
