#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// What ``Embedded/sshLogin(issuer:clientID:redirectURI:principals:lifetime:)`` got: an
/// OpenSSH certificate from the provider's SSH CA for an SSH key in the vault (or the
/// TPM), kept beside the key, where the agent's ssh-agent socket serves both.
public struct SSHLogin: Sendable {
    /// The vault record of the SSH key.
    public var handle: KeyHandle
    /// The key, as a `.pub` line.
    public var publicKey: String
    /// The certificate, as a `-cert.pub` line.
    public var certificate: String
    public var serial: String
    public var keyID: String
    public var principals: [String]
    public var validBefore: Date
    /// Where the private key lives.
    public var keyProtection: KeyProtection
}
