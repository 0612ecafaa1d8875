import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Token introspection (RFC 7662) for resource servers with a credential from the admin
/// API (``ResourceServers``): whether an access token is live, whose it is, and, for a
/// DPoP-bound one, the key it is bound to (`cnf.jkt`, RFC 9449 §6.2), so the resource
/// server can check the proof's key itself. Checked against the store on every call, so
/// a revoked grant is inactive at once.
struct Introspection: Sendable {
    let context: ProviderContext

    /// RFC 7662 §2.2. Anything but a live access token (unknown, expired, revoked, a
    /// refresh token, an over-long string) is `{"active": false}` and nothing more.
    func introspect(_ token: String?, now: Date = ProviderClock.now) async throws -> Data {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else { return try TokenEndpoint.encode(IntrospectionResponse.inactive) }
        let hash = try ProviderContext.hash(token)
        let answer = try await context.database.read { transaction -> IntrospectionResponse in
            guard let row = try await transaction.first("""
                SELECT f.identity_id, f.client_id, f.scope, t.expires_at, f.dpop_jkt
                FROM tokens t JOIN grant_families f ON f.id = t.family_id
                WHERE t.hash = \(hash) AND t.kind = 'access' AND t.expires_at > \(now) AND f.revoked_at IS NULL
                """)
            else { return try await clientToken(hash, now: now, in: transaction) }
            let jkt = try row.decode("dpop_jkt", as: String?.self)
            return IntrospectionResponse(
                active: true, subject: try row.decode("identity_id"), clientID: try row.decode("client_id"), scope: try row.decode("scope"),
                expiresAt: Int(try row.decode("expires_at", as: Date.self).timeIntervalSince1970), issuer: context.issuer.absoluteString,
                tokenType: jkt == nil ? .bearer : .dpop, confirmation: jkt.map(IntrospectionResponse.Confirmation.init(jkt:))
            )
        }
        return try TokenEndpoint.encode(answer)
    }

    /// A client credentials token (RFC 6749 §4.4): its subject is the client itself.
    private func clientToken(_ hash: Data, now: Date, in transaction: any SQLTransaction) async throws -> IntrospectionResponse {
        guard let row = try await transaction.first("""
            SELECT client_id, scope, expires_at, dpop_jkt FROM client_tokens WHERE hash = \(hash) AND expires_at > \(now)
            """)
        else { return .inactive }
        let jkt = try row.decode("dpop_jkt", as: String?.self)
        return IntrospectionResponse(
            active: true, subject: try row.decode("client_id"), clientID: try row.decode("client_id"), scope: try row.decode("scope"),
            expiresAt: Int(try row.decode("expires_at", as: Date.self).timeIntervalSince1970), issuer: context.issuer.absoluteString,
            tokenType: jkt == nil ? .bearer : .dpop, confirmation: jkt.map(IntrospectionResponse.Confirmation.init(jkt:))
        )
    }
}
