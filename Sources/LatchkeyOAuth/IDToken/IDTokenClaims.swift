public import Foundation

/// The claims of a validated ID token (OIDC Core §2), with every member kept in ``all``.
public struct IDTokenClaims: Sendable, Hashable {
    public let issuer: String
    public let subject: String
    public let audiences: [String]
    public let expiresAt: Date
    public let issuedAt: Date
    public let authorizedParty: String?
    public let nonce: String?
    public let authTime: Date?
    public let accessTokenHash: String?
    /// Every claim as received.
    public let all: [String: JSONValue]

    /// Claims read from a JSON object; `package` for the facade's token cache, which keeps
    /// the claims it validated when the tokens arrived.
    package init(_ claims: [String: JSONValue]) throws {
        func missing(_ name: String) -> OAuthError {
            OAuthError(code: .claimMissing, reason: "ID token claim \"\(name)\" is missing or of the wrong type")
        }
        guard let issuer = claims["iss"]?.stringValue else { throw missing("iss") }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw missing("sub") }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let single)?: audiences = [single]
        case .array(let many)?:
            audiences = many.compactMap(\.stringValue)
            guard audiences.count == many.count, !audiences.isEmpty else { throw missing("aud") }
        default: throw missing("aud")
        }
        guard let exp = claims["exp"]?.numberValue else { throw missing("exp") }
        guard let iat = claims["iat"]?.numberValue else { throw missing("iat") }
        func optionalString(_ name: String) throws -> String? {
            guard let value = claims[name] else { return nil }
            guard let text = value.stringValue else { throw missing(name) }
            return text
        }
        self.issuer = issuer
        self.subject = subject
        self.audiences = audiences
        self.expiresAt = Date(timeIntervalSince1970: exp)
        self.issuedAt = Date(timeIntervalSince1970: iat)
        self.authorizedParty = try optionalString("azp")
        self.nonce = try optionalString("nonce")
        self.accessTokenHash = try optionalString("at_hash")
        if let authTime = claims["auth_time"] {
            guard let seconds = authTime.numberValue else { throw missing("auth_time") }
            self.authTime = Date(timeIntervalSince1970: seconds)
        } else {
            self.authTime = nil
        }
        self.all = claims
    }
}
