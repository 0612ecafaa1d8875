/// The token endpoint's successful answer (RFC 6749 §5.1; OIDC Core §3.1.3.3 adds
/// `id_token`).
struct TokenResponse: Encodable, Sendable {
    var accessToken: String
    var tokenType: String
    var expiresIn: Int
    var refreshToken: String?
    var idToken: String
    var scope: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }
}
