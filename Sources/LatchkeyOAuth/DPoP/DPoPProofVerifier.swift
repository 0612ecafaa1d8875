#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// Checks a DPoP proof the way RFC 9449 §4.3 lists, for an authorization server's token
/// endpoint or a resource server. What it cannot know is left to the caller, with what it
/// needs: that ``DPoPVerifiedProof/jti`` was not seen before within the window (§11.1,
/// a replay store), and that ``DPoPVerifiedProof/thumbprint`` is the key a presented token
/// is bound to (`cnf.jkt`, §6.1).
///
/// Every failure is ``OAuthError/Code/invalidDPoPProof`` naming the check, except a
/// missing or unknown nonce where one is required: ``OAuthError/Code/useDPoPNonce``.
public struct DPoPProofVerifier: Sendable {
    /// The algorithms accepted (§4.3 step 5: asymmetric only; `none`, HMAC and anything
    /// unknown never are). RS256 is not offered: DPoP keys here are ES256 or EdDSA.
    public var algorithms: Set<JWSAlgorithm> = [.es256, .edDSA]
    /// How old a proof's `iat` may be (§4.3 step 11, §11.1), and how far ahead of this
    /// clock it may be.
    public var maximumAge: TimeInterval = 300
    public var maximumClockSkew: TimeInterval = 60
    /// The largest proof accepted: a DPoP header is small, and a bound stops a flood of
    /// large headers from costing parse time.
    public static let maximumSize = 8 * 1024
    /// Keys already imported, by their members: a client signs every proof with the same
    /// key, and importing it is a good part of a check's cost.
    private let keys = DPoPKeyCache()
    /// The request URLs' normal forms: a server checks proofs for a few endpoints.
    private let targets = DPoPTargetCache()
    /// Checked protected headers by their base64url text (a flood of made-up headers
    /// costs its sender a full parse each, and this cache its contents).
    private let headers = BoundedCache<CheckedHeader>(capacity: 1024)

    public init() {}

    /// Checks the DPoP header values of one request (`proofs`: every `DPoP` header, so two
    /// of them are refused, §4.3 step 1) against its `method` and `url`. With an
    /// `accessToken`, the proof must carry its `ath`. With `nonceIsValid`, the proof must
    /// carry a nonce it accepts.
    public func verify(
        _ proofs: [String],
        method: String,
        url: URL,
        accessToken: String? = nil,
        nonceIsValid: ((String) -> Bool)? = nil,
        now: Date = Date()
    ) throws -> DPoPVerifiedProof {
        func refuse(_ why: String) -> OAuthError {
            OAuthError.invalidDPoPProof(reason: "DPoP proof: \(why)")
        }
        guard proofs.count == 1, let proof = proofs.first else {
            throw refuse(proofs.isEmpty ? "none was sent" : "\(proofs.count) DPoP headers; exactly one is allowed")
        }
        guard proof.utf8.count <= Self.maximumSize else { throw refuse("over \(Self.maximumSize) bytes") }
        // Split on the bytes: a proof is ASCII, and walking it as Characters cost more than
        // parsing its claims.
        let parts = proof.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false).map { Substring($0) }
        guard parts.count == 3 else { throw refuse("JWS: \(parts.count) parts instead of 3") }
        // Header (§4.3 steps 4 to 7), checked once per distinct header: a client sends the
        // same one with every proof.
        let header = try headers.value(String(parts[0])) { try checkedHeader(proof, refuse: refuse) }
        guard let header, algorithms.contains(header.algorithm) else { throw refuse("alg \(header?.algorithm.description ?? "?") is not accepted") }
        let payload: Data
        do {
            payload = try Base64URL.decode(parts[1])
            let signature = try Base64URL.decode(parts[2])
            let signingInput = Data(proof.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
            // RFC 7518 §3.4: ES256 is r ‖ s, 64 bytes; OpenSSL wants DER.
            let signed = header.algorithm == .es256 ? try ECDSASignature(rawRepresentation: signature).derRepresentation : signature
            guard header.key.isValidSignature(signed, for: signingInput) else { throw refuse("the JWS signature does not verify") }
        } catch let error as OAuthError {
            throw error
        } catch {
            throw refuse("JWS: a part is not base64url, or the signature is not 64 bytes")
        }
        // Claims (§4.3 steps 3, 8 to 12).
        // A flat object of strings and numbers, no name twice: what RFC 9449 §4.2 defines,
        // read by the vault's strict parser (Foundation's JSON decoder took a third of a check).
        guard let claims = try? FlatJSONObject(parsing: payload) else {
            throw refuse("the claims are not one flat JSON object of strings and numbers without repeated names")
        }
        guard let jti = claims.string("jti"), (16...256).contains(jti.utf8.count) else {
            throw refuse("jti is missing or not 16 to 256 characters")
        }
        guard let htm = claims.string("htm"), htm == method else { throw refuse("htm does not match the request's method \(method)") }
        guard let htu = claims.string("htu") else { throw refuse("htu is missing") }
        guard try targets.target(htu) == targets.target(url.absoluteString) else { throw refuse("htu does not match the request's URL") }
        guard let iat = claims.number("iat"), iat.isFinite, iat >= 0 else { throw refuse("iat is missing or not a NumericDate") }
        let age = now.timeIntervalSince1970 - iat
        guard age <= maximumAge, age >= -maximumClockSkew else {
            throw refuse(age > 0 ? "iat is \(Int(age)) s old (at most \(Int(maximumAge)))" : "iat is \(Int(-age)) s in the future")
        }
        if let accessToken {
            // Compared as digests: decoding the claim is cheaper than encoding the hash.
            guard let ath = claims.string("ath"), ath.utf8.count == 43, let claimed = try? Base64URL.decode(ath),
                  ConstantTime.isEqual(claimed, try DigestAlgorithm.sha256.hash(Data(accessToken.utf8)))
            else { throw refuse("ath is missing or is not the hash of the presented access token") }
        }
        if let nonceIsValid {
            guard let nonce = claims.string("nonce"), nonce.utf8.count <= 512, nonceIsValid(nonce) else {
                throw OAuthError.useDPoPNonce(reason: "DPoP proof: the server's current nonce is required")
            }
        }
        return DPoPVerifiedProof(
            thumbprint: header.thumbprint, jti: jti, issuedAt: Date(timeIntervalSince1970: iat), publicKey: header.key, algorithm: header.algorithm
        )
    }

