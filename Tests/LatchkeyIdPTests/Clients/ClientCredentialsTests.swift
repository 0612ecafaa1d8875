import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// Registered clients and the client credentials grant with `private_key_jwt` (RFC 6749
/// §4.4, RFC 7523), against the reference provider over real HTTP, with Latchkey's own
/// OAuth client and with hand-made hostile requests.
@Suite("Provider: registered clients, private_key_jwt, client credentials")
struct ClientCredentialsTests {
    static let clientID = "backup-service"

    /// A provider with `backup-service` registered with `signer`'s key, allowed
    /// `client_credentials` and the scopes `backup:read backup:write`.
    static func withClient(
        _ engine: TestStore? = nil,
        _ body: @escaping @Sendable (ProviderHarness, ClientAssertionSigner) async throws -> Void
    ) async throws {
        try await ProviderHarness.run(engine) { provider in
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            let registration = AdminAPI.Client(id: clientID, jwks: jwks, grantTypes: ["client_credentials"], scopes: ["backup:read", "backup:write"])
            let reply = try await provider.admin.call(AdminAPI.createClient, body: registration)
            try #require(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
            try await body(provider, signer)
        }
    }

    static func client(_ provider: ProviderHarness, _ signer: ClientAssertionSigner, audience: ClientAssertion.Audience = .issuer) throws -> OAuthClient {
        try OAuthClient(configuration: .init(
            issuer: provider.issuer, clientID: clientID, redirectURI: try ProviderHarness.callback,
            authentication: .privateKeyJWT(signer, audience: audience)
        ))
    }

    /// A raw token request: status and error code.
    static func post(_ provider: ProviderHarness, _ items: [(String, String)], path: String = ProtocolPath.token) async throws -> (Int, String?) {
        let response = try await HTTPExchange.form(provider.issuer.appendingPathComponent(path), items)
        return (response.status, response.errorCode)
    }

    static func assertionItems(_ assertion: String, clientID: String? = clientID, scope: String? = nil) -> [(String, String)] {
        var items = TokenRequest(grantType: .clientCredentials, scope: scope).formItems
        items += ClientAuthenticationParameters(clientID: clientID, clientAssertionType: ClientAssertion.assertionType, clientAssertion: assertion).formItems
        return items
    }

