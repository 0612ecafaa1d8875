import Foundation
import LatchkeyCrypto
@testable import LatchkeyOAuth
import Testing

/// The OAuth client against a real HTTP provider on 127.0.0.1.
@Suite("OAuth client flows")
struct OAuthFlowTests {
    static func client(_ issuer: URL, authentication: OAuthClient.ClientAuthentication = .none, clientID: String = "test-client") throws -> OAuthClient {
        try OAuthClient(configuration: .init(
            issuer: issuer, clientID: clientID,
            redirectURI: URL(string: "http://127.0.0.1/callback") ?? issuer,
            authentication: authentication
        ))
    }

    /// Runs the authorization step as the provider's /authorize would, then returns the tokens.
    static func signIn(_ client: OAuthClient, _ provider: TestProvider, issuer: URL) async throws -> (TokenSet, AuthorizationRequest) {
        let request = try await client.authorizationRequest(scopes: ["openid", "profile"])
        let code = await provider.issueCode(for: request)
        let redirect = try #require(URL(string: "http://127.0.0.1/callback?code=\(code)&state=\(request.state)&iss=\(issuer.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"))
        let received = try await client.authorizationCode(from: redirect, for: request)
        #expect(received == code)
        return (try await client.exchange(code: received, for: request), request)
    }

    @Test("authorization request carries PKCE S256, state, nonce and the registered redirect URI")
    func authorizationRequest() async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let request = try await Self.client(issuer).authorizationRequest(scopes: ["openid", "email"], maxAge: 600, additionalParameters: ["login_hint": "ada+1@example.com", "state": "attacker"])
            let items = Dictionary(uniqueKeysWithValues: (URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(items["response_type"] == "code" && items["client_id"] == "test-client")
            #expect(items["code_challenge_method"] == "S256" && items["code_challenge"] == request.pkce.challenge)
            #expect(items["state"] == request.state && items["nonce"] == request.nonce && items["scope"] == "openid email")
            #expect(items["redirect_uri"] == "http://127.0.0.1/callback" && items["max_age"] == "600")
            #expect(items["login_hint"] == "ada+1@example.com")
            #expect(request.url.absoluteString.contains("ada%2B1"))
            #expect(request.pkce.verifier.count == 43 && request.state.count == 43)
        }
    }

    @Test("code exchange, userinfo, refresh with rotation, revocation")
    func fullFlow() async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let client = try Self.client(issuer)
            let (tokens, request) = try await Self.signIn(client, provider, issuer: issuer)
            let claims = try #require(tokens.idTokenClaims)
            #expect(claims.subject == "user-42" && claims.nonce == request.nonce && claims.issuer == issuer.absoluteString)
            #expect(tokens.refreshToken != nil && tokens.expiresAt != nil)
            #expect(!"\(tokens)".contains(tokens.accessToken))

