#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a bind link asks for, read from the provider's bind job before any key is made:
/// handed to the `confirm` closure of ``Embedded/registerCredential(from:confirm:)`` so
/// that a person who clicked a link sees which account at which provider it would add a
/// credential to (docs/SECURITY.md, "Links on a Linux desktop"). The values are the
/// provider's own text; show them through an escaping rule.
public struct BindRequest: Sendable {
    /// The provider the link names.
    public let provider: URL
    /// The relying party the credential is for (WebAuthn §5.4.2 `rp`).
    public let relyingPartyID: String
    public let relyingPartyName: String
    /// The account (WebAuthn §5.4.3 `user.name` and `displayName`).
    public let userName: String
    public let userDisplayName: String
}
