import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyWebAuthn
import LatchkeyTestSupport
import Testing

/// DPoP at the reference provider (RFC 9449): bound tokens, proofs at the token endpoint
/// and at userinfo, replay, the refusals by name, `--require-dpop` and `dpop_jkt`.
@Suite("Reference provider: DPoP-bound tokens")
struct DPoPProviderTests {
    typealias P = ProviderTests

    /// Signs in up to the code: the code and its PKCE verifier.
    static func code(_ issuer: URL, _ authenticator: SoftwareAuthenticator, dpopJKT: String? = nil) async throws -> (code: String, verifier: String) {
        let (code, authorization) = try await codeAndRequest(issuer, authenticator, client: try P.client(issuer), dpopJKT: dpopJKT)
        return (code, authorization.pkce.verifier)
    }

    /// Signs in up to the code with `client`'s authorization request.
    static func codeAndRequest(
        _ issuer: URL, _ authenticator: SoftwareAuthenticator, client: OAuthClient, dpopJKT: String? = nil
    ) async throws -> (code: String, request: AuthorizationRequest) {
        let authorization = try await client.authorizationRequest(scopes: ["openid", "profile"])
        var components = try #require(URLComponents(url: authorization.url, resolvingAgainstBaseURL: false))
        if let dpopJKT { components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "dpop_jkt", value: dpopJKT)] }
        let (status, answer) = try await P.request("GET", try #require(components.url), headers: ["Accept": "application/json"])
        #expect(status == 200, "\(answer)")
        let authenticateURL = try P.url(answer["authenticateURL"]?.stringValue)
        let (_, challenge) = try await P.request("GET", authenticateURL)
        let options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.json())
        let (assertion, _) = try authenticator.getAssertion(options, origin: P.origin(issuer))
        let (_, redirect) = try await P.request("POST", authenticateURL, json: try assertion.json())
        let code = try await client.authorizationCode(from: try P.url(redirect["redirectURL"]?.stringValue), for: authorization)
        return (code, authorization)
    }

    static func token(_ issuer: URL, _ form: [(String, String)], proof: String?) async throws -> (Int, JSONValue) {
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        if let proof { headers["DPoP"] = proof }
        let response = try await HTTP1Transport().send(TransportRequest(
            method: "POST", url: issuer.appendingPathComponent("token"), headers: headers,
            body: FormEncoding.encode(form + [("client_id", "latchkey-cli")])
        ))
        return (response.status, (try? JSONValue(json: response.body)) ?? [:])
    }

    static func exchange(_ issuer: URL, _ code: (code: String, verifier: String), proof: String?) async throws -> (Int, JSONValue) {
        try await token(issuer, [
            ("grant_type", "authorization_code"), ("code", code.code), ("redirect_uri", "http://127.0.0.1/callback"), ("code_verifier", code.verifier),
        ], proof: proof)
    }

    static func userInfo(_ issuer: URL, scheme: String, token: String, proof: String?) async throws -> TransportResponse {
        var headers = ["Authorization": "\(scheme) \(token)"]
        if let proof { headers["DPoP"] = proof }
        return try await HTTP1Transport().send(TransportRequest(method: "GET", url: issuer.appendingPathComponent("userinfo"), headers: headers))
    }

    static func proof(_ key: SigningKey, _ method: String, _ url: URL, token: String? = nil) throws -> String {
        try DPoPProof.make(method: method, url: url, key: key, accessToken: token)
    }

    @Test("a proof binds the tokens: token_type DPoP, userinfo only with the DPoP scheme, a proof of the key and its ath; replays and other keys refused", arguments: TestStore.available)
    func boundTokens(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, authenticator in
            _ = try await P.bind(issuer, authenticator)
            let key = try SigningKey.generate(.es256)
            let tokenURL = issuer.appendingPathComponent("token")
            let userInfoURL = issuer.appendingPathComponent("userinfo")

            let (status, tokens) = try await Self.exchange(issuer, try await Self.code(issuer, authenticator), proof: try Self.proof(key, "POST", tokenURL))
            #expect(status == 200 && tokens["token_type"]?.stringValue == "DPoP", "\(tokens)")
            let access = try #require(tokens["access_token"]?.stringValue)
            let refresh = try #require(tokens["refresh_token"]?.stringValue)

            let proof = try Self.proof(key, "GET", userInfoURL, token: access)
            let info = try await Self.userInfo(issuer, scheme: "DPoP", token: access, proof: proof)
            #expect(info.status == 200, "\(String(decoding: info.body, as: UTF8.self))")

            // A bound token used as a bearer token.
            let bearer = try await Self.userInfo(issuer, scheme: "Bearer", token: access, proof: nil)
            #expect(bearer.status == 401 && bearer.headers.first { $0.key.lowercased() == "www-authenticate" }?.value.hasPrefix("DPoP") == true)
            // The same proof again: a replayed jti.
            let replay = try await Self.userInfo(issuer, scheme: "DPoP", token: access, proof: proof)
            #expect(replay.status == 401 && String(decoding: replay.body, as: UTF8.self).contains("invalid_dpop_proof"))
            // A proof for another token (ath), and a proof of another key.
            let otherToken = try await Self.userInfo(issuer, scheme: "DPoP", token: access, proof: try Self.proof(key, "GET", userInfoURL, token: "another"))
            #expect(otherToken.status == 401)
            let otherKey = try await Self.userInfo(issuer, scheme: "DPoP", token: access, proof: try Self.proof(SigningKey.generate(.es256), "GET", userInfoURL, token: access))
            #expect(otherKey.status == 401)
            // No proof with the DPoP scheme.
            let missing = try await Self.userInfo(issuer, scheme: "DPoP", token: access, proof: nil)
            #expect(missing.status == 401)

            // Refresh: another key and no key are refused and spend nothing; the key works.
            let refreshForm = [("grant_type", "refresh_token"), ("refresh_token", refresh)]
            let (stolen, stolenAnswer) = try await Self.token(issuer, refreshForm, proof: try Self.proof(SigningKey.generate(.es256), "POST", tokenURL))
            #expect(stolen == 400 && stolenAnswer["error"]?.stringValue == "invalid_dpop_proof", "\(stolenAnswer)")
            let (bare, bareAnswer) = try await Self.token(issuer, refreshForm, proof: nil)
            #expect(bare == 400 && bareAnswer["error"]?.stringValue == "invalid_dpop_proof", "\(bareAnswer)")
            let (refreshed, refreshedAnswer) = try await Self.token(issuer, refreshForm, proof: try Self.proof(key, "POST", tokenURL))
            #expect(refreshed == 200 && refreshedAnswer["token_type"]?.stringValue == "DPoP", "\(refreshedAnswer)")
        }
    }

    @Test("--require-dpop refuses a token request without a proof; discovery lists the DPoP algorithms")
    func required() async throws {
        try await ProviderTests.withProvider(.sqlite, { $0.requiresDPoP = true }) { issuer, authenticator in
            _ = try await P.bind(issuer, authenticator)
            let (discovered, document) = try await P.request("GET", issuer.appendingPathComponent(".well-known/openid-configuration"))
            #expect(discovered == 200 && document["dpop_signing_alg_values_supported"]?.arrayValue?.compactMap(\.stringValue) == ["ES256", "EdDSA"])
            let code = try await Self.code(issuer, authenticator)
            let (status, answer) = try await Self.exchange(issuer, code, proof: nil)
            #expect(status == 400 && answer["error"]?.stringValue == "invalid_dpop_proof", "\(answer)")
            // Refused without spending the code: the client with a proof still gets tokens.
            let key = try SigningKey.generate(.ed25519)
            let (bound, tokens) = try await Self.exchange(issuer, code, proof: try Self.proof(key, "POST", issuer.appendingPathComponent("token")))
            #expect(bound == 200 && tokens["token_type"]?.stringValue == "DPoP", "\(tokens)")
        }
    }

    @Test("dpop_jkt at /authorize: the code is redeemed only with a proof of that key")
    func authorizationBinding() async throws {
        try await ProviderTests.withProvider { issuer, authenticator in
            _ = try await P.bind(issuer, authenticator)
            let key = try SigningKey.generate(.es256)
            let code = try await Self.code(issuer, authenticator, dpopJKT: try key.publicKey.jwk.thumbprint())
            let tokenURL = issuer.appendingPathComponent("token")
            let (other, answer) = try await Self.exchange(issuer, code, proof: try Self.proof(SigningKey.generate(.es256), "POST", tokenURL))
            #expect(other == 400 && answer["error"]?.stringValue == "invalid_dpop_proof", "\(answer)")
            let (none, _) = try await Self.exchange(issuer, code, proof: nil)
            #expect(none == 400)
            let (bound, tokens) = try await Self.exchange(issuer, code, proof: try Self.proof(key, "POST", tokenURL))
            #expect(bound == 200 && tokens["token_type"]?.stringValue == "DPoP", "\(tokens)")
            // A malformed dpop_jkt is refused at /authorize.
            let authorization = try await P.client(issuer).authorizationRequest(scopes: ["openid"])
            let (status, refusal) = try await P.request(
                "GET", authorization.url.appending(queryItems: [URLQueryItem(name: "dpop_jkt", value: "short")]), headers: ["Accept": "application/json"]
            )
            #expect(status == 400 && (refusal["error_description"]?.stringValue)?.contains("dpop_jkt") == true, "\(refusal)")
        }
    }

    @Test("--require-dpop-nonce: a proof without the nonce is use_dpop_nonce with a DPoP-Nonce; OAuthClient retries once with it and keeps the tokens bound", arguments: TestStore.available)
    func nonces(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine, { $0.requiresDPoPNonce = true }) { issuer, authenticator in
            let (identity, _) = try await P.bind(issuer, authenticator)
            let key = try SigningKey.generate(.es256)
            let tokenURL = issuer.appendingPathComponent("token")

            // By hand: the refusal names the error and hands out the nonce.
            let code = try await Self.code(issuer, authenticator)
            var headers = ["Content-Type": "application/x-www-form-urlencoded", "DPoP": try Self.proof(key, "POST", tokenURL)]
            let form = FormEncoding.encode([
                ("grant_type", "authorization_code"), ("code", code.code), ("redirect_uri", "http://127.0.0.1/callback"),
                ("code_verifier", code.verifier), ("client_id", "latchkey-cli"),
            ])
            let refused = try await HTTP1Transport().send(TransportRequest(method: "POST", url: tokenURL, headers: headers, body: form))
            let nonce = try #require(refused.headers.first { $0.key.lowercased() == "dpop-nonce" }?.value, "\(refused.headers)")
            #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("use_dpop_nonce"))
            let stale = try DPoPProof.make(method: "POST", url: tokenURL, key: key, nonce: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            headers["DPoP"] = stale
            let staleAnswer = try await HTTP1Transport().send(TransportRequest(method: "POST", url: tokenURL, headers: headers, body: form))
            #expect(staleAnswer.status == 400 && String(decoding: staleAnswer.body, as: UTF8.self).contains("use_dpop_nonce"))
            headers["DPoP"] = try DPoPProof.make(method: "POST", url: tokenURL, key: key, nonce: nonce)
            let accepted = try await HTTP1Transport().send(TransportRequest(method: "POST", url: tokenURL, headers: headers, body: form))
            #expect(accepted.status == 200, "\(String(decoding: accepted.body, as: UTF8.self))")

            // Through OAuthClient: the nonce dance is the client's, the app sees tokens.
            let client = try P.client(issuer)
            let signer = try DPoPSigner(key: SigningKey.generate(.ed25519))
            let (clientCode, authorization) = try await Self.codeAndRequest(issuer, authenticator, client: client)
            let tokens = try await client.exchange(code: clientCode, for: authorization, dpop: signer)
            #expect(tokens.isDPoPBound && tokens.idTokenClaims?.subject == identity)
            let info = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: identity, dpop: signer)
            #expect(info["preferred_username"]?.stringValue == "ada")
            await #expect(throws: OAuthError.self) { try await client.refresh(tokens) }
            let refreshed = try await client.refresh(tokens, dpop: signer)
            #expect(refreshed.isDPoPBound && refreshed.refreshToken != tokens.refreshToken)
        }
    }

    static func introspect(_ issuer: URL, token: String, id: String?, secret: String?) async throws -> (Int, JSONValue) {
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        if let id, let secret { headers["Authorization"] = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString() }
        let response = try await HTTP1Transport().send(TransportRequest(
            method: "POST", url: issuer.appendingPathComponent("introspect"), headers: headers, body: FormEncoding.encode([("token", token)])
        ))
        return (response.status, (try? JSONValue(json: response.body)) ?? [:])
    }

    @Test("introspection (RFC 7662): only a resource server's credential, cnf.jkt for a bound token, inactive once revoked", arguments: TestStore.available)
    func introspection(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, authenticator in
            let (identity, _) = try await P.bind(issuer, authenticator)
            let (created, server) = try await P.request(
                "POST", issuer.appendingPathComponent("admin/resource-servers"),
                json: try JSONSerialization.data(withJSONObject: ["name": "orders API"]), headers: ["Authorization": "Bearer \(P.adminToken)"]
            )
            #expect(created == 201, "\(server)")
            let id = try #require(server["id"]?.stringValue)
            let secret = try #require(server["secret"]?.stringValue)
            let (discovered, document) = try await P.request("GET", issuer.appendingPathComponent(".well-known/openid-configuration"))
            #expect(discovered == 200 && document["introspection_endpoint"]?.stringValue == server["introspectionEndpoint"]?.stringValue)

            let key = try SigningKey.generate(.es256)
            let (_, tokens) = try await Self.exchange(issuer, try await Self.code(issuer, authenticator), proof: try Self.proof(key, "POST", issuer.appendingPathComponent("token")))
            let access = try #require(tokens["access_token"]?.stringValue)

            let (status, answer) = try await Self.introspect(issuer, token: access, id: id, secret: secret)
            #expect(status == 200 && answer["active"]?.boolValue == true && answer["sub"]?.stringValue == identity, "\(answer)")
            let thumbprint = try key.publicKey.jwk.thumbprint()
            #expect((answer["cnf"])?["jkt"]?.stringValue == thumbprint && answer["token_type"]?.stringValue == "DPoP")

            let (anonymous, _) = try await Self.introspect(issuer, token: access, id: nil, secret: nil)
            #expect(anonymous == 401)
            let (wrong, _) = try await Self.introspect(issuer, token: access, id: id, secret: secret + "x")
            #expect(wrong == 401)
            let (unknown, inactive) = try await Self.introspect(issuer, token: "not-a-token", id: id, secret: secret)
            #expect(unknown == 200 && inactive.objectValue?.count == 1 && inactive["active"]?.boolValue == false, "\(inactive)")

            // Revoking the refresh token takes the family, and so the access token, with it.
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            _ = try await HTTP1Transport().send(TransportRequest(
                method: "POST", url: issuer.appendingPathComponent("revoke"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: FormEncoding.encode([("token", refresh), ("client_id", "latchkey-cli")])
            ))
            let (_, revoked) = try await Self.introspect(issuer, token: access, id: id, secret: secret)
            #expect(revoked["active"]?.boolValue == false)

            // A deleted resource server can no longer ask.
            let (deleted, _) = try await P.request("DELETE", issuer.appendingPathComponent("admin/resource-servers/\(id)"), headers: ["Authorization": "Bearer \(P.adminToken)"])
            #expect(deleted == 200)
            let (gone, _) = try await Self.introspect(issuer, token: access, id: id, secret: secret)
            #expect(gone == 401)
        }
    }
}