            let info = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: claims.subject)
            #expect(info["name"]?.stringValue == "Ada Lovelace")

            let refreshed = try await client.refresh(tokens)
            #expect(refreshed.refreshToken != tokens.refreshToken && refreshed.accessToken != tokens.accessToken)
            #expect(refreshed.idTokenClaims?.subject == "user-42")
            // The old refresh token was rotated out.
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.refresh(tokens) }

            try await client.revoke(try #require(refreshed.refreshToken))
            #expect(await provider.revoked == [refreshed.refreshToken])
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.refresh(refreshed) }
        }
    }

    @Test("refresh without rotation keeps the refresh token; concurrent refreshes make one request")
    func refreshWithoutRotation() async throws {
        let provider = try TestProvider()
        await provider.configure {
            $0.rotateRefreshTokens = false
            $0.refreshDelay = .milliseconds(200)
        }
        try await TestServer.with(provider) { issuer in
            let client = try Self.client(issuer)
            let (tokens, _) = try await Self.signIn(client, provider, issuer: issuer)
            let results = try await withThrowingTaskGroup(of: TokenSet.self) { group in
                for _ in 0..<6 { group.addTask { try await client.refresh(tokens) } }
                return try await group.reduce(into: [TokenSet]()) { $0.append($1) }
            }
            #expect(results.count == 6)
            #expect(Set(results.map(\.accessToken)).count == 1)
            #expect(results.allSatisfy { $0.refreshToken == tokens.refreshToken })
            #expect(await provider.refreshRequests == 1)
        }
    }

    @Test("a refreshed ID token for another subject is refused (OIDC Core §12.2)")
    func refreshedSubjectChange() async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let client = try Self.client(issuer)
            let (tokens, _) = try await Self.signIn(client, provider, issuer: issuer)
            await provider.configure { $0.refreshedIDTokenSubject = "someone-else" }
            await #expect(throws: OAuthError.refreshedTokenMismatch(reason: "")) { try await client.refresh(tokens) }
        }
    }

    @Test("client_secret_basic form-encodes id and secret before base64 (RFC 6749 §2.3.1)")
    func clientSecretBasic() async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let client = try Self.client(issuer, authentication: .clientSecretBasic(secret: provider.clientSecret))
            _ = try await Self.signIn(client, provider, issuer: issuer)
            let header = try #require(await provider.lastAuthorization)
            let decoded = String(decoding: try #require(Data(base64Encoded: String(header.dropFirst("Basic ".count)))), as: UTF8.self)
            #expect(decoded == "test-client:s3cret+with+spaces+%26+symbols")
            #expect(await provider.lastFormClientID == nil)
        }
    }

    @Test("the transport names Latchkey and never follows a redirect")
    func transport() async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let transport = HTTP1Transport()
            let redirect = try await transport.send(TransportRequest(method: "GET", url: issuer.appendingPathComponent("redirect")))
            #expect(redirect.status == 302 && redirect.headers["location"] == "http://127.0.0.1:1/elsewhere")
            let agent = try await transport.send(TransportRequest(method: "GET", url: issuer.appendingPathComponent("user-agent")))
            #expect(String(decoding: agent.body, as: UTF8.self) == HTTP1Transport.userAgent)
        }
    }

    @Test("discovery refuses a document for another issuer")
    func discoveryIssuer() async throws {
        let provider = try TestProvider()
        await provider.configure { $0.discoveryIssuer = "https://evil.example" }
        _ = try await TestServer.with(provider) { issuer in
            await #expect(throws: OAuthError.discoveryIssuerMismatch(reason: "")) { try await Self.client(issuer).metadata() }
        }
    }

    @Test("JWKS rotation: an unknown kid is refetched once; made-up kids do not hammer the provider")
    func jwksRotation() async throws {
        let provider = try TestProvider()
        try await TestServer.with(provider) { issuer in
            let client = try Self.client(issuer)
            let first = try await provider.idToken(nonce: "n", accessToken: nil)
            _ = try await client.validateIDToken(first, expectations: .init(nonce: "n"))
            #expect(await provider.jwksFetches == 1)
            _ = try await client.validateIDToken(first, expectations: .init(nonce: "n"))
            #expect(await provider.jwksFetches == 1, "a known kid is served from the cache")

            try await provider.rotateKey()
            let rotated = try await provider.idToken(nonce: "n", accessToken: nil)
            // The cache is younger than the refetch interval: a new kid cannot be fetched yet...
            await #expect(throws: OAuthError.unknownKey(reason: "")) { try await client.validateIDToken(rotated, expectations: .init(nonce: "n")) }
            #expect(await provider.jwksFetches == 1)
        }
        // ...and with no minimum interval it is fetched exactly once.
        let second = try TestProvider()
        try await TestServer.with(second) { issuer in
            var configuration = try Self.client(issuer).configuration
            configuration.jwksMinimumRefetchInterval = 0
            let client = try OAuthClient(configuration: configuration)
            _ = try await client.validateIDToken(try await second.idToken(nonce: nil, accessToken: nil), expectations: .init())
            try await second.rotateKey()
            _ = try await client.validateIDToken(try await second.idToken(nonce: nil, accessToken: nil), expectations: .init())
            #expect(await second.jwksFetches == 2)
            let unknown = try await second.idToken(nonce: nil, accessToken: nil, keyID: "made-up")
            await #expect(throws: OAuthError.unknownKey(reason: "")) { try await client.validateIDToken(unknown, expectations: .init()) }
            #expect(await second.jwksFetches == 3)
        }
    }

    @Test("each RFC 6749 §5.2 error becomes a typed error with the provider's fields", arguments: [
        (400, "invalid_request"), (401, "invalid_client"), (400, "invalid_grant"), (400, "unauthorized_client"),
        (400, "unsupported_grant_type"), (400, "invalid_scope"), (400, "a_future_error_code"),
    ])
    func tokenErrors(_ status: Int, _ code: String) async throws {
        let provider = try TestProvider()
        let body = TestProvider.json(["error": .string(code), "error_description": "described", "error_uri": "https://example.com/e"])
        await provider.configure { $0.forcedTokenError = (status, body) }
        try await TestServer.with(provider) { issuer in
            let client = try Self.client(issuer)
            let request = try await client.authorizationRequest()
            do {
                _ = try await client.exchange(code: "c", for: request)
                Issue.record("no error")
            } catch let error as OAuthError {
                #expect(error.code == .tokenError)
                #expect(error.providerError == .init(error: OAuthErrorCode(rawValue: code), description: "described", uri: "https://example.com/e"))
            }
        }
    }
}
