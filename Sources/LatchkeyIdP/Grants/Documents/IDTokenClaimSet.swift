/// The claims of an ID token the provider signs (OIDC Core §2, §3.1.3.6 for `at_hash`;
/// RFC 8176 for `amr`). Times are seconds since 1970.
struct IDTokenClaimSet: Encodable, Sendable {
    var iss: String
    var sub: String
    var aud: String
    var iat: Int
    var exp: Int
    var authTime: Int
    var nonce: String?
    /// `pop` (proof of possession of a key) and `swk` (a software-secured key).
    var amr: [String]
    var atHash: String

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, iat, exp, nonce, amr
        case authTime = "auth_time"
        case atHash = "at_hash"
    }
}
