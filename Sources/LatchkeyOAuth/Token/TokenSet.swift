#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
    public var isDPoPBound: Bool { Self.isDPoPBound(tokenType: tokenType) }

    /// Whether a `token_type` names DPoP-bound tokens (RFC 9449 §5; case-insensitive, as
    /// RFC 6749 §7.1 has token types).
    public static func isDPoPBound(tokenType: String) -> Bool { tokenType.lowercased() == "dpop" }

    /// Parses a successful token response body (``TokenResponse``, at most 256 KiB).
    /// `dpop`: whether the request carried a DPoP proof, so `token_type: DPoP` may be
    /// answered (a server without DPoP answers Bearer, §5; a DPoP token nobody asked for
    /// is refused).
    static func parse(_ body: Data, now: Date, dpop: Bool = false) throws -> TokenSet {
        guard body.count <= 256 * 1024 else { throw OAuthError.responseTooLarge(reason: "token response over 256 KiB") }
        let response: TokenResponse
        do {
            response = try JSONDecoder().decode(TokenResponse.self, from: body)
        } catch {
            throw OAuthError.malformedResponse(reason: "the token response is malformed: \(Self.describe(error))", underlying: error)
        }
        guard response.tokenType == .bearer || (dpop && response.tokenType == .dpop) else {
            throw OAuthError.unsupportedTokenType(reason: "token_type \(response.tokenType.rawValue.prefix(64)) is not \(dpop ? "Bearer or DPoP" : "Bearer")")
        }
        return TokenSet(
            accessToken: response.accessToken, tokenType: response.tokenType.rawValue, expiresAt: response.expiresIn.map { now.addingTimeInterval($0) },
            refreshToken: response.refreshToken, scope: response.scope, idToken: response.idToken, idTokenClaims: nil
        )
    }

    /// What a decoding error says, without the body's values.
    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: "\(key.stringValue) is missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            "\(context.codingPath.last?.stringValue ?? "the answer") has the wrong type"
        case .dataCorrupted(let context)?: context.debugDescription.prefix(120).description
        default: "not JSON"
        }
    }
}