    /// A protected header that passed §4.3 steps 4 to 7: its key, thumbprint and alg.
    struct CheckedHeader: Sendable {
        let key: VerifyingKey
        let thumbprint: String
        let algorithm: JWSAlgorithm
    }

    /// Parses `proof` as a JWS (three base64url parts, a JSON header, an alg on the JOSE
    /// allow-list, no `crit`) and checks its header: typ, a jwk of public members only
    /// that imports as a key of the alg's type.
    private func checkedHeader(_ proof: String, refuse: (String) -> OAuthError) throws -> CheckedHeader {
        let jws: JWS
        do {
            jws = try JWS(compact: proof)
        } catch let error as OAuthError {
            throw refuse(error.reason)
        }
        guard jws.header["typ"]?.stringValue?.lowercased() == DPoPProof.type else { throw refuse("typ is not \(DPoPProof.type)") }
        guard algorithms.contains(jws.algorithm) else { throw refuse("alg \(jws.algorithm) is not accepted") }
        guard case .object(let members)? = jws.header["jwk"] else { throw refuse("the header has no jwk object") }
        let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].filter { members[$0] != nil }
        guard privateMembers.isEmpty else {
            throw refuse("the jwk carries private key members (\(privateMembers.joined(separator: ", ")))")
        }
        guard let (key, thumbprint) = keys.key(members), key.keyType == jws.algorithm.keyType else {
            throw refuse("the jwk is not a usable public key for alg \(jws.algorithm)")
        }
        return CheckedHeader(key: key, thumbprint: thumbprint, algorithm: jws.algorithm)
    }
}

/// What a proof that passed ``DPoPProofVerifier`` proves.
public struct DPoPVerifiedProof: Sendable {
    /// The RFC 7638 thumbprint of the proof's key: `jkt`, what a bound token's `cnf.jkt`
    /// holds (RFC 9449 §6.1).
    public let thumbprint: String
    /// For the caller's replay check (§11.1).
    public let jti: String
    public let issuedAt: Date
    public let publicKey: VerifyingKey
    public let algorithm: JWSAlgorithm
}
