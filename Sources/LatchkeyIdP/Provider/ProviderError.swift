import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyOAuth

/// A refusal by the provider, in its own terms: what ``Kind`` of refusal it is, and the
/// OAuth-style error (`{"error", "error_description"}`, RFC 6749 §5.2) made of ``code`` and
/// ``reason``. The provider's services throw it; only the HTTP layer
/// (`ProviderError+HTTP.swift` in Routes/) turns a kind into a status and headers, so a
/// service never speaks HTTP. Shaped like every Latchkey error (`LatchkeyErrorTemplate`); the
/// reason is sent to the client, so it never carries a secret, and ``underlying`` never
/// leaves the log.
struct ProviderError: LatchkeyErrorTemplate, Sendable {
    /// What kind of refusal this is.
    var kind: Kind
    /// The `error` member (every code is listed in docs/PROTOCOL.md, "Errors").
    var code: ErrorCode
    /// The `error_description` member.
    var reason: String
    /// A `DPoP-Nonce` to send along (RFC 9449 §8, §9: with `use_dpop_nonce`).
    var dpopNonce: String?
    /// The error this answer stands for: the log names it (``cause``); never sent to the
    /// client.
    var underlying: (any Error)?
    var file: String
    var line: UInt

    init(
        _ kind: Kind, code: ErrorCode, reason: String, dpopNonce: String? = nil,
        underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) {
        self.kind = kind
        self.code = code
        self.reason = reason
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

    /// The kinds of refusal, named for what happened rather than for how HTTP says it.
    enum Kind: Sendable, Hashable {
        /// The request cannot be accepted as it is (a malformed or refused parameter).
        case invalid
        /// The request is larger than the provider takes.
        case tooLarge
        /// The request did not arrive in time.
        case tooSlow
        /// The client is unknown or did not authenticate (RFC 6749 §5.2 `invalid_client`).
        case clientUnauthenticated
        /// The request carried no bearer token (RFC 6750 §3.1: the challenge names the
        /// scheme only).
        case tokenMissing
        /// The bearer token is unknown, expired or revoked (RFC 6750 §3.1 `invalid_token`).
        case tokenRefused
        /// A resource refused the DPoP proof that came with its token (RFC 9449 §7.1).
        case proofRefused
        /// The token is good but lacks the scope the resource needs (RFC 6750 §3.1
        /// `insufficient_scope`).
        case scopeInsufficient
        /// Something this provider does not offer or allow.
        case forbidden
        /// No such thing, or no longer.
        case notFound
        /// The request contradicts what is stored (a name taken, a limit of entries).
        case conflict
        /// A rate or attempt limit was reached.
        case throttled
        /// A fault of the provider's, never the client's.
        case failed
        /// Trying again later may work.
        case unavailable
    }
}

// MARK: - Factories, one per kind of answer (as swift-certificates' `CertificateError`)

extension ProviderError {
    /// a request the endpoint cannot accept, with the RFC 6749 §5.2 (or our own,
    /// docs/PROTOCOL.md) code that says why.
    static func badRequest(
        _ code: ErrorCode, _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> ProviderError {
        ProviderError(.invalid, code: code, reason: reason, underlying: underlying, file: file, line: line)
    }

    /// `invalid_client`: an unknown or unauthenticated client at the token,
    /// revocation or introspection endpoint (RFC 6749 §5.2).
    static func invalidClient(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> ProviderError {
        ProviderError(.clientUnauthenticated, code: .invalidClient, reason: reason, underlying: underlying, file: file, line: line)
    }

    /// `insufficient_scope`: a good token without `scope`, which the resource needs.
    static func insufficientScope(_ scope: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.scopeInsufficient, code: .insufficientScope, reason: "the access token lacks the scope \(scope)", file: file, line: line)
    }

    /// `access_denied`: something this provider does not offer or allow.
    static func accessDenied(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.forbidden, code: .accessDenied, reason: reason, file: file, line: line)
    }

    /// `not_found`.
    static func notFound(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.notFound, code: .notFound, reason: reason, file: file, line: line)
    }

    /// `slow_down`: a limit was reached; the reason says what to wait for.
    static func slowDown(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.throttled, code: .slowDown, reason: reason, file: file, line: line)
    }

    /// `server_error`: a fault of ours, never the client's.
    static func serverError(_ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.failed, code: .serverError, reason: reason, underlying: underlying, file: file, line: line)
    }

    /// `temporarily_unavailable`: trying again later may work.
    static func temporarilyUnavailable(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.unavailable, code: .temporarilyUnavailable, reason: reason, file: file, line: line)
    }

    /// `conflict`: the request contradicts what is stored.
    static func conflict(_ reason: String, file: String = #fileID, line: UInt = #line) -> ProviderError {
        ProviderError(.conflict, code: .conflict, reason: reason, file: file, line: line)
    }

    /// A bearer token that is unknown, expired or revoked (RFC 6750 §3.1 `invalid_token`).
    static let unauthorized = ProviderError(.tokenRefused, code: .invalidToken, reason: "a valid bearer token is required")

    /// A request without a bearer token (RFC 6750 §3.1).
    static let bearerRequired = ProviderError(.tokenMissing, code: .invalidToken, reason: "a bearer token is required")
}
