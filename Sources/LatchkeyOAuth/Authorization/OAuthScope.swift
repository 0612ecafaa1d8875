/// Scope values (RFC 6749 §3.3) with a meaning OpenID Connect defines: `openid` asks for
/// an ID token (OIDC Core §3.1.2.1), the others for standard claims (§5.4) and refresh
/// tokens (§11).
public enum OAuthScope {
    public static let openID = "openid"
    public static let profile = "profile"
    public static let email = "email"
    public static let offlineAccess = "offline_access"
}
