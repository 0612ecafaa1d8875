/// The `error` member of an OAuth error answer (RFC 6749 §4.1.2.1 and §5.2), declared once
/// for the client and the provider. An open set: a provider may send a code this library
/// does not know, and it is kept as sent, so it is a struct with named constants, not an
/// enum; and it takes no string literal, so every code a program sends or matches is one
/// declared here (or in `LatchkeyProtocol` for Latchkey's own, docs/PROTOCOL.md).
public struct OAuthErrorCode: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    // RFC 6749 §4.1.2.1 and §5.2.
    public static let invalidRequest = OAuthErrorCode(rawValue: "invalid_request")
    public static let invalidClient = OAuthErrorCode(rawValue: "invalid_client")
    public static let invalidGrant = OAuthErrorCode(rawValue: "invalid_grant")
    public static let invalidScope = OAuthErrorCode(rawValue: "invalid_scope")
    public static let unauthorizedClient = OAuthErrorCode(rawValue: "unauthorized_client")
    public static let unsupportedGrantType = OAuthErrorCode(rawValue: "unsupported_grant_type")
    public static let unsupportedResponseType = OAuthErrorCode(rawValue: "unsupported_response_type")
    public static let accessDenied = OAuthErrorCode(rawValue: "access_denied")
    public static let serverError = OAuthErrorCode(rawValue: "server_error")
    public static let temporarilyUnavailable = OAuthErrorCode(rawValue: "temporarily_unavailable")
    /// RFC 8707 §2: the `resource` asked for is unknown, not allowed to this client, or
    /// not the one the grant was made for.
    public static let invalidTarget = OAuthErrorCode(rawValue: "invalid_target")
    /// RFC 7591 §3.2.2: a registration's redirect URI, or another member, is refused.
    public static let invalidRedirectURI = OAuthErrorCode(rawValue: "invalid_redirect_uri")
    public static let invalidClientMetadata = OAuthErrorCode(rawValue: "invalid_client_metadata")
    /// RFC 6750 §3.1: a missing, expired or revoked bearer token.
    public static let invalidToken = OAuthErrorCode(rawValue: "invalid_token")
    /// RFC 6750 §3.1: the token is good but lacks the scope the resource needs.
    public static let insufficientScope = OAuthErrorCode(rawValue: "insufficient_scope")
    // RFC 9449 §12.2.
    public static let invalidDPoPProof = OAuthErrorCode(rawValue: "invalid_dpop_proof")
    public static let useDPoPNonce = OAuthErrorCode(rawValue: "use_dpop_nonce")
    /// RFC 8628 §3.5 (and Latchkey's limits): too many requests; try again later.
    public static let slowDown = OAuthErrorCode(rawValue: "slow_down")
    /// RFC 8628 §3.5: the person has not approved or denied the device yet; poll again.
    public static let authorizationPending = OAuthErrorCode(rawValue: "authorization_pending")
    /// draft-ietf-oauth-first-party-apps-04 §5.2.2.1: more is needed before a code (403).
    public static let insufficientAuthorization = OAuthErrorCode(rawValue: "insufficient_authorization")
    /// draft-ietf-oauth-first-party-apps-04 §5.2.2.1: the `auth_session` is unknown,
    /// expired, spent or not this client's.
    public static let invalidSession = OAuthErrorCode(rawValue: "invalid_session")
    /// RFC 8628 §3.5: the device code has expired; start again.
    public static let expiredToken = OAuthErrorCode(rawValue: "expired_token")
}
