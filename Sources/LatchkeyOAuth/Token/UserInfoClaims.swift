/// The userinfo endpoint's claims (OIDC Core §5.3.2), the standard ones of §5.1 that
/// Latchkey uses: the provider encodes them, and a client reads them from the answer of
/// ``OAuthClient/userInfo(accessToken:expectedSubject:dpop:)``, each name spelled once.
public struct UserInfoClaims: Codable, Sendable, Hashable {
    public var sub: String
    public var preferredUsername: String?
    public var name: String?
    public var email: String?

    enum CodingKeys: String, CodingKey {
        case sub, name, email
        case preferredUsername = "preferred_username"
    }

    public init(sub: String, preferredUsername: String? = nil, name: String? = nil, email: String? = nil) {
        self.sub = sub
        self.preferredUsername = preferredUsername
        self.name = name
        self.email = email
    }

    /// The claims of a userinfo answer as ``OAuthClient/userInfo(accessToken:expectedSubject:dpop:)``
    /// returns it; members of another type are taken as absent.
    public init(_ claims: [String: JSONValue]) {
        sub = claims[CodingKeys.sub.rawValue]?.stringValue ?? ""
        preferredUsername = claims[CodingKeys.preferredUsername.rawValue]?.stringValue
        name = claims[CodingKeys.name.rawValue]?.stringValue
        email = claims[CodingKeys.email.rawValue]?.stringValue
    }
}
