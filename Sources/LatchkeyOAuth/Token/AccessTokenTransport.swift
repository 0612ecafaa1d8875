import Foundation

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
public struct AccessTokenTransport: HTTPTransport {
    public let inner: any HTTPTransport
    /// The token's DPoP key; nil for a bearer token.
    public let dpop: DPoPSigner?
    private let accessToken: String

    /// Presents `accessToken` on every request sent through `inner`, with proofs of
    /// `dpop`'s key when it is bound to one.
    public init(inner: any HTTPTransport, accessToken: String, dpop: DPoPSigner?) {
        self.inner = inner
        self.accessToken = accessToken
        self.dpop = dpop
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let names = Set(request.headers.keys.map { $0.lowercased() })
        guard !names.contains("authorization"), !names.contains(DPoPProof.headerName.lowercased()) else {
            throw OAuthError(code: .conflictingHeaders, reason: "the request already carries an Authorization or DPoP header; AccessTokenTransport sets them")
        }
        try TransportPolicy.check(request.url)
        let accessToken = accessToken
        guard let dpop else {
            var presented = request
            presented.headers["Authorization"] = "Bearer " + accessToken
            return try await inner.send(presented)
        }
        return try await dpop.send(through: inner) { signer in
            var presented = request
            presented.headers.merge(try signer.headers(method: request.method, url: request.url, accessToken: accessToken)) { $1 }
            return presented
        }
    }
}
