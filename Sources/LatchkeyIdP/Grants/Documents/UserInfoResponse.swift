/// The userinfo endpoint's claims (OIDC Core §5.3.2, standard claims of §5.1).
struct UserInfoResponse: Encodable, Sendable {
    var sub: String
    var preferredUsername: String
    var name: String
    var email: String?

    enum CodingKeys: String, CodingKey {
        case sub, name, email
        case preferredUsername = "preferred_username"
    }
}
