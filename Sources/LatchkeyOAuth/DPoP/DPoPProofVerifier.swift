public import Foundation
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
            OAuthError(code: .invalidDPoPProof, reason: "DPoP proof: \(why)")
        }
        guard proofs.count == 1, let proof = proofs.first else {
            throw refuse(proofs.isEmpty ? "none was sent" : "\(proofs.count) DPoP headers; exactly one is allowed")
        }
        guard proof.utf8.count <= Self.maximumSize else { throw refuse("over \(Self.maximumSize) bytes") }
        let jws: JWS
        do {
            jws = try JWS(compact: proof)
        } catch let error as OAuthError {
            throw refuse(error.reason)
        }
        // Header: typ, alg, jwk (§4.3 steps 4 to 7).
        guard jws.header["typ"]?.stringValue?.lowercased() == DPoPProof.type else { throw refuse("typ is not \(DPoPProof.type)") }
        guard algorithms.contains(jws.algorithm) else { throw refuse("alg \(jws.algorithm) is not accepted") }
        guard case .object(let members)? = jws.header["jwk"] else { throw refuse("the header has no jwk object") }
        let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].filter { members[$0] != nil }
        guard privateMembers.isEmpty else {
            throw refuse("the jwk carries private key members (\(privateMembers.joined(separator: ", ")))")
        }
        guard let (key, thumbprint) = keys.key(members) else { throw refuse("the jwk is not a usable public key") }
        do {
            try jws.verify(with: key)
        } catch let error as OAuthError {
            throw refuse(error.reason)
        }
        // Claims (§4.3 steps 3, 8 to 12).
        // A flat object of strings and numbers, no name twice: what RFC 9449 §4.2 defines,
        // read by the vault's strict parser (Foundation's JSON decoder took a third of a check).
        guard let claims = try? FlatJSONObject(parsing: jws.payload) else {
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
            guard let ath = claims.string("ath"),
                  ConstantTime.isEqual(Data(ath.utf8), Data(try DPoPProof.accessTokenHash(accessToken).utf8))
            else { throw refuse("ath is missing or is not the hash of the presented access token") }
        }
        if let nonceIsValid {
            guard let nonce = claims.string("nonce"), nonce.utf8.count <= 512, nonceIsValid(nonce) else {
                throw OAuthError(code: .useDPoPNonce, reason: "DPoP proof: the server's current nonce is required")
            }
        }
        return DPoPVerifiedProof(
            thumbprint: thumbprint, jti: jti, issuedAt: Date(timeIntervalSince1970: iat), publicKey: key, algorithm: jws.algorithm
        )
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
