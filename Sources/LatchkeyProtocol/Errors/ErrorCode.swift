/// The `error` member of an error answer: the OAuth codes (RFC 6749 §5.2, RFC 6750 §3.1,
/// RFC 8628 §3.5 `slow_down`) and Latchkey's own (docs/PROTOCOL.md, each section's
/// rules). An open set: a provider may send a code this client does not know, and it is
/// kept as sent.
public struct ErrorCode: OpenName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    // RFC 6749 §4.1.2.1 and §5.2.
    public static let invalidRequest = ErrorCode(rawValue: "invalid_request")
    public static let invalidClient = ErrorCode(rawValue: "invalid_client")
    public static let invalidGrant = ErrorCode(rawValue: "invalid_grant")
    public static let invalidScope = ErrorCode(rawValue: "invalid_scope")
    public static let unauthorizedClient = ErrorCode(rawValue: "unauthorized_client")
    public static let unsupportedGrantType = ErrorCode(rawValue: "unsupported_grant_type")
    public static let unsupportedResponseType = ErrorCode(rawValue: "unsupported_response_type")
    public static let accessDenied = ErrorCode(rawValue: "access_denied")
    public static let serverError = ErrorCode(rawValue: "server_error")
    public static let temporarilyUnavailable = ErrorCode(rawValue: "temporarily_unavailable")
    /// RFC 6750 §3.1: a missing, expired or revoked bearer token.
    public static let invalidToken = ErrorCode(rawValue: "invalid_token")
    // RFC 9449 §12.2.
    public static let invalidDPoPProof = ErrorCode(rawValue: "invalid_dpop_proof")
    public static let useDPoPNonce = ErrorCode(rawValue: "use_dpop_nonce")
    /// Too many requests from one address, or for one name: try again later.
    public static let slowDown = ErrorCode(rawValue: "slow_down")

    /// A wrong one-time code (a `verify-code` step, a transfer code); the client may ask again.
    public static let invalidCode = ErrorCode(rawValue: "invalid_code")
    /// The credential was revoked at the provider; the client marks it revoked in its vault.
    public static let credentialRevoked = ErrorCode(rawValue: "credential_revoked")
    /// No such credential, or not one usable for this request.
    public static let invalidCredential = ErrorCode(rawValue: "invalid_credential")
    /// A sign-up profile field is missing or malformed.
    public static let invalidProfile = ErrorCode(rawValue: "invalid_profile")
    /// The job, session, transfer or flow does not exist (any more).
    public static let notFound = ErrorCode(rawValue: "not_found")
}
