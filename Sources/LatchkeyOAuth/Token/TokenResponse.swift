#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// The token endpoint's successful answer (RFC 6749 §5.1; OIDC Core §3.1.3.3 adds
/// `id_token`; RFC 9449 §5 the `DPoP` token type): one type for the provider that sends it
/// and the client that reads it (``TokenSet`` is what the client keeps of it).
///
/// Decoding is strict, since the answer comes from outside: `access_token` and
/// `token_type` must be non-empty strings, `expires_in` a number of seconds from 0 to ten
/// years, every other member a string when present.
public struct TokenResponse: Codable, Hashable, Sendable {
    public var accessToken: String
    public var tokenType: AccessTokenType
    /// Seconds the access token lives (RFC 6749 §5.1 RECOMMENDED).
    public var expiresIn: Double?
    public var refreshToken: String?
    public var idToken: String?
    public var scope: String?

    public init(accessToken: String, tokenType: AccessTokenType, expiresIn: Double?, refreshToken: String? = nil, idToken: String? = nil, scope: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }

    /// The longest `expires_in` taken.
    static let longestLifetime: Double = 10 * 365 * 86400

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        tokenType = try container.decode(AccessTokenType.self, forKey: .tokenType)
        guard !accessToken.isEmpty, !tokenType.rawValue.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .accessToken, in: container, debugDescription: "access_token and token_type must not be empty")
        }
        expiresIn = try container.decodeIfPresent(Double.self, forKey: .expiresIn)
        if let expiresIn, !(0..<Self.longestLifetime).contains(expiresIn) {
            throw DecodingError.dataCorruptedError(forKey: .expiresIn, in: container, debugDescription: "expires_in is not a sensible number of seconds")
        }
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
    }

    /// What ``encode(to:)`` gives `JSONEncoder` with sorted keys, written directly
    /// (``JSONObjectWriter``): the provider sends it on every sign-in and refresh.
    public var encodedJSON: Data {
        var writer = JSONObjectWriter(capacity: 256 + accessToken.utf8.count + (refreshToken?.utf8.count ?? 0) + (idToken?.utf8.count ?? 0))
        writer.string(CodingKeys.accessToken.rawValue, accessToken)
        writer.integer(CodingKeys.expiresIn.rawValue, ifPresent: expiresIn.map { Int($0) })
        writer.string(CodingKeys.idToken.rawValue, ifPresent: idToken)
        writer.string(CodingKeys.refreshToken.rawValue, ifPresent: refreshToken)
        writer.string(CodingKeys.scope.rawValue, ifPresent: scope)
        writer.string(CodingKeys.tokenType.rawValue, tokenType.rawValue)
        return writer.finished()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(tokenType, forKey: .tokenType)
        // Whole seconds, as servers send them.
        try container.encodeIfPresent(expiresIn.map { Int($0) }, forKey: .expiresIn)
        try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try container.encodeIfPresent(idToken, forKey: .idToken)
        try container.encodeIfPresent(scope, forKey: .scope)
    }
}
