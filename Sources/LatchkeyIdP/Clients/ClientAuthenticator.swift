import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Who is asking, wherever a client authenticates (the token, revocation and device
/// authorization endpoints): a public client by its `client_id` (RFC 6749 §3.2.1), a
/// keyed one by a `private_key_jwt` assertion only (RFC 7523 §2.2, §3; aud per
/// draft-ietf-oauth-rfc7523bis §4). Every failure is `401 invalid_client` with a reason
/// that names the rule, never the assertion.
struct ClientAuthenticator: Sendable {
    let context: ProviderContext
    let registry: ClientRegistry

    /// The authenticated client of a request to `endpoint`. A spent assertion's `jti` is
    /// recorded in `client_assertions` until its `exp`, so a replay is refused on every
    /// instance.
    func authenticate(_ parameters: ClientAuthenticationParameters, endpoint: URL, now: Date = ProviderClock.now) async throws -> RegisteredClient {
        guard let assertion = parameters.clientAssertion else {
            guard parameters.clientAssertionType == nil else { throw Self.refusal("client_assertion_type without a client_assertion") }
            guard let client = try await registry.client(parameters.clientID) else { throw Self.refusal("unknown client_id") }
            guard !client.isConfidential else {
                throw Self.refusal("client \(client.id) authenticates with private_key_jwt: send a client_assertion (RFC 7523 §2.2)")
            }
            return client
        }
        guard parameters.clientAssertionType == ClientAssertion.assertionType else {
            throw Self.refusal("client_assertion_type must be \(ClientAssertion.assertionType)")
        }
        // The client is named by client_id, else by the assertion's own sub (RFC 7521
        // §4.2 makes client_id optional); which key must have signed it follows.
        guard let clientID = parameters.clientID ?? Self.unverifiedSubject(assertion) else {
            throw Self.refusal("the client assertion names no client")
        }
        guard let client = try await registry.client(clientID), let keys = client.keys else {
            throw Self.refusal("unknown client, or one without registered keys")
        }
        let audiences = [context.issuer.absoluteString, context.url(ProtocolPath.token).absoluteString, endpoint.absoluteString]
        let claims: ClientAssertion.Claims
        do {
            claims = try ClientAssertion.verify(assertion, clientID: client.id, keys: keys, audiences: audiences, now: now)
        } catch let error as OAuthError {
            throw ProviderError.invalidClient(error.reason, underlying: error)
        }
        let id = try ProviderContext.hash(client.id + "|" + claims.id)
        let fresh = try await context.database.transaction { transaction in
            try await transaction.first("""
                INSERT INTO client_assertions (id_hash, expires_at) VALUES (\(id), \(claims.expiresAt.addingTimeInterval(60)))
                ON CONFLICT (id_hash) DO NOTHING RETURNING id_hash
                """) != nil
        }
        guard fresh else { throw Self.refusal("this client assertion (its jti) was already used") }
        return client
    }

    static func refusal(_ reason: String) -> ProviderError {
        ProviderError.invalidClient(reason)
    }

    /// The `sub` of an assertion before it is verified: only to find whose keys to verify
    /// it with.
    static func unverifiedSubject(_ assertion: String) -> String? {
        guard assertion.utf8.count <= ClientAssertion.maximumSize, let jws = try? JWS(compact: assertion),
              let object = try? JSONValue(json: jws.payload, maximumSize: ClientAssertion.maximumSize)
        else { return nil }
        return object["sub"]?.stringValue
    }

    static func prune(now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM client_assertions WHERE expires_at <= \(now)")
        try await transaction.execute("DELETE FROM client_tokens WHERE expires_at <= \(now)")
    }
}
