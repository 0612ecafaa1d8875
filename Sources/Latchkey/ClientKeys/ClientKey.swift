#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A service's own key for one provider and client id: it authenticates the client with
/// `private_key_jwt` (RFC 7523) instead of a shared secret, signs inside the vault (in the
/// TPM for a TPM key) and never leaves it. ``publicJWKSet`` is what the provider's operator
/// registers (Keycloak, Okta, Entra ID, Auth0, `latchkey admin create-client --jwks`).
public struct ClientKey: Sendable, Hashable {
    public let issuer: URL
    public let clientID: String
    /// The `kid` of its assertions: the public key's RFC 7638 thumbprint.
    public let keyID: String
    /// `{"keys":[{"kty":"EC","crv":"P-256","x","y","kid","alg":"ES256","use":"sig"}]}`.
    public let publicJWKSet: Data
    /// The public key as a PEM `PUBLIC KEY` block (RFC 7468 §13), for providers that take
    /// PEM instead of a JWK Set (Auth0's Private Key JWT credentials).
    public let publicKeyPEM: String
    public let keyProtection: KeyProtection
    let handle: KeyHandle
}
