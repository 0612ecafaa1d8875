import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// DPoP at the provider (RFC 9449): proofs checked (§4.3, ``DPoPProofVerifier``), each
/// proof's `jti` used once within its acceptance window (§11.1, the `dpop_proofs` table,
/// shared by every instance), and the errors the RFC names (§5, §7.1, §12.2).
struct DPoPBinding: Sendable {
    let configuration: ProviderConfiguration
    /// The server nonces, when `--require-dpop-nonce` asks proofs to carry one.
    let nonces: DPoPNonces?
    /// One for the provider's life (``TokenEndpoint/verifier``): its caches of imported
    /// keys, checked headers and endpoint URLs are what make a client's second proof cheap.
    let verifier: DPoPProofVerifier

    /// The algorithms proofs may use, for discovery (§5.1).
    static let algorithms = [JWSAlgorithm.es256.name, JWSAlgorithm.edDSA.name]

    /// The proof of a request, checked against its method and URL (and the presented
    /// access token); nil when the request carries none.
    func proof(_ headers: [String], method: String, url: URL, accessToken: String? = nil, now: Date) throws -> DPoPVerifiedProof? {
        guard !headers.isEmpty else { return nil }
        let nonces = nonces
        let check = nonces.map { nonces in { (nonce: String) in nonces.isValid(nonce, now: now) } }
        do {
            return try verifier.verify(headers, method: method, url: url, accessToken: accessToken, nonceIsValid: check, now: now)
        } catch let error as OAuthError {
            var refusal = Self.refusal(error.code == .useDPoPNonce ? .useDPoPNonce : .invalidDPoPProof, error.reason, resource: accessToken != nil)
            if error.code == .useDPoPNonce { refusal.dpopNonce = try nonces?.current(now: now) }
            throw refusal
        }
    }

    /// The `DPoP-Nonce` header for a response, when nonces are required: every answer
    /// from the token endpoint and userinfo carries the current one (§8.2).
    func nonceHeader(now: Date) throws -> String? {
        try nonces?.current(now: now)
    }

    /// Records the proof's `jti` (per key) until the proof could no longer be accepted; a
    /// replay is refused (§11.1).
    func spend(_ proof: DPoPVerifiedProof, resource: Bool, in transaction: any SQLTransaction) async throws {
        let id = try ProviderContext.hash(proof.thumbprint + "|" + proof.jti)
        let until = proof.issuedAt.addingTimeInterval(verifier.maximumAge + verifier.maximumClockSkew)
        let fresh = try await transaction.first("""
            INSERT INTO dpop_proofs (id_hash, expires_at) VALUES (\(id), \(until))
            ON CONFLICT (id_hash) DO NOTHING RETURNING id_hash
            """) != nil
        guard fresh else { throw Self.refusal(.invalidDPoPProof, "DPoP proof: this proof (its jti) was already used", resource: resource) }
    }

    static func prune(now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM dpop_proofs WHERE expires_at <= \(now)")
    }

    /// A refusal: an invalid request at the token endpoint (§5), a refused proof at a
    /// resource (§7.1, answered with a `DPoP` challenge).
    static func refusal(_ code: ErrorCode, _ reason: String, resource: Bool) -> ProviderError {
        ProviderError(resource ? .proofRefused : .invalid, code: code, reason: reason)
    }
}
