#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// ID token validation, OpenID Connect Core §3.1.3.7, in the spec's order, each failure
/// naming the claim that failed.
public struct IDTokenValidator: Sendable {
    public var issuer: String
    public var clientID: String
    /// Clock tolerance for `exp`, `iat` and `auth_time`.
    public var leeway: TimeInterval = 60

    public init(issuer: String, clientID: String) {
        self.issuer = issuer
        self.clientID = clientID
    }

    /// What the authorization request asked for, which the token must match.
    public struct Expectations: Sendable {
        public var nonce: String?
        public var maxAge: TimeInterval?
        public var accessToken: String?
        public var now: Date

        public init(nonce: String? = nil, maxAge: TimeInterval? = nil, accessToken: String? = nil, now: Date = Date()) {
            self.nonce = nonce
            self.maxAge = maxAge
            self.accessToken = accessToken
            self.now = now
        }
    }

    /// Validates `idToken`, finding its key with `key(for:)`.
    public func validate(
        _ idToken: String,
        expectations: Expectations,
        key: @Sendable (JWS) async throws -> VerifyingKey
    ) async throws -> IDTokenClaims {
        let jws = try JWS(compact: idToken)
        return try validate(jws, key: try await key(jws), expectations: expectations)
    }

    /// Validates `idToken` with a key from `keys` (for a caller that holds the provider's
    /// JWKS already, such as a back end or the provider itself).
    public func validate(_ idToken: String, expectations: Expectations, keys: JWKSet) throws -> IDTokenClaims {
        let jws = try JWS(compact: idToken)
        guard let key = try keys.key(for: jws) else {
            throw OAuthError.unknownKey(reason: "no key fits kid \(jws.keyID ?? "(none)") and alg \(jws.algorithm)")
        }
        return try validate(jws, key: key, expectations: expectations)
    }

    private func validate(_ jws: JWS, key: VerifyingKey, expectations: Expectations) throws -> IDTokenClaims {
        // §3.1.3.7 steps 6-8: signature with the provider's key, alg from the allow-list.
        try jws.verify(with: key)
        let claims = try IDTokenClaims(JSONValue.object(from: jws.payload, maximumSize: JWS.maximumSize, what: "ID token payload"))
        try check(claims, algorithm: jws.algorithm, expectations: expectations)
        return claims
    }

    /// Steps 2-5 and 9-13, plus `at_hash` (§3.2.2.9 / §3.3.2.11).
    func check(_ claims: IDTokenClaims, algorithm: JWSAlgorithm, expectations: Expectations) throws {
        guard claims.issuer == issuer else {
            throw OAuthError.invalidIssuer(reason: "ID token iss is \(claims.issuer), expected \(issuer)")
        }
        guard claims.audiences.contains(clientID) else {
            throw OAuthError.invalidAudience(reason: "ID token aud does not include client \(clientID)")
        }
        if claims.audiences.count > 1 || claims.authorizedParty != nil {
            guard claims.authorizedParty == clientID else {
                throw OAuthError.invalidAuthorizedParty(reason: "ID token with several audiences must have azp = \(clientID)")
            }
        }
        let now = expectations.now
        guard claims.expiresAt.addingTimeInterval(leeway) > now else {
            throw OAuthError.expired(reason: "ID token exp passed at \(claims.expiresAt)")
        }
        guard claims.issuedAt <= now.addingTimeInterval(leeway) else {
            throw OAuthError.issuedInFuture(reason: "ID token iat \(claims.issuedAt) is in the future")
        }
        if let nonce = expectations.nonce {
            guard let received = claims.nonce, ConstantTime.isEqual(Data(received.utf8), Data(nonce.utf8)) else {
                throw OAuthError.nonceMismatch(reason: "ID token nonce does not match the request's")
            }
        }
        if let maxAge = expectations.maxAge {
            guard let authTime = claims.authTime else {
                throw OAuthError.claimMissing(reason: "ID token claim \"auth_time\" is required when max_age was requested")
            }
            guard now.timeIntervalSince(authTime) <= maxAge + leeway else {
                throw OAuthError.authenticationTooOld(reason: "authentication at \(authTime) is older than max_age")
            }
        }
        if let hash = claims.accessTokenHash, let accessToken = expectations.accessToken {
            guard ConstantTime.isEqual(Data(hash.utf8), Data(try Self.accessTokenHash(accessToken, algorithm: algorithm).utf8)) else {
                throw OAuthError.accessTokenHashMismatch(reason: "ID token at_hash does not match the access token")
            }
        }
    }

    /// The left half of the access token's hash, base64url (OIDC Core §3.1.3.6). The hash
    /// is the one of the JWS algorithm: SHA-256 for ES256 and RS256, SHA-512 for EdDSA
    /// with Ed25519 (RFC 8032's hash).
    static func accessTokenHash(_ accessToken: String, algorithm: JWSAlgorithm) throws -> String {
        let digest: DigestAlgorithm = algorithm == .edDSA ? .sha512 : .sha256
        let hash = try digest.hash(Data(accessToken.utf8))
        return Base64URL.encode(hash.prefix(hash.count / 2))
    }

    /// OIDC Core §12.2: a refreshed ID token keeps `iss`, `sub`, `aud` (and `auth_time`).
    func checkRefreshed(_ refreshed: IDTokenClaims, original: IDTokenClaims) throws {
        guard refreshed.issuer == original.issuer, refreshed.subject == original.subject,
              Set(refreshed.audiences) == Set(original.audiences), refreshed.authTime == original.authTime || refreshed.authTime == nil
        else {
            throw OAuthError.refreshedTokenMismatch(reason: "the refreshed ID token changed iss, sub, aud or auth_time")
        }
    }
}
