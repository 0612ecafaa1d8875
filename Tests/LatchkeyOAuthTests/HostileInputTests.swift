import Foundation
import LatchkeyCrypto
@testable import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// Named attacks on the OAuth client, each expecting its own error code. Every case runs
/// against a real provider on 127.0.0.1.
@Suite("OAuth hostile input")
struct HostileInputTests {
    struct Context: Sendable {
        let client: OAuthClient
        let provider: TestProvider
        let issuer: URL

        /// A token signed by the provider's current key, claims changed by `change`.
        func token(nonce: String? = "n", _ change: @escaping @Sendable (inout JSONValue) -> Void = { _ in }) async throws -> String {
            try await provider.idToken(nonce: nonce, accessToken: nil, change)
        }

        func validate(_ token: String, nonce: String? = "n", maxAge: TimeInterval? = nil, accessToken: String? = nil) async throws {
            _ = try await client.validateIDToken(token, expectations: .init(nonce: nonce, maxAge: maxAge, accessToken: accessToken))
        }

        /// A hand-made JWS with any header, payload and signature.
        static func forge(header: String, payload: JSONValue, signature: Data = Data(repeating: 1, count: 64)) throws -> String {
            Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(try payload.json()) + "." + Base64URL.encode(signature)
        }

        func validClaims() async -> JSONValue {
            let now = Date().timeIntervalSince1970
            return ["iss": .string(issuer.absoluteString), "sub": "u", "aud": "test-client", "iat": .number(now), "exp": .number(now + 300), "nonce": "n"]
        }

        func redirect(_ query: String) throws -> URL {
            guard let url = URL(string: "http://127.0.0.1/callback?" + query) else { throw OAuthError.malformedResponse(reason: "test URL") }
            return url
        }
    }

    typealias Attack = HostileCase<Context, OAuthError.Code>

