import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// JWT access tokens (RFC 9068) for resource servers that check tokens offline
/// (``ResourceServers/AccessTokenFormat/jwt``).
///
/// A JWT access token is still a token of the store: its row is made as an opaque
/// token's is (the grant family, revocation, introspection all work as before), from a
/// random token that is never handed out. The JWT's `jti` is that token's SHA-256, the
/// row's key, so the provider finds the row of a JWT it is shown (at `/introspect` and
/// `/revoke`) from its verified `jti`, and a `jti` read from a resource server's log is
/// no token: presented as one, it is hashed again and matches nothing.
struct JWTAccessTokens: Sendable {
    let context: ProviderContext

    /// The longest JWT access token read back (an ES256 one with every claim is about
    /// 700 bytes).
    static let maximumLength = 4096

    /// The longest opaque token read back: the provider's are 43 characters, and a string
    /// past this is no token of ours, refused before it costs a hash and a lookup.
    static let maximumOpaqueLength = 256

    /// Whether `token` has a JWS's shape: three parts, two dots.
    static func isJWT(_ token: String) -> Bool {
        token.utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count == 2
    }

    /// What an access token is made of.
    struct Grant: Sendable {
        var subject: String
        var clientID: String
        var scope: String?
        var resource: String
        var authTime: Date?
        var dpopJKT: String?
        var expiresAt: Date
    }

    /// The JWT for the opaque token `opaque` (whose hash is the row's key), signed by the
    /// provider's current key with `typ: at+jwt` (RFC 9068 §2.1).
    func mint(replacing opaque: String, for grant: Grant, now: Date) async throws -> String {
        let key = try await context.signingKeys.current(now: now)
        let claims = JWTAccessTokenClaims(
            issuer: context.issuer.absoluteString, subject: grant.subject, audiences: [grant.resource], expiresAt: grant.expiresAt,
            issuedAt: now, clientID: grant.clientID, tokenID: Base64URL.encode(try ProviderContext.hash(opaque)),
            scope: grant.scope.flatMap { $0.isEmpty ? nil : $0 }, authTime: grant.authTime, dpopJKT: grant.dpopJKT
        )
        return try JWS.sign(payload: try claims.encodedJSON, with: key.key, keyID: key.kid, type: JWTAccessTokenClaims.type)
    }

    /// The row key of a presented access token: for one of this provider's JWT access
    /// tokens (its signature by a published key, `typ`, `iss`), the hash its `jti`
    /// carries; for anything else of a JWS's shape, nil (it is no token of ours); for an
    /// opaque token, its SHA-256; nil for an empty token or one longer than either kind
    /// can be (the one length rule of `/introspect` and `/revoke`). Expiry is the row's
    /// business, as for opaque tokens.
    func rowKey(of token: String, now: Date = ProviderClock.now) async throws -> Data? {
        guard !token.isEmpty else { return nil }
        guard Self.isJWT(token) else { return token.utf8.count <= Self.maximumOpaqueLength ? try ProviderContext.hash(token) : nil }
        guard token.utf8.count <= Self.maximumLength, let jws = try? JWS(compact: token),
              jws.header["typ"]?.stringValue?.lowercased() == JWTAccessTokenClaims.type,
              let entry = try await context.signingKeys.published(now: now).first(where: { $0.kid == jws.keyID }),
              (try? jws.verify(with: entry.key.publicKey)) != nil,
              let claims = try? JWTAccessTokenClaims(JSONValue(json: jws.payload).objectValue ?? [:]),
              claims.issuer == context.issuer.absoluteString,
              let hash = try? Base64URL.decode(claims.tokenID), hash.count == 32
        else { return nil }
        return hash
    }
}
