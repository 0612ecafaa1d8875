import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyOAuth

/// An error the provider answers with: an HTTP status and an OAuth-style error object
/// (`{"error", "error_description"}`, RFC 6749 §5.2) made of ``code`` and ``reason``.
/// Shaped like every Latchkey error (`LatchkeyErrorTemplate`); the reason is sent to the
/// client, so it never carries a secret, and ``underlying`` never leaves the log.
struct ProviderError: LatchkeyErrorTemplate, Sendable {
    /// The HTTP status of the answer.
    var status: Int
    /// The `error` member (every code is listed in docs/PROTOCOL.md, "Errors").
    var code: ErrorCode
    /// The `error_description` member.
    var reason: String
    /// The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3).
    var challenge: String?
    /// A `DPoP-Nonce` to send along (RFC 9449 §8, §9: with `use_dpop_nonce`).
    var dpopNonce: String?
    /// The error this answer stands for: the log names it (``cause``); never sent to the
    /// client.
    var underlying: (any Error)?
    var file: String
    var line: UInt

    init(
        status: Int, code: ErrorCode, reason: String, challenge: String? = nil, dpopNonce: String? = nil,
        underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) {
        self.status = status
        self.code = code
        self.reason = reason
        self.challenge = challenge
        self.dpopNonce = dpopNonce
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// What the log says of ``underlying``: its type and, for Latchkey's own errors, its
    /// code; never its text, which may quote the request.
    var cause: String? {
        guard let underlying else { return nil }
        if let known = underlying as? any LatchkeyErrorTemplate { return "\(type(of: known)).\(known.code)" }
        return "\(type(of: underlying))"
    }
}

// MARK: - Factories, one per kind of answer (as swift-certificates' `CertificateError`)

extension ProviderError {
    /// 400: a request the endpoint cannot accept, with the RFC 6749 §5.2 (or our own,
    /// docs/PROTOCOL.md) code that says why.
    static func badRequest(
        _ code: ErrorCode, _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> ProviderError {
        ProviderError(status: 400, code: code, reason: reason, underlying: underlying, file: file, line: line)
    }

    /// 401 `invalid_client`: an unknown or unauthenticated client at the token,
    /// revocation or introspection endpoint (RFC 6749 §5.2).
    static func invalidClient(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(status: 401, code: .invalidClient, reason: reason, file: file, line: line)
    }

    /// 403 `access_denied`: something this provider does not offer or allow.
    static func accessDenied(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(status: 403, code: .accessDenied, reason: reason, file: file, line: line)
    }

    /// 404 `not_found`.
    static func notFound(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(status: 404, code: .notFound, reason: reason, file: file, line: line)
    }

    /// 429 `slow_down`: a limit was reached; the reason says what to wait for.
    static func slowDown(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(status: 429, code: .slowDown, reason: reason, file: file, line: line)
    }

    /// 500 `server_error`: a fault of ours, never the client's.
    static func serverError(_ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(status: 500, code: .serverError, reason: reason, underlying: underlying, file: file, line: line)
    }

    /// 503 `temporarily_unavailable`: trying again later may work.
    static func temporarilyUnavailable(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(status: 503, code: .temporarilyUnavailable, reason: reason, file: file, line: line)
    }

    /// A bearer token that is unknown, expired or revoked (RFC 6750 §3.1 `invalid_token`).
    static let unauthorized = ProviderError(
        status: 401, code: .invalidToken, reason: "a valid bearer token is required",
        challenge: #"Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked""#
    )

    /// A request without a bearer token: the challenge names the scheme only, with no
    /// error code (RFC 6750 §3.1).
    static let bearerRequired = ProviderError(
        status: 401, code: .invalidToken, reason: "a bearer token is required", challenge: AccessTokenType.bearer.rawValue
    )
}
