import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Resource indicators at the reference provider (RFC 8707): a token asked for one
/// resource is audience-bound to it, active only to that resource's server, refused by
/// every other (another resource, a server registered without one, the provider's own
/// userinfo), and a resource that is unknown, malformed or not the client's is
/// `invalid_target`. Over real HTTP, on both engines.
@Suite("Reference provider: resource indicators (RFC 8707)")
struct ResourceIndicatorProviderTests {
    typealias P = ProviderTests
    typealias D = DPoPProviderTests

    static let orders = "http://127.0.0.1:9/orders"
    static let billing = "http://127.0.0.1:9/billing"

    /// A resource server's id and secret.
    struct Server {
        var id: String
        var secret: String
    }

    static func server(_ issuer: URL, _ name: String, resource: String?) async throws -> Server {
        let reply = try await P.admin(issuer).call(AdminAPI.createResourceServer, body: .init(name: name, resource: resource))
        let created = try #require(reply.answer, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(created.resource == resource)
        return Server(id: created.id, secret: created.secret)
    }

    /// `latchkey-cli`'s authorization request with `resource` added, as JSON: the status
    /// and answer of `/authorize`.
    static func authorize(_ issuer: URL, resource: String?, clientID: String = "latchkey-cli") async throws -> (Int, JSONValue, AuthorizationRequest) {
        let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: clientID, redirectURI: try #require(URL(string: "http://127.0.0.1/callback"))))
        let authorization = try await client.authorizationRequest(scopes: ["openid"])
        var components = try #require(URLComponents(url: authorization.url, resolvingAgainstBaseURL: false))
        if let resource { components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "resource", value: resource)] }
        let (status, answer) = try await P.request("GET", try #require(components.url), headers: ["Accept": "application/json"])
        return (status, answer, authorization)
    }

    /// Signs in with `resource` up to the code.
    static func code(_ issuer: URL, _ authenticator: SoftwareAuthenticator, resource: String?) async throws -> (code: String, verifier: String) {
        let (status, answer, authorization) = try await authorize(issuer, resource: resource)
        try #require(status == 200, "\(answer)")
        let authenticateURL = try P.url(answer["authenticateURL"]?.stringValue)
        let (_, challenge) = try await P.request("GET", authenticateURL)
        let options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.json())
        let (assertion, _) = try authenticator.getAssertion(options, origin: P.origin(issuer))
        let (_, redirect) = try await P.request("POST", authenticateURL, json: try assertion.json())
        let code = try await P.client(issuer).authorizationCode(from: try P.url(redirect["redirectURL"]?.stringValue), for: authorization)
        return (code, authorization.pkce.verifier)
    }

    static func exchange(_ issuer: URL, _ code: (code: String, verifier: String), resource: String?) async throws -> (Int, JSONValue) {
        var form = [
            ("grant_type", "authorization_code"), ("code", code.code), ("redirect_uri", "http://127.0.0.1/callback"), ("code_verifier", code.verifier),
        ]
        if let resource { form.append(("resource", resource)) }
        return try await D.token(issuer, form, proof: nil)
    }

    static func introspect(_ issuer: URL, _ token: String, by server: Server) async throws -> JSONValue {
        let (status, answer) = try await D.introspect(issuer, token: token, id: server.id, secret: server.secret)
        #expect(status == 200, "\(answer)")
        return answer
    }

    @Test("a token asked for one resource: aud names it, active only to its server, refused by another, by a server without a resource and by userinfo", arguments: TestStore.available)
    func audienceBound(engine: TestStore) async throws {
        try await P.withProvider(engine) { issuer, authenticator in
            _ = try await P.bind(issuer, authenticator)
            let orders = try await Self.server(issuer, "orders", resource: Self.orders)
            let billing = try await Self.server(issuer, "billing", resource: Self.billing)
            let legacy = try await Self.server(issuer, "legacy", resource: nil)

            // The resource as the client spells it: upper-case host, default port.
            let (status, tokens) = try await Self.exchange(issuer, try await Self.code(issuer, authenticator, resource: Self.orders), resource: "HTTP://127.0.0.1:9/orders")
            #expect(status == 200, "\(tokens)")
            let access = try #require(tokens["access_token"]?.stringValue)

            let mine = try await Self.introspect(issuer, access, by: orders)
            #expect(mine["active"]?.boolValue == true && mine["aud"]?.stringValue == Self.orders, "\(mine)")
            for other in [billing, legacy] {
                let answer = try await Self.introspect(issuer, access, by: other)
                #expect(answer.objectValue?.count == 1 && answer["active"]?.boolValue == false, "\(answer)")
            }
            let info = try await D.userInfo(issuer, scheme: "Bearer", token: access, proof: nil)
            #expect(info.status == 401)

            // Refresh: another resource is refused and spends nothing; the same one, or none, works.
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            let (wrong, wrongAnswer) = try await D.token(issuer, [("grant_type", "refresh_token"), ("refresh_token", refresh), ("resource", Self.billing)], proof: nil)
            #expect(wrong == 400 && wrongAnswer["error"]?.stringValue == "invalid_target", "\(wrongAnswer)")
            let (refreshed, refreshedAnswer) = try await D.token(issuer, [("grant_type", "refresh_token"), ("refresh_token", refresh), ("resource", Self.orders)], proof: nil)
            #expect(refreshed == 200, "\(refreshedAnswer)")
            let renewed = try #require(refreshedAnswer["access_token"]?.stringValue)
            #expect(try await Self.introspect(issuer, renewed, by: orders)["aud"]?.stringValue == Self.orders)
            #expect(try await Self.introspect(issuer, renewed, by: billing)["active"]?.boolValue == false)

            // A token asked for no resource is the provider's own: the legacy server sees
            // it, the resources' servers do not.
            let (_, plain) = try await Self.exchange(issuer, try await Self.code(issuer, authenticator, resource: nil), resource: nil)
            let plainAccess = try #require(plain["access_token"]?.stringValue)
            #expect(try await Self.introspect(issuer, plainAccess, by: legacy)["active"]?.boolValue == true)
            #expect(try await Self.introspect(issuer, plainAccess, by: orders)["active"]?.boolValue == false)
            #expect(try await D.userInfo(issuer, scheme: "Bearer", token: plainAccess, proof: nil).status == 200)
        }
    }

    @Test("a code asked for one resource and redeemed for another is invalid_target, and stays usable for its own", arguments: TestStore.available)
    func codeForAnotherResource(engine: TestStore) async throws {
        try await P.withProvider(engine) { issuer, authenticator in
            _ = try await P.bind(issuer, authenticator)
            _ = try await Self.server(issuer, "orders", resource: Self.orders)
            _ = try await Self.server(issuer, "billing", resource: Self.billing)
            let code = try await Self.code(issuer, authenticator, resource: Self.orders)
            let (refused, answer) = try await Self.exchange(issuer, code, resource: Self.billing)
            #expect(refused == 400 && answer["error"]?.stringValue == "invalid_target", "\(answer)")
            let (accepted, tokens) = try await Self.exchange(issuer, code, resource: Self.orders)
            #expect(accepted == 200, "\(tokens)")

            // A code asked for no resource cannot be redeemed for one.
            let plain = try await Self.code(issuer, authenticator, resource: nil)
            let (late, lateAnswer) = try await Self.exchange(issuer, plain, resource: Self.orders)
            #expect(late == 400 && lateAnswer["error"]?.stringValue == "invalid_target", "\(lateAnswer)")
        }
    }

    @Test("a resource no server is registered for, a malformed one, or one with a query, fragment, user or plain http elsewhere is invalid_target at /authorize", arguments: [
        "https://unregistered.example/mcp", "not a uri", "mcp", "https://127.0.0.1:9/orders#x", "http://127.0.0.1:9/orders?x=1",
        "http://ada@127.0.0.1:9/orders", "http://orders.example/orders", "ftp://127.0.0.1/orders", String(repeating: "a", count: 600),
    ])
    func unknownResource(resource: String) async throws {
        try await P.withProvider(.sqlite) { issuer, _ in
            _ = try await Self.server(issuer, "orders", resource: Self.orders)
            let (status, answer, _) = try await Self.authorize(issuer, resource: resource)
            #expect(status == 400 && answer["error"]?.stringValue == "invalid_target", "\(answer)")
        }
    }

    @Test("a client registered for some resources is refused the others (invalid_target)")
    func resourceNotAllowed() async throws {
        try await P.withProvider(.sqlite) { issuer, _ in
            _ = try await Self.server(issuer, "orders", resource: Self.orders)
            _ = try await Self.server(issuer, "billing", resource: Self.billing)
            let registration = AdminAPI.Client(
                id: "reports", grantTypes: ["authorization_code"], redirectURIs: ["http://127.0.0.1/callback"], resources: ["HTTP://127.0.0.1:9/billing", Self.billing]
            )
            let created = try await P.admin(issuer).call(AdminAPI.createClient, body: registration)
            try #require(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            #expect(created.answer?.resources == [Self.billing])
            let (refused, answer, _) = try await Self.authorize(issuer, resource: Self.orders, clientID: "reports")
            #expect(refused == 400 && answer["error"]?.stringValue == "invalid_target", "\(answer)")
            let (accepted, started, _) = try await Self.authorize(issuer, resource: Self.billing, clientID: "reports")
            #expect(accepted == 200 && started["authenticateURL"] != nil, "\(started)")

            // A registration naming a malformed resource is refused whole.
            let bad = AdminAPI.Client(id: "bad", grantTypes: ["authorization_code"], redirectURIs: ["http://127.0.0.1/callback"], resources: ["https://x/#f"])
            #expect(try await P.admin(issuer).call(AdminAPI.createClient, body: bad).status == 400)
            // Two servers for one resource, and a malformed one, are refused.
            let twice = try await P.admin(issuer).call(AdminAPI.createResourceServer, body: .init(name: "again", resource: "HTTP://127.0.0.1:9/orders"))
            #expect(twice.status == 409)
            let malformed = try await P.admin(issuer).call(AdminAPI.createResourceServer, body: .init(name: "bad", resource: "https://x/?q"))
            #expect(malformed.status == 400)
        }
    }

    @Test("RFC 8414 metadata at /.well-known/oauth-authorization-server is the OIDC discovery document")
    func authorizationServerMetadata() async throws {
        try await P.withProvider(.sqlite) { issuer, _ in
            let (status, oauth) = try await P.request("GET", issuer.appendingPathComponent(ProtocolPath.authorizationServerMetadata))
            let (_, oidc) = try await P.request("GET", issuer.appendingPathComponent(ProtocolPath.discovery))
            #expect(status == 200 && oauth == oidc)
            #expect(oauth["issuer"]?.stringValue == issuer.absoluteString)
            #expect(oauth["code_challenge_methods_supported"]?.arrayValue?.compactMap(\.stringValue) == ["S256"])
            #expect(oauth["authorization_response_iss_parameter_supported"]?.boolValue == true)
        }
    }
}

