#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What ``Embedded/deviceAuthorization(issuer:clientID:scopes:dpop:)`` reports, in order
/// (RFC 8628 §3.2–3.5).
public enum DeviceAuthorizationEvent: Sendable {
    /// The code to show the person, and where they enter it (RFC 8628 §3.3).
    case code(DeviceCodePrompt)
    /// A poll found the person has not decided yet (`authorization_pending`).
    case pending
    /// The provider asked for slower polling (`slow_down`): the next poll waits this many
    /// seconds, as every later one does (§3.5).
    case slowDown(interval: Int)
    /// Approved: validated tokens, kept in the vault.
    case signedIn(Tokens)
}

/// What a device shows so a person can approve it elsewhere (RFC 8628 §3.3): the user
/// code, the verification URI, and the URI with the code in it (for a QR code, §3.3.1).
public struct DeviceCodePrompt: Sendable, Hashable {
    public let userCode: String
    public let verificationURI: URL
    public let verificationURIComplete: URL?
    public let expiresAt: Date
    /// Seconds between polls, as the provider first asked.
    public let interval: Int
}
