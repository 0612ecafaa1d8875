#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A resource server's offline check of a JWT access token (RFC 9068 §4), in the RFC's
/// order, each failure naming what failed: the `typ` header is `at+jwt` (so an ID token
/// or another JWT signed by the same provider is not taken for an access token), the
/// signature is by one of the provider's published keys with an allowed `alg` (never
/// `none` or HMAC: ``JWS``), `iss` is the provider exactly, `aud` names this resource
/// (RFC 8707), and `exp` has not passed.
///
/// What it cannot see: a token revoked at the provider stays acceptable until its `exp`;
/// a resource server that must stop such a token at once asks introspection instead. A
/// DPoP-bound token (`cnf.jkt`) still needs its proof checked by the caller (RFC 9449 §7).
public struct JWTAccessTokenValidator: Sendable {
    public var issuer: String
    /// This resource server's resource URI, in the canonical form it was registered in.
    public var resource: String
    /// Clock tolerance for `exp` and `iat`.
    public var leeway: TimeInterval = 60

    public init(issuer: String, resource: String) {
        self.issuer = issuer
        self.resource = resource
    }

    /// Validates `token` with a key of `keys` (the provider's JWKS).
    public func validate(_ token: String, keys: JWKSet, now: Date = Date()) throws -> JWTAccessTokenClaims {
        let jws = try JWS(compact: token)
        // RFC 9068 §4 step 1: `typ` is `at+jwt` or `application/at+jwt`, compared without case.
        let type = jws.header["typ"]?.stringValue?.lowercased()
        guard type == JWTAccessTokenClaims.type || type == "application/" + JWTAccessTokenClaims.type else {
            throw OAuthError.malformedJWS(reason: "JWS typ is \(type ?? "absent"), not \(JWTAccessTokenClaims.type): not an access token")
        }
        guard let key = try keys.key(for: jws) else {
            throw OAuthError.unknownKey(reason: "no key fits kid \(jws.keyID ?? "(none)") and alg \(jws.algorithm)")
        }
        try jws.verify(with: key)
        let claims = try JWTAccessTokenClaims(JSONValue.object(from: jws.payload, maximumSize: JWS.maximumSize, what: "access token payload"))
        guard claims.issuer == issuer else {
            throw OAuthError.invalidIssuer(reason: "access token iss is \(claims.issuer), expected \(issuer)")
        }
        guard claims.audiences.contains(resource) else {
            throw OAuthError.invalidAudience(reason: "access token aud does not name this resource")
        }
        guard claims.expiresAt.addingTimeInterval(leeway) > now else {
            throw OAuthError.expired(reason: "access token exp passed at \(claims.expiresAt)")
        }
        guard claims.issuedAt <= now.addingTimeInterval(leeway) else {
            throw OAuthError.issuedInFuture(reason: "access token iat is in the future")
        }
        return claims
    }
}
