#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// One SSH key in the vault (``Embedded/sshKeys()``, `latchkey ssh list`): the provider
/// whose CA certifies it, and what its last certificate says.
public struct SSHKeyListing: Sendable {
    public var handle: KeyHandle
    public var issuer: String
    /// The client whose own key it is (``Embedded/sshLogin(issuer:clientCredentials:principals:lifetime:)``);
    /// nil for the person's key.
    public var clientID: String?
    /// The key, as a `.pub` line.
    public var publicKey: String
    /// The last certificate, as a `-cert.pub` line, expired or not; nil before the first.
    public var certificate: String?
    public var serial: String?
    public var principals: [String]
    public var validBefore: Date?
    public var keyProtection: KeyProtection
}
