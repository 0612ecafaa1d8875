/// An introspection answer (RFC 7662 §2.2). An inactive token is `{"active": false}` and
/// nothing more, so a caller learns nothing of a token it may not use. A DPoP-bound token
/// carries its key's thumbprint in `cnf.jkt` (RFC 9449 §6.2), for the resource server to
/// check the proof's key against. A token asked for one resource (RFC 8707) names it in
/// `aud`, and is active only to that resource's server.
public struct IntrospectionResponse: Codable, Hashable, Sendable {
    /// RFC 7800 §3.1's confirmation member, with the JWK thumbprint of RFC 9449 §6.
    public struct Confirmation: Codable, Hashable, Sendable {
        public var jkt: String

        public init(jkt: String) {
            self.jkt = jkt
        }
    }

    public var active: Bool
    public var subject: String?
    public var clientID: String?
    public var scope: String?
    /// Seconds since 1970.
    public var expiresAt: Int?
    public var issuer: String?
    public var tokenType: AccessTokenType?
    public var confirmation: Confirmation?
    /// The resources the token is for (RFC 7662 §2.2 `aud`, RFC 8707 §2), if any: written
    /// as one string when there is one, read as a string or an array (RFC 7519 §4.1.3).
    public var audience: [String]?

    public init(
        active: Bool, subject: String? = nil, clientID: String? = nil, scope: String? = nil, expiresAt: Int? = nil,
        issuer: String? = nil, tokenType: AccessTokenType? = nil, confirmation: Confirmation? = nil,
        audience: [String]? = nil
    ) {
        self.active = active
        self.subject = subject
        self.clientID = clientID
        self.scope = scope
        self.expiresAt = expiresAt
        self.issuer = issuer
        self.tokenType = tokenType
        self.confirmation = confirmation
        self.audience = audience
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        active = try container.decode(Bool.self, forKey: .active)
        subject = try container.decodeIfPresent(String.self, forKey: .subject)
        clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        expiresAt = try container.decodeIfPresent(Int.self, forKey: .expiresAt)
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        tokenType = try container.decodeIfPresent(AccessTokenType.self, forKey: .tokenType)
        confirmation = try container.decodeIfPresent(Confirmation.self, forKey: .confirmation)
        if let one = try? container.decodeIfPresent(String.self, forKey: .audience) {
            audience = [one]
        } else {
            audience = try container.decodeIfPresent([String].self, forKey: .audience)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(active, forKey: .active)
        try container.encodeIfPresent(subject, forKey: .subject)
        try container.encodeIfPresent(clientID, forKey: .clientID)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        try container.encodeIfPresent(tokenType, forKey: .tokenType)
        try container.encodeIfPresent(confirmation, forKey: .confirmation)
        if let audience, audience.count == 1 {
            try container.encode(audience[0], forKey: .audience)
        } else {
            try container.encodeIfPresent(audience, forKey: .audience)
        }
    }

    /// The inactive answer.
    public static let inactive = IntrospectionResponse(active: false)

    enum CodingKeys: String, CodingKey {
        case active, scope
        case subject = "sub"
        case clientID = "client_id"
        case expiresAt = "exp"
        case issuer = "iss"
        case tokenType = "token_type"
        case confirmation = "cnf"
        case audience = "aud"
    }
}