    static func introspect(_ provider: ProviderHarness, _ token: String) async throws -> IntrospectionResponse {
        let server = try #require(try await provider.admin.call(AdminAPI.createResourceServer, body: .init(name: "api")).answer)
        let credentials = Data("\(server.id):\(server.secret)".utf8).base64EncodedString()
        let response = try await HTTP1Transport().send(TransportRequest(
            method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.introspection),
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + credentials],
            body: FormEncoding.encode(TokenIntrospectionRequest(token: token).formItems)
        ))
        return try JSONDecoder().decode(IntrospectionResponse.self, from: response.body)
    }

    @Test("a service gets a token with its key: sub is the client, scope within its own, no ID or refresh token; userinfo refuses it", arguments: TestStore.available)
    func clientCredentials(engine: TestStore) async throws {
        try await Self.withClient(engine) { provider, signer in
            let client = try Self.client(provider, signer)
            let metadata = try await client.metadata()
            #expect(metadata.grantTypesSupported?.contains("client_credentials") == true)
            #expect(metadata.tokenEndpointAuthMethodsSupported?.contains("private_key_jwt") == true)
            let tokens = try await client.clientCredentials(scopes: ["backup:write"])
            #expect(tokens.tokenType == "Bearer" && tokens.scope == "backup:write")
            #expect(tokens.refreshToken == nil && tokens.idToken == nil)
            let introspected = try await Self.introspect(provider, tokens.accessToken)
            #expect(introspected.active && introspected.subject == Self.clientID && introspected.clientID == Self.clientID)
            #expect(introspected.scope == "backup:write")
            await #expect(throws: OAuthError.self) { _ = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: nil) }
            // The token endpoint's URL as audience, for providers that ask for it, is taken too.
            _ = try await Self.client(provider, signer, audience: .tokenEndpoint).clientCredentials()
        }
    }

    @Test("with DPoP the token is bound to the DPoP key, not the client key (cnf.jkt)")
    func dpopBound() async throws {
        try await Self.withClient { provider, signer in
            let dpop = try DPoPSigner(key: SigningKey.generate(.es256))
            let tokens = try await Self.client(provider, signer).clientCredentials(dpop: dpop)
            #expect(tokens.tokenType == "DPoP")
            let introspected = try await Self.introspect(provider, tokens.accessToken)
            #expect(introspected.confirmation?.jkt == dpop.thumbprint && dpop.thumbprint != signer.keyID)
        }
    }

    @Test("revoked by its own client, the token is inactive; deleting the client ends its tokens")
    func revocationAndDeletion() async throws {
        try await Self.withClient { provider, signer in
            let client = try Self.client(provider, signer)
            let first = try await client.clientCredentials()
            try await client.revoke(first.accessToken, hint: .accessToken)
            #expect(try await Self.introspect(provider, first.accessToken).active == false)
            let second = try await client.clientCredentials()
            #expect(try await provider.admin.call(AdminAPI.deleteClient, Self.clientID).status == 200)
            #expect(try await Self.introspect(provider, second.accessToken).active == false)
            await #expect(throws: OAuthError.self) { _ = try await client.clientCredentials() }
        }
    }

    struct Attack: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: String
        let run: @Sendable (ProviderHarness, ClientAssertionSigner) async throws -> (Int, String?)
        var testDescription: String { name }
    }

    static func fresh(_ provider: ProviderHarness, _ signer: ClientAssertionSigner, audience: String? = nil, now: Date = Date()) throws -> String {
        try ClientAssertion.make(clientID: clientID, audience: audience ?? provider.issuer.absoluteString, signer: signer, now: now)
    }

    static let attacks: [Attack] = [
        Attack(name: "a replayed assertion", expected: "401 invalid_client") { provider, signer in
            let assertion = try fresh(provider, signer)
            let (first, _) = try await post(provider, assertionItems(assertion))
            try #require(first == 200)
            return try await post(provider, assertionItems(assertion))
        },
        Attack(name: "an assertion for another provider (foreign audience)", expected: "401 invalid_client") { provider, signer in
            try await post(provider, assertionItems(try fresh(provider, signer, audience: "https://evil.example.com")))
        },
        Attack(name: "an expired assertion", expected: "401 invalid_client") { provider, signer in
            try await post(provider, assertionItems(try fresh(provider, signer, now: Date().addingTimeInterval(-900))))
        },
        Attack(name: "an assertion signed by a key not in the client's set", expected: "401 invalid_client") { provider, _ in
            let stranger = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            return try await post(provider, assertionItems(try fresh(provider, stranger)))
        },
        Attack(name: "an assertion naming another client than client_id", expected: "401 invalid_client") { provider, signer in
            try await post(provider, assertionItems(try fresh(provider, signer), clientID: "latchkey-cli"))
        },
        Attack(name: "the keyed client without an assertion", expected: "401 invalid_client") { provider, _ in
            try await post(provider, TokenRequest(grantType: .clientCredentials, clientID: clientID).formItems)
        },
        Attack(name: "a wrong client_assertion_type", expected: "401 invalid_client") { provider, signer in
            var items = TokenRequest(grantType: .clientCredentials).formItems
            items += ClientAuthenticationParameters(clientID: clientID, clientAssertionType: "urn:x", clientAssertion: try fresh(provider, signer)).formItems
            return try await post(provider, items)
        },
        Attack(name: "a scope the client is not registered for", expected: "400 invalid_scope") { provider, signer in
            try await post(provider, assertionItems(try fresh(provider, signer), scope: "backup:write admin"))
        },
        Attack(name: "a grant the client is not allowed (authorization_code)", expected: "400 unauthorized_client") { provider, signer in
            var items = TokenRequest(grantType: .authorizationCode, code: "x", redirectURI: "http://127.0.0.1/callback", codeVerifier: "v").formItems
            items += ClientAuthenticationParameters(clientID: clientID, clientAssertionType: ClientAssertion.assertionType, clientAssertion: try fresh(provider, signer)).formItems
            return try await post(provider, items)
        },
        Attack(name: "the public CLI client asking for client credentials", expected: "400 unauthorized_client") { provider, _ in
            try await post(provider, TokenRequest(grantType: .clientCredentials, clientID: ProviderConfiguration.cliClient.id).formItems)
        },
        Attack(name: "a registration with client_credentials but no keys", expected: "400 invalid_request") { provider, _ in
            let reply = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "keyless", grantTypes: ["client_credentials"]))
            return (reply.status, reply.refusal?.error?.rawValue)
        },
        Attack(name: "a registration taking the built-in client's id", expected: "409 conflict") { provider, signer in
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            let reply = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "latchkey-cli", jwks: jwks, grantTypes: ["client_credentials"]))
            return (reply.status, reply.refusal?.error?.rawValue)
        },
        Attack(name: "a second registration of the same id", expected: "409 conflict") { provider, signer in
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            let reply = try await provider.admin.call(AdminAPI.createClient, body: .init(id: clientID, jwks: jwks, grantTypes: ["client_credentials"]))
            return (reply.status, reply.refusal?.error?.rawValue)
        },
        Attack(name: "a registration with a control character in the id", expected: "400 invalid_request") { provider, _ in
            let reply = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "a\nb", grantTypes: ["device_code"]))
            return (reply.status, reply.refusal?.error?.rawValue)
        },
    ]

    @Test("each attack is refused with its own code", arguments: attacks)
    func refused(_ attack: Attack) async throws {
        try await Self.withClient { provider, signer in
            let (status, error) = try await attack.run(provider, signer)
            #expect("\(status) \(error ?? "-")" == attack.expected, "\(attack.name)")
        }
    }

    @Test("the admin API lists a registered client with its public keys")
    func listing() async throws {
        try await Self.withClient { provider, signer in
            let list = try #require(try await provider.admin.call(AdminAPI.listClients).answer)
            let client = try #require(list.clients.first)
            #expect(list.clients.count == 1 && client.id == Self.clientID && client.grantTypes == ["client_credentials"])
            #expect(client.jwks?.keys.first?.kid == signer.keyID && client.scopes == ["backup:read", "backup:write"])
        }
    }
}

