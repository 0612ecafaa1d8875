import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyOAuth

/// An error the provider answers with: an HTTP status and an OAuth-style error object
/// (`{"error", "error_description"}`, RFC 6749 §5.2). Descriptions never carry secrets.
struct ProviderError: Error, Sendable {
    var status: Int
    var error: ErrorCode
    var description: String
    /// The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3).
    var challenge: String?
    /// A `DPoP-Nonce` to send along (RFC 9449 §8, §9: with `use_dpop_nonce`).
    var dpopNonce: String?
    /// The error this answer stands for: the log names it (``cause``); never sent to the
    /// client.
    var underlying: (any Error)?

    static func badRequest(_ error: ErrorCode, _ description: String, underlying: (any Error)? = nil) -> ProviderError {
        ProviderError(status: 400, error: error, description: description, underlying: underlying)
    }

    /// What the log says of ``underlying``: its type and, for Latchkey's own errors, its
    /// code; never its text, which may quote the request.
    var cause: String? {
        guard let underlying else { return nil }
        if let known = underlying as? any LatchkeyErrorTemplate { return "\(type(of: known)).\(known.code)" }
        return "\(type(of: underlying))"
    }

    static func notFound(_ description: String) -> ProviderError {
        ProviderError(status: 404, error: .notFound, description: description)
    }

    /// A bearer token that is unknown, expired or revoked (RFC 6750 §3.1 `invalid_token`).
    static let unauthorized = ProviderError(
        status: 401, error: .invalidToken, description: "a valid bearer token is required",
        challenge: #"Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked""#
    )

    /// A request without a bearer token: the challenge names the scheme only, with no
    /// error code (RFC 6750 §3.1).
    static let bearerRequired = ProviderError(
        status: 401, error: .invalidToken, description: "a bearer token is required", challenge: AccessTokenType.bearer.rawValue
    )

    /// An unknown or unauthenticated client at the token or revocation endpoint (RFC 6749 §5.2).
    static let invalidClient = ProviderError(status: 401, error: .invalidClient, description: "unknown client_id")
}
