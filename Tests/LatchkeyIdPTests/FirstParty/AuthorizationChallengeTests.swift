import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The authorization challenge endpoint with passkeys (draft-ietf-oauth-first-party-apps-04;
/// docs/PROTOCOL.md section 8) over real HTTP: the sign-in with and without DPoP, and the
/// abuse of each of its inputs.
@Suite("Provider: the authorization challenge endpoint (first-party apps)")
struct AuthorizationChallengeTests {
    typealias Reply = TransportResponse

    /// A form POST with optional DPoP headers.
    static func post(_ issuer: URL, _ path: String, _ items: [(String, String)], dpop: DPoPSigner? = nil) async throws -> Reply {
        let url = issuer.appendingPathComponent(path)
        return try await HTTPExchange.form(url, items, headers: try dpop?.headers(method: HTTPMethod.post, url: url) ?? [:])
    }

    static func challenge(_ issuer: URL, pkce: PKCE, loginHint: String? = nil, dpop: DPoPSigner? = nil, clientID: String = "latchkey-cli") async throws -> Reply {
        let request = AuthorizationChallengeRequest(
            clientID: clientID, scope: "openid profile", codeChallenge: pkce.challenge, codeChallengeMethod: PKCE.challengeMethod, loginHint: loginHint
        )
        return try await post(issuer, ProtocolPath.authorizationChallenge, request.formItems, dpop: dpop)
    }

    static func answer(_ issuer: URL, session: String, assertion: AuthenticationResponseJSON?, dpop: DPoPSigner? = nil, clientID: String = "latchkey-cli") async throws -> Reply {
        let request = AuthorizationChallengeRequest(
            clientID: clientID, authSession: session, webauthnResponse: try assertion.map { String(decoding: try $0.json(), as: UTF8.self) }
        )
        return try await post(issuer, ProtocolPath.authorizationChallenge, request.formItems, dpop: dpop)
    }

    static func redeem(_ issuer: URL, code: String, verifier: String, redirectURI: String? = nil, dpop: DPoPSigner? = nil) async throws -> Reply {
        let request = TokenRequest(grantType: .authorizationCode, code: code, redirectURI: redirectURI, codeVerifier: verifier, clientID: "latchkey-cli")
        return try await post(issuer, ProtocolPath.token, request.formItems, dpop: dpop)
    }

    /// A provider with `ada` bound in a software authenticator.
    static func withBound(_ body: @escaping @Sendable (URL, SoftwareAuthenticator, String) async throws -> Void) async throws {
        try await ProviderTests.withProvider { issuer, authenticator in
            let (identity, _) = try await ProviderTests.bind(issuer, authenticator)
            try await body(issuer, authenticator, identity)
        }
    }

    static func options(_ reply: Reply) throws -> (String, PublicKeyCredentialRequestOptionsJSON) {
        let session = try #require(reply.json["auth_session"]?.stringValue, "\(reply.text)")
        let options = try PublicKeyCredentialRequestOptionsJSON(json: try #require(reply.json["webauthn"]).json())
        return (session, options)
    }

    @Test("discovery names the endpoint; a sign-in without DPoP: 403 insufficient_authorization with options, the assertion, 200 with a code, redeemed without redirect_uri for tokens of the signer")
    func signIn() async throws {
        try await Self.withBound { issuer, authenticator, identity in
            let metadata = try await OAuthClient(configuration: .init(issuer: issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback)).metadata()
            #expect(metadata.authorizationChallengeEndpoint == issuer.appendingPathComponent(ProtocolPath.authorizationChallenge))
            let pkce = try PKCE.generate()
            let first = try await Self.challenge(issuer, pkce: pkce)
            #expect(first.status == 403 && first.errorCode == "insufficient_authorization", "\(first.text)")
            let (session, options) = try Self.options(first)
            #expect(options.allowCredentials == nil, "no login_hint: a discoverable credential")
            let (assertion, _) = try authenticator.getAssertion(options, origin: ProviderTests.origin(issuer))
            let second = try await Self.answer(issuer, session: session, assertion: assertion)
            #expect(second.status == 200, "\(second.text)")
            let code = try #require(second.json["authorization_code"]?.stringValue)
            let tokens = try await Self.redeem(issuer, code: code, verifier: pkce.verifier)
            #expect(tokens.status == 200 && tokens.json["token_type"]?.stringValue == "Bearer", "\(tokens.text)")
            let idToken = try #require(tokens.json["id_token"]?.stringValue)
            let claims = try JSONValue(json: try Base64URL.decode(String(idToken.split(separator: ".")[1])))
            #expect(claims["sub"]?.stringValue == identity && claims["nonce"] == nil)
            // The session is spent: it yields no second code, with or without an assertion.
            let again = try await Self.answer(issuer, session: session, assertion: assertion)
            #expect(again.status == 400 && again.errorCode == "invalid_session", "\(again.text)")
            // A code redeemed twice, or with a wrong verifier, or with a redirect_uri.
            #expect(try await Self.redeem(issuer, code: code, verifier: pkce.verifier).errorCode == "invalid_grant")
        }
    }

    @Test("with DPoP: the session is bound to the first proof's key; a second request without a proof, or with another key's, is refused and spends nothing; the code and tokens are bound")
    func dpopBinding() async throws {
        try await Self.withBound { issuer, authenticator, _ in
            let key = try DPoPSigner(key: SigningKey.generate(.es256))
            let other = try DPoPSigner(key: SigningKey.generate(.es256))
            let pkce = try PKCE.generate()
            let (session, options) = try Self.options(try await Self.challenge(issuer, pkce: pkce, loginHint: "ada", dpop: key))
            #expect(options.allowCredentials?.count == 16, "login_hint lists ada's credential among decoys")
            let (assertion, _) = try authenticator.getAssertion(options, origin: ProviderTests.origin(issuer))
            let withoutProof = try await Self.answer(issuer, session: session, assertion: assertion)
            #expect(withoutProof.status == 400 && withoutProof.errorCode == "invalid_dpop_proof", "\(withoutProof.text)")
            let otherKey = try await Self.answer(issuer, session: session, assertion: assertion, dpop: other)
            #expect(otherKey.status == 400 && otherKey.errorCode == "invalid_dpop_proof")
            let done = try await Self.answer(issuer, session: session, assertion: assertion, dpop: key)
            #expect(done.status == 200, "the refusals spent nothing: \(done.text)")
            let code = try #require(done.json["authorization_code"]?.stringValue)
            #expect(try await Self.redeem(issuer, code: code, verifier: pkce.verifier).errorCode == "invalid_dpop_proof", "the code needs the key")
            #expect(try await Self.redeem(issuer, code: code, verifier: pkce.verifier, dpop: other).errorCode == "invalid_dpop_proof")
            let tokens = try await Self.redeem(issuer, code: code, verifier: pkce.verifier, dpop: key)
            #expect(tokens.status == 200 && tokens.json["token_type"]?.stringValue == "DPoP", "\(tokens.text)")
        }
    }

    @Test("hostile inputs: no PKCE, response_type other than code, an unknown client, a tampered, oversized or foreign auth_session, an assertion over another challenge, a replayed assertion (counter), a wrong verifier, a redirect_uri at redemption")
    func hostile() async throws {
        try await Self.withBound { issuer, authenticator, _ in
            let pkce = try PKCE.generate()
            let noPKCE = try await Self.post(issuer, ProtocolPath.authorizationChallenge, AuthorizationChallengeRequest(clientID: "latchkey-cli").formItems)
            #expect(noPKCE.status == 400 && noPKCE.errorCode == "invalid_request")
            let token = AuthorizationChallengeRequest(responseType: "token", clientID: "latchkey-cli", codeChallenge: pkce.challenge, codeChallengeMethod: "S256")
            #expect(try await Self.post(issuer, ProtocolPath.authorizationChallenge, token.formItems).errorCode == "unsupported_response_type")
            #expect(try await Self.challenge(issuer, pkce: pkce, clientID: "nobody").errorCode == "invalid_client")
            let onlyAssertion = AuthorizationChallengeRequest(clientID: "latchkey-cli", codeChallenge: pkce.challenge, codeChallengeMethod: "S256", webauthnResponse: "{}")
            #expect(try await Self.post(issuer, ProtocolPath.authorizationChallenge, onlyAssertion.formItems).errorCode == "invalid_request")

            let (session, options) = try Self.options(try await Self.challenge(issuer, pkce: pkce))
            let (other, otherOptions) = try Self.options(try await Self.challenge(issuer, pkce: pkce))
            var tampered = Array(session)
            tampered[tampered.count / 2] = tampered[tampered.count / 2] == "A" ? "B" : "A"
            #expect(try await Self.answer(issuer, session: String(tampered), assertion: nil).errorCode == "invalid_session")
            #expect(try await Self.answer(issuer, session: String(repeating: "A", count: 20_000), assertion: nil).status == 400)
            // Another client's: a registered public client may not use ada's session.
            let admin = AdminAPIClient(issuer: issuer, token: ProviderTests.adminToken)
            _ = try await admin.call(AdminAPI.createClient, body: .init(id: "other-app", grantTypes: ["authorization_code"], redirectURIs: ["http://127.0.0.1/cb"]))
            #expect(try await Self.answer(issuer, session: session, assertion: nil, clientID: "other-app").errorCode == "invalid_session")
            // Asked again without an assertion: the same options.
            let repeated = try Self.options(try await Self.answer(issuer, session: session, assertion: nil))
            #expect(repeated.1.challenge == options.challenge)

            let origin = ProviderTests.origin(issuer)
            let (forOther, _) = try authenticator.getAssertion(otherOptions, origin: origin)
            let crossed = try await Self.answer(issuer, session: session, assertion: forOther)
            #expect(crossed.status == 400 && crossed.errorCode == "invalid_assertion", "\(crossed.text)")
            let (assertion, _) = try authenticator.getAssertion(options, origin: origin)
            let code = try #require(try await Self.answer(issuer, session: session, assertion: assertion).json["authorization_code"]?.stringValue)
            // The other session, answered with a replay of an older assertion over its own
            // challenge: the counter did not grow.
            let replayed = try await Self.answer(issuer, session: other, assertion: forOther)
            #expect(replayed.status == 400, "\(replayed.text)")
            #expect(try await Self.redeem(issuer, code: code, verifier: try PKCE.generate().verifier).errorCode == "invalid_grant")
            #expect(try await Self.redeem(issuer, code: code, verifier: pkce.verifier, redirectURI: "http://127.0.0.1/callback").errorCode == "invalid_grant")
            #expect(try await Self.redeem(issuer, code: code, verifier: pkce.verifier).status == 200, "the refused redemptions did not spend it")
        }
    }

    @Test("an expired auth_session is invalid_session, with or without an assertion")
    func expiredSession() async throws {
        let clock = TestClock()
        try await ProviderTests.withProvider(.sqlite, {
            $0.authenticationSessionLifetime = 1
            $0.clock = clock.provider
        }) { issuer, authenticator in
            _ = try await ProviderTests.bind(issuer, authenticator)
            let pkce = try PKCE.generate()
            let (session, options) = try Self.options(try await Self.challenge(issuer, pkce: pkce))
            let (assertion, _) = try authenticator.getAssertion(options, origin: ProviderTests.origin(issuer))
            clock.advance(by: 1.5)
            let late = try await Self.answer(issuer, session: session, assertion: assertion)
            #expect(late.status == 400 && late.errorCode == "invalid_session", "\(late.text)")
            #expect(try await Self.answer(issuer, session: session, assertion: nil).errorCode == "invalid_session")
        }
    }
}