    static let attacks: [Attack] = [
        // ID token: algorithm and signature
        Attack(name: "alg none", expected: .algorithmNotAllowed) { context in
            try await context.validate(try Context.forge(header: #"{"alg":"none"}"#, payload: await context.validClaims(), signature: Data()))
        },
        Attack(name: "HS256 keyed with the provider's EC public key", expected: .algorithmNotAllowed) { context in
            let publicKey = await context.provider.signingKey.publicKey
            let header = #"{"alg":"HS256","kid":"key-1"}"#
            let payload = try await context.validClaims().json()
            let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(payload)
            let mac = try HMAC.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(publicKey.pemRepresentation.utf8)))
            try await context.validate(input + "." + Base64URL.encode(mac))
        },
        Attack(name: "alg swapped to EdDSA for the EC key", expected: .algorithmKeyMismatch) { context in
            try await context.validate(try Context.forge(header: #"{"alg":"EdDSA","kid":"key-1"}"#, payload: await context.validClaims()))
        },
        Attack(name: "alg swapped to RS256 for the EC key", expected: .algorithmKeyMismatch) { context in
            try await context.validate(try Context.forge(header: #"{"alg":"RS256","kid":"key-1"}"#, payload: await context.validClaims(), signature: Data(count: 256)))
        },
        Attack(name: "unlisted algorithm ES384", expected: .algorithmNotAllowed) { context in
            try await context.validate(try Context.forge(header: #"{"alg":"ES384","kid":"key-1"}"#, payload: await context.validClaims()))
        },
        Attack(name: "bad signature", expected: .invalidSignature) { context in
            // Change one symbol in the middle of the signature (the last symbol carries
            // padding bits, and changing those would be a malformed encoding instead).
            var characters = Array(try await context.token())
            let index = characters.count - 20
            characters[index] = characters[index] == "A" ? "B" : "A"
            try await context.validate(String(characters))
        },
        Attack(name: "signed by another key under the provider's kid", expected: .invalidSignature) { context in
            let impostor = try SigningKey.generate(.es256)
            try await context.validate(try await context.provider.idToken(nonce: "n", accessToken: nil, key: impostor, keyID: "key-1"))
        },
        Attack(name: "unknown kid", expected: .unknownKey) { context in
            try await context.validate(try await context.provider.idToken(nonce: "n", accessToken: nil, keyID: "nobody"))
        },
        Attack(name: "crit header", expected: .unsupportedCriticalHeader) { context in
            try await context.validate(try Context.forge(header: #"{"alg":"ES256","kid":"key-1","crit":["exp"],"exp":1}"#, payload: await context.validClaims()))
        },
        Attack(name: "JWE (five parts)", expected: .malformedJWS) { context in
            try await context.validate("a.b.c.d.e")
        },
        Attack(name: "header not JSON", expected: .malformedJWS) { context in
            try await context.validate(Base64URL.encode(Data("alg".utf8)) + ".e30.AAAA")
        },
        Attack(name: "alg named twice in the header (RFC 7515 §4)", expected: .malformedJWS) { context in
            try await context.validate(try Context.forge(header: #"{"alg":"none","kid":"key-1","alg":"ES256"}"#, payload: await context.validClaims()))
        },
        Attack(name: "padded base64", expected: .malformedJWS) { context in
            try await context.validate("eyJhbGciOiJFUzI1NiJ9.e30=.AAAA")
        },
        Attack(name: "oversized token", expected: .malformedJWS) { context in
            try await context.validate(String(repeating: "A", count: 70_000) + ".e30.AAAA")
        },
        // ID token: claims
        Attack(name: "a claim named twice (RFC 7519 §4), signed by the provider's key", expected: .malformedResponse) { context in
            // A second `sub` ahead of the real one: a reader that kept either could be
            // steered, so the claims set is refused whole.
            let claims = String(decoding: try await context.validClaims().json(), as: UTF8.self)
            let payload = Data((#"{"sub":"attacker","# + claims.dropFirst()).utf8)
            try await context.validate(try JWS.sign(payload: payload, with: await context.provider.signingKey, keyID: "key-1", type: "JWT"))
        },
        Attack(name: "wrong iss", expected: .invalidIssuer) { context in
            try await context.validate(try await context.token { $0["iss"] = "https://evil.example" })
        },
        Attack(name: "wrong aud", expected: .invalidAudience) { context in
            try await context.validate(try await context.token { $0["aud"] = "other-client" })
        },
        Attack(name: "several audiences without azp", expected: .invalidAuthorizedParty) { context in
            try await context.validate(try await context.token { $0["aud"] = ["test-client", "other-client"] })
        },
        Attack(name: "azp naming another client", expected: .invalidAuthorizedParty) { context in
            try await context.validate(try await context.token { $0["azp"] = "other-client" })
        },
        Attack(name: "wrong nonce", expected: .nonceMismatch) { context in
            try await context.validate(try await context.token(nonce: "other"))
        },
        Attack(name: "missing nonce", expected: .nonceMismatch) { context in
            try await context.validate(try await context.token(nonce: nil))
        },
        Attack(name: "expired", expected: .expired) { context in
            try await context.validate(try await context.token { $0["exp"] = .number(Date().timeIntervalSince1970 - 120) })
        },
        Attack(name: "iat in the future", expected: .issuedInFuture) { context in
            try await context.validate(try await context.token { $0["iat"] = .number(Date().timeIntervalSince1970 + 600) })
        },
        Attack(name: "missing sub", expected: .claimMissing) { context in
            try await context.validate(try await context.token { $0["sub"] = nil })
        },
        Attack(name: "missing exp", expected: .claimMissing) { context in
            try await context.validate(try await context.token { $0["exp"] = nil })
        },
        Attack(name: "aud of the wrong type", expected: .claimMissing) { context in
            try await context.validate(try await context.token { $0["aud"] = 42 })
        },
        Attack(name: "at_hash mismatch", expected: .accessTokenHashMismatch) { context in
            try await context.validate(try await context.token { $0["at_hash"] = "AAAAAAAAAAAAAAAAAAAAAA" }, accessToken: "the-access-token")
        },
        Attack(name: "auth_time missing with max_age", expected: .claimMissing) { context in
            try await context.validate(try await context.token { $0["auth_time"] = nil }, maxAge: 60)
        },
        Attack(name: "authentication older than max_age", expected: .authenticationTooOld) { context in
            try await context.validate(try await context.token { $0["auth_time"] = .number(Date().timeIntervalSince1970 - 3600) }, maxAge: 60)
        },
        // Redirect
        Attack(name: "state mismatch", expected: .stateMismatch) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("code=c&state=forged&iss=\(context.issuer.absoluteString)"), for: request)
        },
        Attack(name: "error response with a wrong state", expected: .stateMismatch) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("error=access_denied&state=forged"), for: request)
        },
        Attack(name: "error response", expected: .authorizationError) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("error=access_denied&error_description=no&state=\(request.state)"), for: request)
        },
        Attack(name: "mix-up: iss of another provider", expected: .issuerMismatch) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("code=c&state=\(request.state)&iss=https://evil.example"), for: request)
        },
        Attack(name: "iss missing though advertised", expected: .issuerMismatch) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("code=c&state=\(request.state)"), for: request)
        },
        Attack(name: "redirect to another path", expected: .redirectURIMismatch) { context in
            let request = try await context.client.authorizationRequest()
            let url = try #require(URL(string: "http://127.0.0.1/elsewhere?code=c&state=\(request.state)"))
            _ = try await context.client.authorizationCode(from: url, for: request)
        },
        Attack(name: "duplicated state parameter", expected: .malformedResponse) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("code=c&state=\(request.state)&state=x"), for: request)
        },
        Attack(name: "no code", expected: .missingCode) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.authorizationCode(from: try context.redirect("state=\(request.state)&iss=\(context.issuer.absoluteString)"), for: request)
        },
        // Token endpoint and transport
        Attack(name: "PKCE verifier rejected by the server", expected: .tokenError) { context in
            let request = try await context.client.authorizationRequest()
            let code = await context.provider.issueCode(for: request)
            let other = try PKCE.generate()
            _ = try await context.client.exchange(code: code, codeVerifier: other.verifier, redirectURI: request.redirectURI, nonce: request.nonce)
        },
        Attack(name: "malformed PKCE verifier", expected: .invalidPKCEVerifier) { context in
            let request = try await context.client.authorizationRequest()
            _ = try await context.client.exchange(code: "c", codeVerifier: "short", redirectURI: request.redirectURI, nonce: nil)
        },
        Attack(name: "replayed code", expected: .tokenError) { context in
            let request = try await context.client.authorizationRequest()
            let code = await context.provider.issueCode(for: request)
            _ = try await context.client.exchange(code: code, for: request)
            _ = try await context.client.exchange(code: code, for: request)
        },
        Attack(name: "non-JSON token response", expected: .malformedResponse) { context in
            await context.provider.configure { $0.forcedTokenError = (200, "<html>hello</html>") }
            _ = try await context.client.exchange(code: "c", for: try await context.client.authorizationRequest())
        },
        Attack(name: "error status without an error object", expected: .unexpectedStatus) { context in
            await context.provider.configure { $0.forcedTokenError = (500, "oops") }
            _ = try await context.client.exchange(code: "c", for: try await context.client.authorizationRequest())
        },
        Attack(name: "token_type other than Bearer", expected: .unsupportedTokenType) { context in
            await context.provider.configure { $0.forcedTokenError = (200, #"{"access_token":"a","token_type":"MAC"}"#) }
            _ = try await context.client.exchange(code: "c", for: try await context.client.authorizationRequest())
        },
        Attack(name: "token response without access_token", expected: .malformedResponse) { context in
            await context.provider.configure { $0.forcedTokenError = (200, #"{"token_type":"Bearer"}"#) }
            _ = try await context.client.exchange(code: "c", for: try await context.client.authorizationRequest())
        },
        Attack(name: "oversized response", expected: .responseTooLarge) { context in
            _ = try await HTTP1Transport().send(TransportRequest(method: "GET", url: context.issuer.appendingPathComponent("huge")))
        },
        Attack(name: "plain http to a non-loopback host", expected: .insecureTransport) { _ in
            let url = try #require(URL(string: "http://example.com"))
            _ = try OAuthClient(configuration: .init(issuer: url, clientID: "c", redirectURI: url))
        },
        Attack(name: "transport refuses http to a non-loopback host", expected: .insecureTransport) { _ in
            let url = try #require(URL(string: "http://10.0.0.1/token"))
            _ = try await HTTP1Transport().send(TransportRequest(method: "POST", url: url))
        },
        Attack(name: "userinfo for another subject", expected: .subjectMismatch) { context in
            let request = try await context.client.authorizationRequest()
            let code = await context.provider.issueCode(for: request)
            let tokens = try await context.client.exchange(code: code, for: request)
            _ = try await context.client.userInfo(accessToken: tokens.accessToken, expectedSubject: "someone-else")
        },
    ]

    @Test("attack is refused with its own code", arguments: attacks)
    func refuse(_ attack: Attack) async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let client = try OAuthFlowTests.client(issuer)
            let context = Context(client: client, provider: provider, issuer: issuer)
            do {
                try await attack.run(context)
                Issue.record("\(attack.name): accepted")
            } catch let error as OAuthError {
                #expect(error.code == attack.expected, "\(attack.name): \(error)")
            }
        }
    }

    @Test("there are at least 30 named attacks")
    func count() {
        #expect(Self.attacks.count >= 30)
        #expect(Set(Self.attacks.map(\.name)).count == Self.attacks.count)
    }
}
