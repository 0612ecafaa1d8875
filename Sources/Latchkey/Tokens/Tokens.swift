public import Foundation
public import LatchkeyOAuth

/// What ``Embedded/authenticate(issuer:clientID:redirectURI:scopes:credential:)`` returns:
/// the token response (RFC 6749 §5.1) with a validated ID token (OIDC Core §3.1.3.7), and
/// the client registration it belongs to, so ``Embedded/refresh(_:scopes:)`` and
/// ``Embedded/revoke(_:)`` need nothing else.
public struct Tokens: Sendable, CustomStringConvertible {
    public let tokenSet: TokenSet
    public let issuer: URL
    public let clientID: String
    public let redirectURI: URL

    public init(tokenSet: TokenSet, issuer: URL, clientID: String, redirectURI: URL) {
        self.tokenSet = tokenSet
        self.issuer = issuer
        self.clientID = clientID
        self.redirectURI = redirectURI
    }

    public var accessToken: String { tokenSet.accessToken }
    /// `Bearer`, or `DPoP` for tokens bound to a key (RFC 9449 §5), which are presented
    /// with the DPoP scheme and a proof.
    public var tokenType: String { tokenSet.tokenType }
    public var idToken: String? { tokenSet.idToken }
    public var refreshToken: String? { tokenSet.refreshToken }
    public var expiresAt: Date? { tokenSet.expiresAt }
    /// The ID token's claims, validated (signature, iss, aud, exp, nonce).
    public var claims: IDTokenClaims? { tokenSet.idTokenClaims }

    /// Never prints a token.
    public var description: String { "Tokens(\(issuer.absoluteString), \(tokenSet))" }
}
