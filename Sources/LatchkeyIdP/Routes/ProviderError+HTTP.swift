import HTTPTypes
import LatchkeyOAuth

/// How HTTP says each kind of refusal: the one place a ``ProviderError`` becomes a status
/// and headers (the services that throw it never name either).
extension ProviderError {
    /// The status of the answer: RFC 6749 §5.2 (400, and 401 for `invalid_client`),
    /// RFC 6750 §3.1 (401 and 403), RFC 9110 §15 for the rest.
    var httpStatus: HTTPResponse.Status {
        switch kind {
        case .invalid: .badRequest
        case .tooLarge: .contentTooLarge
        case .tooSlow: .requestTimeout
        case .clientUnauthenticated, .tokenMissing, .tokenRefused, .proofRefused: .unauthorized
        case .scopeInsufficient, .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .throttled: .tooManyRequests
        case .failed: .internalServerError
        case .unavailable: .serviceUnavailable
        }
    }

    /// The `WWW-Authenticate` challenge of a 401 at a resource (RFC 6750 §3): the scheme
    /// alone when no token came, the scheme with `invalid_token` when one was refused, and
    /// the `DPoP` scheme with the error and the algorithms taken when a proof was
    /// (RFC 9449 §7.1); and a 403 for a token without the scope the resource needs
    /// names `insufficient_scope` (RFC 6750 §3.1).
    var wwwAuthenticate: String? {
        switch kind {
        case .tokenMissing: AccessTokenType.bearer.rawValue
        case .tokenRefused: #"Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked""#
        case .scopeInsufficient: #"Bearer error="insufficient_scope""#
        case .proofRefused: "DPoP error=\"\(code.rawValue)\", algs=\"\(DPoPBinding.algorithms.joined(separator: " "))\""
        default: nil
        }
    }
}
