#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyOAuth

/// What ``Embedded/authenticate(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:)``
/// returns: the token response (RFC 6749 §5.1) with a validated ID token (OIDC Core
/// §3.1.3.7), the client registration it belongs to, and, for tokens bound to a key
/// (RFC 9449), that key's `DPoPSigner`, so ``Embedded/refresh(_:scopes:)``,
/// ``Embedded/revoke(_:)`` and ``Embedded/authorize(request:with:)`` need nothing else.
public struct Tokens: Sendable, CustomStringConvertible {
    public let tokenSet: TokenSet
    public let issuer: URL
    public let clientID: String
    public let redirectURI: URL
    /// The key the tokens are bound to (``tokenType`` `DPoP`); nil for bearer tokens.
    public let dpop: DPoPSigner?
    /// The ``Credential/id`` that signed in, when known: cached tokens are kept with it.
    public let credentialID: String?
    /// The protected resource the access token was asked for (RFC 8707 §2,
    /// ``ResourceIndicator`` form); nil for the provider's own tokens. A refresh asks for
    /// the same one.
    public let resource: String?

    public init(tokenSet: TokenSet, issuer: URL, clientID: String, redirectURI: URL, dpop: DPoPSigner? = nil, credentialID: String? = nil, resource: String? = nil) {
        self.tokenSet = tokenSet
        self.issuer = issuer
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.dpop = tokenSet.isDPoPBound ? dpop : nil
        self.credentialID = credentialID
        self.resource = resource
    }

    public var accessToken: String { tokenSet.accessToken }
    /// `Bearer`, or `DPoP` for tokens bound to a key (RFC 9449 §5), which are presented
    /// with the DPoP scheme and a proof.
    public var tokenType: String { tokenSet.tokenType }
    public var idToken: String? { tokenSet.idToken }
    public var refreshToken: String? { tokenSet.refreshToken }
    public var expiresAt: Date? { tokenSet.expiresAt }
    /// The ID token's claims, validated (signature, iss, aud, exp, nonce) when the tokens
    /// arrived.
    public var claims: IDTokenClaims? { tokenSet.idTokenClaims }

    /// Whether the access token is still good for `seconds` more (a token whose lifetime
    /// the provider did not state is taken as good).
    public func isValid(for seconds: TimeInterval = 0, at now: Date = Date()) -> Bool {
        expiresAt.map { $0.timeIntervalSince(now) > seconds } ?? true
    }

    /// Never prints a token.
    public var description: String { "Tokens(\(issuer.absoluteString), \(tokenSet))" }
}
