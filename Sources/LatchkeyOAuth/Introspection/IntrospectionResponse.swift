/// An introspection answer (RFC 7662 §2.2). An inactive token is `{"active": false}` and
/// nothing more, so a caller learns nothing of a token it may not use. A DPoP-bound token
/// carries its key's thumbprint in `cnf.jkt` (RFC 9449 §6.2), for the resource server to
/// check the proof's key against.
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

    public init(
        active: Bool, subject: String? = nil, clientID: String? = nil, scope: String? = nil, expiresAt: Int? = nil,
        issuer: String? = nil, tokenType: AccessTokenType? = nil, confirmation: Confirmation? = nil
    ) {
        self.active = active
        self.subject = subject
        self.clientID = clientID
        self.scope = scope
        self.expiresAt = expiresAt
        self.issuer = issuer
        self.tokenType = tokenType
        self.confirmation = confirmation
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
    }
}
