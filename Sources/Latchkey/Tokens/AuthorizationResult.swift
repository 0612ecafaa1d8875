#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What ``Embedded/authorize(issuer:clientID:redirectURI:scopes:credential:)`` returns:
/// an authorization code (RFC 6749 §4.1.2) and what an app's back end needs to exchange
/// it (RFC 7636 §4.5): the PKCE verifier, the redirect URI and the nonce to expect in the
/// ID token. The state has already been checked against the request's.
public struct AuthorizationResult: Sendable, CustomStringConvertible {
    public var code: String
    public var state: String
    public var codeVerifier: String
    public var redirectURI: URL
    public var nonce: String
    public var issuer: URL

    public init(code: String, state: String, codeVerifier: String, redirectURI: URL, nonce: String, issuer: URL) {
        self.code = code
        self.state = state
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
        self.nonce = nonce
        self.issuer = issuer
    }

    /// Never prints the code or the verifier.
    public var description: String { "AuthorizationResult(\(issuer.absoluteString), redirect \(redirectURI.absoluteString))" }
}
