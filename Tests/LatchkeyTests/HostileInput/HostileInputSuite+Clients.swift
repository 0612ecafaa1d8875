import Foundation
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
@testable import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Registered clients abused (docs/SECURITY.md, "Client keys"): grants that outlive their
/// client, an id registered again to inherit them, client assertions used before their
/// time, registrations the admin API refused for leaving out optional members.
extension HostileInputSuite {
    /// A public client for the code flow, registered as `id`.
    static func registerNotes(_ provider: ProviderHarness, id: String = "notes") async throws {
        let registration = AdminAPI.Client(
            id: id, grantTypes: [GrantType.authorizationCode.rawValue, GrantType.refreshToken.rawValue], redirectURIs: [try ProviderHarness.callback.absoluteString]
        )
        let reply = try await provider.admin.call(AdminAPI.createClient, body: registration)
        try #require(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
    }

    /// `GET /userinfo` with `token` as a bearer: the status.
    static func userInfoStatus(_ provider: ProviderHarness, _ token: String) async throws -> Int {
        try await HTTP1Transport().send(TransportRequest(
            method: HTTPMethod.get, url: provider.issuer.appendingPathComponent(ProtocolPath.userInfo), headers: ["Authorization": "Bearer " + token]
        )).status
    }

    /// Whether introspection calls `token` active.
    static func introspectionActive(_ provider: ProviderHarness, _ token: String) async throws -> Bool {
        let server = try #require(try await provider.admin.call(AdminAPI.createResourceServer, body: .init(name: "api")).answer)
        let response = try await HTTP1Transport().send(TransportRequest(
            method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.introspection),
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + Data("\(server.id):\(server.secret)".utf8).base64EncodedString()],
            body: FormEncoding.encode(TokenIntrospectionRequest(token: token).formItems)
        ))
        return try JSONDecoder().decode(IntrospectionResponse.self, from: response.body).active
    }

    /// Red team, milestone 3 (medium): after `DELETE /admin/clients/ID` a person's access
    /// token still answered at /userinfo and introspection, and once the id was registered
    /// again the old refresh token minted new tokens.
    @Test("deleting a client ends its users' grants at once, and a client registered again under its id inherits none: not the tokens, not a sign-in begun before the deletion")
    func clientDeletionEndsGrants() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            try await Self.registerNotes(provider)
            let oauth = try OAuthClient(configuration: .init(issuer: provider.issuer, clientID: "notes", redirectURI: try ProviderHarness.callback))
            let tokens = try await embedded.authenticate(issuer: provider.issuer, clientID: "notes", redirectURI: try ProviderHarness.callback)
            let refresh = try #require(tokens.refreshToken)
            #expect(try await Self.userInfoStatus(provider, tokens.accessToken) == 200)

            // A sign-in begun for the old client, its assertion made but not yet sent.
            let pending = try await oauth.authorizationRequest(scopes: ["openid"])
            let (_, started) = try await provider.raw("GET", pending.url.absoluteString, from: "127.0.0.1")
            let authenticateURL = try #require(started["authenticateURL"]?.stringValue)
            let (_, challenge) = try await provider.raw("GET", authenticateURL, from: "127.0.0.1")
            let options = try PublicKeyCredentialRequestOptionsJSON(json: (challenge["publicKey"] ?? challenge).json())
            let origin = try #require(WebOrigin(provider.issuer)).description
            let (assertion, _) = try embedded.authenticator.getAssertion(options, origin: origin)

            #expect(try await provider.admin.call(AdminAPI.deleteClient, "notes").status == 200)
            #expect(try await Self.userInfoStatus(provider, tokens.accessToken) == 401, "the access token ends with its client")
            #expect(try await Self.introspectionActive(provider, tokens.accessToken) == false)

            // The id registered again is another client to every old grant.
            try await Self.registerNotes(provider)
            let oldRefresh = TokenSet(
                accessToken: tokens.accessToken, tokenType: "Bearer", expiresAt: nil, refreshToken: refresh, scope: nil, idToken: nil, idTokenClaims: nil
            )
            await #expect(throws: OAuthError.self, "the old refresh token mints nothing") { _ = try await oauth.refresh(oldRefresh) }
            #expect(try await Self.userInfoStatus(provider, tokens.accessToken) == 401)
            let (posted, redirect) = try await provider.raw("POST", authenticateURL, json: try JSONValue(json: assertion.json()), from: "127.0.0.1")
            try #require(posted == 200, "\(redirect)")
            let redirectURL = try #require(redirect["redirectURL"]?.stringValue.flatMap(URL.init(string:)))
            let code = try await oauth.authorizationCode(from: redirectURL, for: pending)
            await #expect(throws: OAuthError.self, "a code from a sign-in begun for the deleted client") {
                _ = try await oauth.exchange(code: code, for: pending)
            }
            // The new client's own sign-in works.
            let fresh = try await embedded.authenticate(issuer: provider.issuer, clientID: "notes", redirectURI: try ProviderHarness.callback)
            #expect(try await Self.userInfoStatus(provider, fresh.accessToken) == 200)
        }
    }

    /// Red team, milestone 3 (low): an assertion whose `nbf` lay ten minutes ahead was
    /// accepted (RFC 7523 §3 item 5).
    @Test("a client assertion whose nbf is beyond the 30 s skew is refused; one within it, or past, is accepted")
    func clientAssertionNotYetValid() async throws {
        try await ProviderHarness.run { provider in
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            let registration = AdminAPI.Client(id: "backup", jwks: jwks, grantTypes: [GrantType.clientCredentials.rawValue], scopes: ["backup"])
            try #require(try await provider.admin.call(AdminAPI.createClient, body: registration).status == 201)
            func token(notBefore offset: TimeInterval) async throws -> (Int, String?) {
                let now = Int(Date().timeIntervalSince1970)
                let claims: JSONValue = [
                    "iss": "backup", "sub": "backup", "aud": .string(provider.issuer.absoluteString), "jti": .string(Base64URL.encode(try SecureRandom.bytes(count: 16))),
                    "iat": .number(Double(now)), "exp": .number(Double(now + 300)), "nbf": .number(Double(now + Int(offset))),
                ]
                let assertion = try signer.sign(payload: try claims.json(), type: "JWT")
                var items = TokenRequest(grantType: .clientCredentials).formItems
                items += ClientAuthenticationParameters(clientID: "backup", clientAssertionType: ClientAssertion.assertionType, clientAssertion: assertion).formItems
                let (status, error, _) = try await DeviceGrantTests.post(provider, ProtocolPath.token, items)
                return (status, error)
            }
            #expect(try await token(notBefore: 600) == (401, "invalid_client"), "ten minutes ahead")
            #expect(try await token(notBefore: 120) == (401, "invalid_client"), "two minutes ahead")
            #expect(try await token(notBefore: 10) == (200, nil), "within the skew")
            #expect(try await token(notBefore: -60) == (200, nil), "already valid")
        }
    }

    @Test("a client registration may leave out name, redirectURIs and scopes, as PROTOCOL.md says; grantTypes and id stay required")
    func clientRegistrationOptionalMembers() async throws {
        try await ProviderHarness.run { provider in
            func register(_ body: String) async throws -> (Int, JSONValue) {
                let response = try await HTTP1Transport().send(TransportRequest(
                    method: HTTPMethod.post, url: provider.issuer.appendingPathComponent("admin/clients"),
                    headers: ["Content-Type": "application/json", "Authorization": "Bearer " + ProviderHarness.adminToken], body: Data(body.utf8)
                ))
                return (response.status, (try? JSONValue(json: response.body)) ?? [:])
            }
            let (created, client) = try await register(#"{"id": "tv", "grantTypes": ["urn:ietf:params:oauth:grant-type:device_code"]}"#)
            #expect(created == 201, "\(client)")
            #expect(client["name"]?.stringValue == "tv" && client["redirectURIs"]?.arrayValue?.isEmpty == true && client["scopes"]?.arrayValue?.isEmpty == true)
            #expect(try await register(#"{"id": "no-grants"}"#).0 == 400)
            #expect(try await register(#"{"grantTypes": ["urn:ietf:params:oauth:grant-type:device_code"]}"#).0 == 400)
        }
    }
}
