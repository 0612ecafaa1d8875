#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// A JWT a client signs to authenticate at a token endpoint (`private_key_jwt`: RFC 7523
/// §2.2 and §3, OIDC Core §9), made and checked here so the client and Latchkey's provider
/// read the same rules.
///
/// The audience is the provider's **issuer identifier as a single string**, as
/// draft-ietf-oauth-rfc7523bis requires since the audience-injection attacks (an assertion
/// made for one provider's token endpoint, replayed by a malicious provider elsewhere);
/// ``Audience/tokenEndpoint`` remains for providers that still demand the endpoint's URL.
public struct ClientAssertion: Sendable {
    /// RFC 7523 §2.2: the `client_assertion_type` of a JWT.
    public static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// How long an assertion this client makes lives (RFC 7523 §3 item 4 leaves it to the
    /// parties; five minutes is what providers commonly accept).
    public static let lifetime: TimeInterval = 300
    /// The longest lifetime (`exp − iat`) the provider accepts.
    public static let maximumLifetime: TimeInterval = 600
    /// Largest assertion accepted.
    public static let maximumSize = 8 * 1024

    /// What the assertion's `aud` names.
    public enum Audience: String, Sendable, CaseIterable {
        /// The issuer identifier (draft-ietf-oauth-rfc7523bis §4): the default.
        case issuer
        /// The token endpoint's URL (RFC 7523 §3 item 3), for providers that still ask
        /// for it (Okta's and Entra ID's documentation say so).
        case tokenEndpoint = "token-endpoint"
    }

    /// The claims of RFC 7523 §3.
    public struct Claims: Codable, Hashable, Sendable {
        /// `iss`: the client id (RFC 7523 §3 item 1).
        public var issuer: String
        /// `sub`: the client id again (item 2, for client authentication).
        public var subject: String
        /// `aud`: one string (a list is accepted on reading only when it holds one value).
        public var audience: String
        /// `jti`: 128 random bits, base64url; the provider refuses one it has seen.
        public var id: String
        public var issuedAt: Date
        public var expiresAt: Date
        /// `nbf` (RFC 7519 §4.1.5, RFC 7523 §3 item 5): optional; an assertion is refused
        /// before it.
        public var notBefore: Date?

        enum CodingKeys: String, CodingKey {
            case issuer = "iss", subject = "sub", audience = "aud", id = "jti", issuedAt = "iat", expiresAt = "exp", notBefore = "nbf"
        }

        public init(issuer: String, subject: String, audience: String, id: String, issuedAt: Date, expiresAt: Date, notBefore: Date? = nil) {
            self.issuer = issuer
            self.subject = subject
            self.audience = audience
            self.id = id
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
            self.notBefore = notBefore
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            issuer = try container.decode(String.self, forKey: .issuer)
            subject = try container.decode(String.self, forKey: .subject)
            if let single = try? container.decode(String.self, forKey: .audience) {
                audience = single
            } else {
                // A list is refused unless it holds exactly one value (rfc7523bis §4).
                let list = try container.decode([String].self, forKey: .audience)
                guard list.count == 1 else {
                    throw DecodingError.dataCorruptedError(forKey: .audience, in: container, debugDescription: "aud holds \(list.count) values, not one")
                }
                audience = list[0]
            }
            id = try container.decode(String.self, forKey: .id)
            issuedAt = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .issuedAt))
            expiresAt = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .expiresAt))
            notBefore = try container.decodeIfPresent(Double.self, forKey: .notBefore).map(Date.init(timeIntervalSince1970:))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(issuer, forKey: .issuer)
            try container.encode(subject, forKey: .subject)
            try container.encode(audience, forKey: .audience)
            try container.encode(id, forKey: .id)
            try container.encode(Int64(issuedAt.timeIntervalSince1970), forKey: .issuedAt)
            try container.encode(Int64(expiresAt.timeIntervalSince1970), forKey: .expiresAt)
            try container.encodeIfPresent(notBefore.map { Int64($0.timeIntervalSince1970) }, forKey: .notBefore)
        }
    }

    /// A fresh assertion for `clientID`, signed by `signer`: `iss` = `sub` = the client id,
    /// a 128-bit random `jti`, `iat` now, `exp` five minutes on, `kid` the key's thumbprint.
    public static func make(clientID: String, audience: String, signer: ClientAssertionSigner, now: Date = Date()) throws -> String {
        let claims = Claims(
            issuer: clientID, subject: clientID, audience: audience, id: Base64URL.encode(try SecureRandom.bytes(count: 16)),
            issuedAt: now, expiresAt: now.addingTimeInterval(lifetime)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try signer.sign(payload: encoder.encode(claims), type: "JWT")
    }

    /// Checks an assertion as a provider must (RFC 7523 §3, rfc7523bis §4): signed by a key
    /// of `keys` (by `kid`, or the only key of its type), `iss` = `sub` = `clientID`, `aud`
    /// one of `audiences` and a single value, `exp` in the future and at most
    /// ``maximumLifetime`` after `iat`, `iat` and `nbf` (when present) not in the future
    /// (each with `leeway`: RFC 7523 §3 items 4–6 allow "some small leeway").
    /// Whether the `jti` was seen before is the caller's to check, with its store.
    public static func verify(
        _ compact: String, clientID: String, keys: JWKSet, audiences: [String], now: Date = Date(), leeway: TimeInterval = 30
    ) throws -> Claims {
        guard compact.utf8.count <= maximumSize else { throw OAuthError.invalidClientAssertion(reason: "the client assertion is over \(maximumSize) bytes") }
        let jws = try JWS(compact: compact)
        if let type = jws.header["typ"]?.stringValue, !["jwt", "client-authentication+jwt"].contains(type.lowercased()) {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion's typ is not JWT")
        }
        guard let key = try keys.key(for: jws) else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion is signed with a key the client has not registered")
        }
        try jws.verify(with: key)
        let claims: Claims
        do {
            claims = try JSONDecoder().decode(Claims.self, from: jws.payload)
        } catch {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion lacks iss, sub, aud, jti, iat or exp, or has one (or nbf) of the wrong type", underlying: error)
        }
        guard claims.issuer == clientID, claims.subject == clientID else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion's iss and sub must both be the client id")
        }
        guard audiences.contains(claims.audience) else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion is for another audience")
        }
        guard claims.expiresAt.addingTimeInterval(leeway) > now else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion has expired")
        }
        guard claims.issuedAt <= now.addingTimeInterval(leeway) else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion is issued in the future")
        }
        if let notBefore = claims.notBefore, notBefore > now.addingTimeInterval(leeway) {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion is not valid yet (its nbf is in the future)")
        }
        guard claims.expiresAt.timeIntervalSince(claims.issuedAt) <= maximumLifetime else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion lives longer than \(Int(maximumLifetime)) seconds")
        }
        guard !claims.id.isEmpty, claims.id.utf8.count <= 256 else {
            throw OAuthError.invalidClientAssertion(reason: "the client assertion's jti is empty or over 256 bytes")
        }
        return claims
    }
}
