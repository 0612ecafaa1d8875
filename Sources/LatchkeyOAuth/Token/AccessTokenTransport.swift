#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An ``HTTPTransport`` that presents an access token to a resource server: as
/// `Authorization: Bearer` (RFC 6750 §2.1), or, for a token bound to a DPoP key, as
/// `Authorization: DPoP` with a fresh proof carrying the token's hash (RFC 9449 §7.1). A
/// `use_dpop_nonce` challenge (§9) is answered once with the nonce the server sent, and
/// nonces are remembered per origin by the ``DPoPSigner``, so the next request to that
/// server carries one from the start.
///
/// An app hands this transport to whatever makes its API calls; it never builds a proof.
/// A request that already carries `Authorization` or `DPoP` is refused rather than
/// overwritten: it was meant for other credentials. Requests follow ``TransportPolicy``
/// (https, or http to a loopback host), so a token never crosses a network in clear.
/// Given ``allowedOrigins``, a request for any other origin is refused before anything is
/// sent (``OAuthError/Code/originNotAllowed``): the token goes only where it was meant to.
public struct AccessTokenTransport: HTTPTransport {
    public let inner: any HTTPTransport
    /// The token's DPoP key; nil for a bearer token.
    public let dpop: DPoPSigner?
    /// The origins the token may be presented to; nil: any (the caller decided).
    public let allowedOrigins: Set<WebOrigin>?
    private let accessToken: String

    /// Presents `accessToken` on every request sent through `inner` for one of
    /// `allowedOrigins` (any origin when nil), with proofs of `dpop`'s key when it is
    /// bound to one.
    public init(inner: any HTTPTransport, accessToken: String, dpop: DPoPSigner?, allowedOrigins: Set<WebOrigin>? = nil) {
        self.inner = inner
        self.accessToken = accessToken
        self.dpop = dpop
        self.allowedOrigins = allowedOrigins
    }

    /// Refuses `url` unless its origin is one of ``allowedOrigins``.
    public static func check(_ url: URL, allowedOrigins: Set<WebOrigin>?) throws {
        guard let allowedOrigins else { return }
        let origin = WebOrigin(url)
        guard let origin, allowedOrigins.contains(origin) else {
            let named = origin?.description ?? url.absoluteString.prefix(256).description
            throw OAuthError.originNotAllowed(reason: "\(named) is not an origin this token may be sent to (allowed: \(allowedOrigins.map(\.description).sorted().joined(separator: ", ")))"
            )
        }
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try Self.check(request.url, allowedOrigins: allowedOrigins)
        let names = Set(request.headers.keys.map { $0.lowercased() })
        guard !names.contains("authorization"), !names.contains(DPoPProof.headerName.lowercased()) else {
            throw OAuthError.conflictingHeaders(reason: "the request already carries an Authorization or DPoP header; AccessTokenTransport sets them")
        }
        try TransportPolicy.check(request.url)
        let accessToken = accessToken
        guard let dpop else {
            var presented = request
            presented.headers["Authorization"] = AccessTokenType.bearer.authorization(accessToken)
            return try await inner.send(presented)
        }
        return try await dpop.send(through: inner) { signer in
            var presented = request
            presented.headers.merge(try signer.headers(method: request.method, url: request.url, accessToken: accessToken)) { $1 }
            return presented
        }
    }
}
