#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto
import Synchronization

/// A client's DPoP key (RFC 9449) with what it has learnt from servers: it signs a proof
/// for each request (``DPoPProof``) and keeps the last `DPoP-Nonce` each origin sent
/// (§8, §9), so the next proof to that origin carries it.
///
/// The key may live anywhere: ``init(publicKey:sign:)`` takes a signing closure, so a key
/// in a `KeyVault` (or a TPM behind it) signs without leaving it.
public final class DPoPSigner: Sendable {
    public let publicKey: VerifyingKey
    /// The key's RFC 7638 thumbprint: the `jkt` tokens are bound to, and the
    /// authorization request's `dpop_jkt` (§10).
    public let thumbprint: String
    private let signer: @Sendable (Data) throws -> Data
    private let algorithm: JWSAlgorithm
    /// The protected header, the same for every proof of this key.
    private let encodedHeader: String
    /// What each request URL this key signed for gives every proof to it, by URL: a client
    /// calls the same few endpoints (a challenge-flow sign-in: the challenge endpoint twice,
    /// then `/token`), and working out `htu` (§4.2) and the origin parses the URL.
    private let targets = Mutex<[String: Target]>([:])
    /// URLs remembered at most; past that the table starts again.
    static let maximumTargets = 16
    /// The last access token presented and its `ath`: a client presents one token many
    /// times.
    private let lastAccessTokenHash = Mutex<(String, String)?>(nil)
    private let nonces = Mutex<[WebOrigin: String]>([:])
    /// A request URL's `htu` as a JSON string, and the origin whose nonce (§8.2) a proof
    /// to it carries (nil for a URL without one).
    private struct Target: Sendable {
        var htuJSON: String
        var origin: WebOrigin?
    }
    /// Origins remembered at most; a nonce is short, but a client talking to many servers
    /// should not grow without bound.
    static let maximumOrigins = 64

    /// A DPoP key whose private half signs through `sign` (DER for ES256, as `KeyVault.sign`
    /// and `SigningKey` give; 64 bytes for Ed25519).
    public init(publicKey: VerifyingKey, sign: @escaping @Sendable (Data) throws -> Data) throws {
        self.publicKey = publicKey
        thumbprint = try publicKey.jwk.thumbprint()
        signer = sign
        algorithm = try DPoPProof.algorithm(for: publicKey)
        encodedHeader = try DPoPProof.encodedHeader(publicKey: publicKey, algorithm: algorithm)
    }

    /// A software DPoP key.
    public convenience init(key: SigningKey) throws {
        try self.init(publicKey: key.publicKey) { try key.signature(for: $0) }
    }

    /// The headers for one request: `DPoP` with a fresh proof, and, when an access token
    /// is presented, `Authorization: DPoP <token>` and the proof's `ath` (§7.1).
    public func headers(method: String, url: URL, accessToken: String? = nil) throws -> [String: String] {
        let target = try target(for: url)
        var ath: String?
        if let accessToken {
            if let (last, hash) = lastAccessTokenHash.withLock({ $0 }), last == accessToken {
                ath = hash
            } else {
                let hash = try DPoPProof.accessTokenHash(accessToken)
                lastAccessTokenHash.withLock { $0 = (accessToken, hash) }
                ath = hash
            }
        }
        let proof = try DPoPProof.signed(
            encodedHeader: encodedHeader, algorithm: algorithm, method: method, htuJSON: target.htuJSON, accessTokenHash: ath,
            nonce: target.origin.flatMap { origin in nonces.withLock { $0[origin] } }, issuedAt: Date(), sign: signer
        )
        var headers = [DPoPProof.headerName: proof]
        if let accessToken { headers["Authorization"] = AccessTokenType.dpop.authorization(accessToken) }
        return headers
    }

    /// The nonce last heard from `url`'s origin.
    public func nonce(for url: URL) -> String? {
        guard let origin = WebOrigin(url) else { return nil }
        return nonces.withLock { $0[origin] }
    }

    /// `url`'s ``Target``, worked out once per URL.
    private func target(for url: URL) throws -> Target {
        let text = url.absoluteString
        if let known = targets.withLock({ $0[text] }) { return known }
        let target = Target(htuJSON: JSONObjectWriter.quoted(try DPoPTarget(url).text), origin: WebOrigin(url))
        targets.withLock { targets in
            if targets.count >= Self.maximumTargets { targets.removeAll() }
            targets[text] = target
        }
        return target
    }

    /// Remembers the `DPoP-Nonce` of a response from `url` (every response may carry one,
    /// §8.2). Over-long or control-laden values are ignored.
    public func remember(nonce: String, from url: URL) {
        guard !nonce.isEmpty, nonce.utf8.count <= 512, nonce.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else { return }
        guard let origin = targets.withLock({ $0[url.absoluteString]?.origin }) ?? WebOrigin(url) else { return }
        nonces.withLock { nonces in
            if nonces[origin] == nil, nonces.count >= Self.maximumOrigins { nonces.removeAll() }
            nonces[origin] = nonce
        }
    }

    /// Sends a request made by `make` (called again for each attempt, so every attempt has
    /// a fresh proof): every `DPoP-Nonce` a response carries is remembered (§8.2), and a
    /// `use_dpop_nonce` refusal — 400 with that error from an authorization server (§8),
    /// 401 with a DPoP challenge naming it from a resource server (§9) — is retried once
    /// with the nonce it sent. A second refusal is returned as it came.
    public func send(
        through transport: any HTTPTransport,
        isolation: isolated (any Actor)? = #isolation,
        _ make: (DPoPSigner) throws -> TransportRequest
    ) async throws -> TransportResponse {
        var request = try make(self)
        var response = try await transport.send(request)
        for attempt in 0..<2 {
            guard let nonce = response.headers[DPoPProof.nonceHeaderName.lowercased()] else { return response }
            remember(nonce: nonce, from: request.url)
            guard attempt == 0, Self.asksForNonce(response) else { return response }
            request = try make(self)
            response = try await transport.send(request)
        }
        return response
    }

    /// A `use_dpop_nonce` answer: the error object's code, or a DPoP challenge naming it.
    static func asksForNonce(_ response: TransportResponse) -> Bool {
        if response.status == 401, let challenge = response.headers["www-authenticate"] {
            return challenge.lowercased().hasPrefix("dpop") && challenge.contains("use_dpop_nonce")
        }
        guard response.status == 400, response.body.count <= 64 * 1024 else { return false }
        return (try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body))?.error == .useDPoPNonce
    }
}
