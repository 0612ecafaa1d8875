import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Token introspection (RFC 7662) for resource servers with a credential from the admin
/// API (``ResourceServers``): whether an access token is live, whose it is, and, for a
/// DPoP-bound one, the key it is bound to (`cnf.jkt`, RFC 9449 §6.2), so the resource
/// server can check the proof's key itself. Checked against the store on every call, so
/// a revoked grant is inactive at once. A JWT access token (RFC 9068) is found by its
/// verified `jti` (``JWTAccessTokens``) and answered the same way.
///
/// Audience (RFC 8707, RFC 9700 §4.10): a token asked for a resource is active only to
/// the resource server registered for that resource, and names it in `aud`; a server
/// registered without a resource sees only tokens that name none. So a token minted for
/// one resource cannot be replayed at another that asks the provider about it.
struct Introspection: Sendable {
    let context: ProviderContext

    /// RFC 7662 §2.2, for the resource server `caller`. Anything but a live access token
    /// for it (unknown, expired, revoked, a refresh token, another resource's, an
    /// over-long string) is `{"active": false}` and nothing more.
    func introspect(_ token: String?, for caller: ResourceServers.Authenticated, now: Date = ProviderClock.now) async throws -> Data {
        guard let token, let hash = try await JWTAccessTokens(context: context).rowKey(of: token, now: now)
        else { return try TokenEndpoint.encode(IntrospectionResponse.inactive) }
        let answer = try await context.database.read { transaction -> IntrospectionResponse in
            if let row = try await transaction.first("""
                SELECT f.identity_id AS subject, f.client_id, f.scope, t.expires_at, f.dpop_jkt, f.resource
                FROM tokens t JOIN grant_families f ON f.id = t.family_id
                WHERE t.hash = \(hash) AND t.kind = 'access' AND t.expires_at > \(now) AND f.revoked_at IS NULL
                """) {
                return try response(row, for: caller)
            }
            // A client credentials token (RFC 6749 §4.4): its subject is the client itself.
            guard let row = try await transaction.first("""
                SELECT client_id AS subject, client_id, scope, expires_at, dpop_jkt, resource FROM client_tokens
                WHERE hash = \(hash) AND expires_at > \(now)
                """)
            else { return .inactive }
            return try response(row, for: caller)
        }
        return try TokenEndpoint.encode(answer)
    }

    /// The answer for a live token's row: inactive unless its audience is the caller's.
    private func response(_ row: SQLRow, for caller: ResourceServers.Authenticated) throws -> IntrospectionResponse {
        let resource = try row.decode("resource", as: String?.self)
        guard resource == caller.resource else { return .inactive }
        let jkt = try row.decode("dpop_jkt", as: String?.self)
        return IntrospectionResponse(
            active: true, subject: try row.decode("subject"), clientID: try row.decode("client_id"), scope: try row.decode("scope"),
            expiresAt: Int(try row.decode("expires_at", as: Date.self).timeIntervalSince1970), issuer: context.issuer.absoluteString,
            tokenType: jkt == nil ? .bearer : .dpop, confirmation: jkt.map(IntrospectionResponse.Confirmation.init(jkt:)),
            audience: resource.map { [$0] }
        )
    }
}
