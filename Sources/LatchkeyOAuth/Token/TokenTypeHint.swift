/// What kind of token a revocation request carries (RFC 7009 §2.1, `token_type_hint`;
/// the values are registered in RFC 7009 §4.1.2), so the server need not search both.
public enum TokenTypeHint: String, Sendable {
    case accessToken = "access_token"
    case refreshToken = "refresh_token"
}
