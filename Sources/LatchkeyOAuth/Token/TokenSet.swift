public import Foundation

/// Tokens from a token endpoint (RFC 6749 §5.1), with the ID token's validated claims.
public struct TokenSet: Sendable, CustomStringConvertible {
    public var accessToken: String
    public var tokenType: String
    public var expiresAt: Date?
    public var refreshToken: String?
    public var scope: String?
    public var idToken: String?
    public var idTokenClaims: IDTokenClaims?

    public init(accessToken: String, tokenType: String, expiresAt: Date?, refreshToken: String?, scope: String?, idToken: String?, idTokenClaims: IDTokenClaims?) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.scope = scope
        self.idToken = idToken
        self.idTokenClaims = idTokenClaims
    }

    /// Never prints a token.
    public var description: String {
        "TokenSet(\(tokenType), expires \(expiresAt.map { "\($0)" } ?? "unknown"), refresh token \(refreshToken == nil ? "absent" : "present"), subject \(idTokenClaims?.subject ?? "-"))"
    }

    /// Whether the tokens are bound to a DPoP key (`token_type: DPoP`, RFC 9449 §5): then
    /// the access token is presented with the DPoP scheme and a proof (``DPoPSigner``).
    public var isDPoPBound: Bool { tokenType.lowercased() == "dpop" }

    /// Parses a successful token response body. `dpop`: whether the request carried a DPoP
    /// proof, so `token_type: DPoP` may be answered (a server without DPoP answers Bearer,
    /// §5; a DPoP token nobody asked for is refused).
    static func parse(_ body: Data, now: Date, dpop: Bool = false) throws -> (TokenSet, [String: JSONValue]) {
        let object = try JSONValue.object(from: body, maximumSize: 256 * 1024, what: "token response")
        guard let accessToken = object["access_token"]?.stringValue, !accessToken.isEmpty,
              let tokenType = object["token_type"]?.stringValue
        else {
            throw OAuthError(code: .malformedResponse, reason: "the token response lacks access_token or token_type")
        }
        guard tokenType.lowercased() == "bearer" || (dpop && tokenType.lowercased() == "dpop") else {
            throw OAuthError(code: .unsupportedTokenType, reason: "token_type \(tokenType) is not \(dpop ? "Bearer or DPoP" : "Bearer")")
        }
        var expiresAt: Date?
        if let expires = object["expires_in"] {
            guard let seconds = expires.numberValue, seconds >= 0, seconds < 10 * 365 * 86400 else {
                throw OAuthError(code: .malformedResponse, reason: "expires_in is not a sensible number of seconds")
            }
            expiresAt = now.addingTimeInterval(seconds)
        }
        func optional(_ name: String) throws -> String? {
            guard let value = object[name] else { return nil }
            guard let text = value.stringValue else { throw OAuthError(code: .malformedResponse, reason: "\(name) is not a string") }
            return text
        }
        let tokens = TokenSet(
            accessToken: accessToken, tokenType: tokenType, expiresAt: expiresAt,
            refreshToken: try optional("refresh_token"), scope: try optional("scope"), idToken: try optional("id_token"), idTokenClaims: nil
        )
        return (tokens, object)
    }
}