extension ResourceIndicatorProviderTests {
    static let reports = "https://reports.example/mcp"

    static func keys(_ issuer: URL) async throws -> JWKSet {
        let response = try await HTTP1Transport().send(TransportRequest(method: "GET", url: issuer.appendingPathComponent(ProtocolPath.jwks)))
        return try JWKSet(json: response.body)
    }

    @Test("a resource server that asks for JWT access tokens (RFC 9068) gets them: checked offline with the JWKS, found by introspection, revocable; the jti is no token", arguments: TestStore.available)
    func jwtAccessTokens(engine: TestStore) async throws {
        try await P.withProvider(engine) { issuer, authenticator in
            let (identity, _) = try await P.bind(issuer, authenticator)
            let reply = try await P.admin(issuer).call(AdminAPI.createResourceServer, body: .init(name: "reports", resource: Self.reports, accessTokenFormat: "jwt"))
            let created = try #require(reply.answer, "\(String(decoding: reply.body, as: UTF8.self))")
            #expect(created.accessTokenFormat == "jwt")
            let server = Server(id: created.id, secret: created.secret)
            let other = try await Self.server(issuer, "orders", resource: Self.orders)

            let (status, tokens) = try await Self.exchange(issuer, try await Self.code(issuer, authenticator, resource: Self.reports), resource: Self.reports)
            #expect(status == 200, "\(tokens)")
            let access = try #require(tokens["access_token"]?.stringValue)
            let keys = try await Self.keys(issuer)
            let validator = JWTAccessTokenValidator(issuer: issuer.absoluteString, resource: Self.reports)
            let claims = try validator.validate(access, keys: keys)
            #expect(claims.subject == identity && claims.clientID == "latchkey-cli" && claims.audiences == [Self.reports] && claims.scope == "openid")
            #expect(try JWS(compact: access).header["typ"]?.stringValue == "at+jwt")
            // The ID token's at_hash covers the JWT handed out.
            let idToken = try #require(tokens["id_token"]?.stringValue)
            _ = try IDTokenValidator(issuer: issuer.absoluteString, clientID: "latchkey-cli").validate(
                idToken, expectations: .init(accessToken: access), keys: keys
            )
            // Not for another resource; an ID token is not an access token.
            #expect(throws: OAuthError.self) { _ = try JWTAccessTokenValidator(issuer: issuer.absoluteString, resource: Self.orders).validate(access, keys: keys) }
            #expect(throws: OAuthError.self) { _ = try validator.validate(idToken, keys: keys) }

            #expect(try await Self.introspect(issuer, access, by: server)["aud"]?.stringValue == Self.reports)
            #expect(try await Self.introspect(issuer, access, by: other)["active"]?.boolValue == false)
            // The jti presented as an opaque token, and the JWT with its payload altered, are no tokens.
            #expect(try await Self.introspect(issuer, claims.tokenID, by: server)["active"]?.boolValue == false)
            var parts = access.split(separator: ".").map(String.init)
            parts[1] = Base64URL.encode(Data(String(decoding: try Base64URL.decode(parts[1]), as: UTF8.self).replacingOccurrences(of: identity, with: "someone-else").utf8))
            #expect(try await Self.introspect(issuer, parts.joined(separator: "."), by: server)["active"]?.boolValue == false)

            // A refresh gives a new JWT; revoking it stops it at introspection.
            let (_, refreshed) = try await D.token(issuer, [("grant_type", "refresh_token"), ("refresh_token", try #require(tokens["refresh_token"]?.stringValue))], proof: nil)
            let renewed = try #require(refreshed["access_token"]?.stringValue)
            #expect(try validator.validate(renewed, keys: keys).tokenID != claims.tokenID)
            _ = try await HTTP1Transport().send(TransportRequest(
                method: "POST", url: issuer.appendingPathComponent("revoke"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: FormEncoding.encode([("token", renewed), ("client_id", "latchkey-cli"), ("token_type_hint", "access_token")])
            ))
            #expect(try await Self.introspect(issuer, renewed, by: server)["active"]?.boolValue == false)
            #expect(try await Self.introspect(issuer, access, by: server)["active"]?.boolValue == true)

            // One length rule at both endpoints: empty, an opaque string past 256 bytes and a
            // JWS-shaped one past 4,096 are no tokens; revoking them is a quiet 200 that
            // touches nothing.
            let junk = ["", String(repeating: "a", count: 257), String(repeating: "a", count: 2000) + "." + String(repeating: "b", count: 2100) + ".c"]
            for token in junk {
                #expect(try await Self.introspect(issuer, token, by: server)["active"]?.boolValue == false, "\(token.utf8.count) bytes")
                let revoked = try await HTTP1Transport().send(TransportRequest(
                    method: "POST", url: issuer.appendingPathComponent("revoke"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: FormEncoding.encode([("token", token), ("client_id", "latchkey-cli")])
                ))
                #expect(revoked.status == 200, "\(token.utf8.count) bytes: \(revoked.status)")
            }
            #expect(try await Self.introspect(issuer, access, by: server)["active"]?.boolValue == true)

            // JWT access tokens need a resource; formats are named.
            let bare = try await P.admin(issuer).call(AdminAPI.createResourceServer, body: .init(name: "x", accessTokenFormat: "jwt"))
            #expect(bare.status == 400)
            let unknown = try await P.admin(issuer).call(AdminAPI.createResourceServer, body: .init(name: "x", resource: "https://x.example", accessTokenFormat: "paseto"))
            #expect(unknown.status == 400)
        }
    }
}