extension ClientCredentialsTests {
    @Test("a service's token asked for a resource (RFC 8707) is active only to that resource's server; an unknown resource is invalid_target", arguments: TestStore.available)
    func resourceBound(engine: TestStore) async throws {
        try await Self.withClient(engine) { provider, signer in
            let resource = "https://backup.example/api"
            let created = try #require(try await provider.admin.call(AdminAPI.createResourceServer, body: .init(name: "backup", resource: resource)).answer)
            let other = try #require(try await provider.admin.call(AdminAPI.createResourceServer, body: .init(name: "other", resource: "https://other.example")).answer)
            let client = try Self.client(provider, signer)
            let tokens = try await client.clientCredentials(scopes: ["backup:read"], resource: "https://BACKUP.example:443/api")
            func introspect(_ server: AdminAPI.ResourceServerCreated) async throws -> IntrospectionResponse {
                let response = try await HTTP1Transport().send(TransportRequest(
                    method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.introspection),
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + Data("\(server.id):\(server.secret)".utf8).base64EncodedString()],
                    body: FormEncoding.encode(TokenIntrospectionRequest(token: tokens.accessToken).formItems)
                ))
                return try JSONDecoder().decode(IntrospectionResponse.self, from: response.body)
            }
            let mine = try await introspect(created)
            #expect(mine.active && mine.audience == [resource] && mine.subject == Self.clientID)
            #expect(try await introspect(other) == .inactive)
            await #expect(throws: OAuthError.self) { _ = try await client.clientCredentials(resource: "https://unknown.example/api") }
        }
    }
}
