import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import LatchkeyTestSupport
import Testing
import Logging

/// The reference provider, in-process on 127.0.0.1 port 0, driven over real HTTP by the
/// software authenticator and the OAuth client.
@Suite("Reference identity provider")
struct ProviderTests {
    static let adminToken = ProviderHarness.adminToken

    /// Runs the provider for `body` over a fresh store of `engine` (``ProviderHarness``),
    /// with a fresh vault-backed authenticator.
    static func withProvider(
        _ engine: TestStore = .sqlite,
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (URL, SoftwareAuthenticator) async throws -> Void
    ) async throws {
        try await ProviderHarness.run(engine, configure) { provider in
            try await body(provider.issuer, try newAuthenticator(provider.directory.url))
        }
    }

    static func request(_ method: String, _ url: URL, json: Data? = nil, headers: [String: String] = [:]) async throws -> (Int, JSONValue) {
        var allHeaders = headers
        if json != nil { allHeaders["Content-Type"] = ProtocolPath.jsonMediaType }
        let response = try await HTTPExchange.send(method, url, headers: allHeaders, body: json)
        return (response.status, response.json)
    }

    static func origin(_ issuer: URL) -> String {
        "\(issuer.scheme ?? "http")://\(issuer.host ?? "")" + (issuer.port.map { ":\($0)" } ?? "")
    }

    /// Admin creates an identity; the authenticator binds a credential from the bind URL.
    static func bind(_ issuer: URL, _ authenticator: SoftwareAuthenticator, username: String = "ada") async throws -> (identity: String, bindURL: URL) {
        let reply = try await admin(issuer).call(AdminAPI.createIdentity, body: .init(username: username, email: "\(username)@example.com"))
        #expect(reply.status == 201)
        let created = try #require(reply.answer)
        let bindURL = try Self.url(created.bindURL)
        let identity = created.identity.id

        let (_, job) = try await request("GET", bindURL)
        let options = try PublicKeyCredentialCreationOptionsJSON(json: job.json())
        let submit = try Self.url(job["submit"]?.stringValue)
        let (registration, _) = try authenticator.makeCredential(options, origin: origin(issuer))
        let (bound, result) = try await request("POST", submit, json: try registration.json())
        #expect(bound == 201, "\(result)")
        return (identity, bindURL)
    }

    /// The whole sign-in: authorize (JSON), assertion, redirect, code exchange.
    static func signIn(
        _ issuer: URL, _ authenticator: SoftwareAuthenticator, client: OAuthClient, scopes: [String] = ["openid", "profile"]
    ) async throws -> TokenSet {
        let authorization = try await client.authorizationRequest(scopes: scopes)
        let (status, answer) = try await request("GET", authorization.url, headers: ["Accept": "application/json"])
        #expect(status == 200, "\(answer)")
        let authenticateURL = try Self.url(answer["authenticateURL"]?.stringValue)
        let (_, challenge) = try await request("GET", authenticateURL)
        let options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.json())
        let (assertion, _) = try authenticator.getAssertion(options, origin: origin(issuer))
        let (posted, redirect) = try await request("POST", authenticateURL, json: try assertion.json())
        guard posted == 200 else {
            throw OAuthError.unexpectedStatus(reason: "authenticate answered \(posted): \(redirect["error_description"] ?? "")")
        }
        let redirectURL = try Self.url(redirect["redirectURL"]?.stringValue)
        let code = try await client.authorizationCode(from: redirectURL, for: authorization)
        return try await client.exchange(code: code, for: authorization)
    }

    /// A URL from a JSON member that must be a URL string.
    static func url(_ text: String?) throws -> URL {
        try url(text.map(JSONValue.string))
    }

    static func url(_ value: JSONValue?) throws -> URL {
        guard let text = value?.stringValue, let url = URL(string: text) else {
            throw OAuthError.malformedResponse(reason: "expected a URL, got \(value.map { "\($0)" } ?? "nothing")")
        }
        return url
    }

    static func client(_ issuer: URL) throws -> OAuthClient {
        try OAuthClient(configuration: .init(issuer: issuer, clientID: "latchkey-cli", redirectURI: try #require(URL(string: "http://127.0.0.1/callback"))))
    }

    @Test("bind, authenticate, exchange, userinfo, refresh, revoke over real HTTP", arguments: TestStore.available)
    func endToEnd(engine: TestStore) async throws {
        try await Self.withProvider(engine) { issuer, authenticator in
            let (identity, _) = try await Self.bind(issuer, authenticator)
            let client = try Self.client(issuer)
            let tokens = try await Self.signIn(issuer, authenticator, client: client)
            let claims = try #require(tokens.idTokenClaims)
            #expect(claims.subject == identity && claims.issuer == issuer.absoluteString)
            #expect(claims.all["amr"]?.arrayValue?.compactMap(\.stringValue) == ["pop", "swk"])

            let info = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: identity)
            #expect(info["preferred_username"]?.stringValue == "ada")

            let refreshed = try await client.refresh(tokens)
            #expect(refreshed.refreshToken != tokens.refreshToken && refreshed.idTokenClaims?.subject == identity)
            try await client.revoke(try #require(refreshed.refreshToken))
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.refresh(refreshed) }

            // A second sign-in works, and the counter moved on.
            _ = try await Self.signIn(issuer, authenticator, client: client)

            // With login_hint, the request options list that identity's credentials among decoys.
            let hinted = try await client.authorizationRequest(additionalParameters: ["login_hint": "ada"])
            let (_, answer) = try await Self.request("GET", hinted.url, headers: ["Accept": "application/json"])
            let (_, options) = try await Self.request("GET", try Self.url(answer["authenticateURL"]))
            let allowed = ((options["publicKey"])?["allowCredentials"]?.arrayValue)?.compactMap { $0["id"]?.stringValue }
            let stored = try authenticator.credentials().map { $0.metadata.credentialID.description }
            #expect(allowed?.count == 16 && Set(stored).isSubset(of: allowed ?? []))

            // An unknown name gets as many stable decoys, not an empty list.
            @Sendable func allowedFor(_ hint: String) async throws -> [String] {
                let request = try await client.authorizationRequest(additionalParameters: ["login_hint": hint])
                let (_, answer) = try await Self.request("GET", request.url, headers: ["Accept": "application/json"])
                let (_, options) = try await Self.request("GET", try Self.url(answer["authenticateURL"]))
                return ((options["publicKey"])?["allowCredentials"]?.arrayValue)?.compactMap { $0["id"]?.stringValue } ?? []
            }
            let decoy = try await allowedFor("nobody")
            #expect(decoy.count == 16 && Set(decoy).isDisjoint(with: stored))
            #expect(try await allowedFor("nobody") == decoy && decoy != allowed)
        }
    }

    @Test("bind jobs are single use; the admin API needs its token", arguments: TestStore.available)
    func bindJobsAndAdmin(engine: TestStore) async throws {
        try await Self.withProvider(engine) { issuer, authenticator in
            let (_, bindURL) = try await Self.bind(issuer, authenticator)
            let (reused, error) = try await Self.request("GET", bindURL)
            #expect(reused == 400 && error["error"]?.stringValue == "invalid_grant")

            var wrongToken = URLComponents(url: bindURL, resolvingAgainstBaseURL: false)
            wrongToken?.queryItems = [URLQueryItem(name: "token", value: "forged")]
            let forged = try await Self.request("GET", try #require(wrongToken?.url)).0
            #expect(forged == 404)

            let body = try JSONSerialization.data(withJSONObject: ["username": "eve"])
            let anonymous = try await Self.request("POST", issuer.appendingPathComponent("admin/identities"), json: body).0
            let wrong = try await Self.request("POST", issuer.appendingPathComponent("admin/identities"), json: body, headers: ["Authorization": "Bearer wrong"]).0
            #expect(anonymous == 401 && wrong == 401)
        }
    }

    @Test("authorization requests with an unknown client, a foreign redirect or no PKCE are refused", arguments: TestStore.available)
    func authorizationRefusals(engine: TestStore) async throws {
        try await Self.withProvider(engine) { issuer, _ in
            @Sendable func authorize(_ query: String) async throws -> (Int, String?) {
                let (status, body) = try await Self.request("GET", try Self.url(issuer.absoluteString + "/authorize?" + query), headers: ["Accept": "application/json"])
                return (status, body["error"]?.stringValue)
            }
            let good = "response_type=code&client_id=latchkey-cli&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
            let cases: [(String, Int, String?)] = [
                (good, 200, nil),
                (good.replacingOccurrences(of: "latchkey-cli", with: "intruder"), 400, "invalid_client"),
                (good.replacingOccurrences(of: "127.0.0.1%2Fcallback", with: "evil.example%2Fcallback"), 400, "invalid_request"),
                (good.replacingOccurrences(of: "&code_challenge_method=S256", with: ""), 400, "invalid_request"),
                (good.replacingOccurrences(of: "S256", with: "plain"), 400, "invalid_request"),
                (good.replacingOccurrences(of: "response_type=code", with: "response_type=token"), 400, "unsupported_response_type"),
                // A loopback redirect may use any port (RFC 8252 §7.3).
                (good.replacingOccurrences(of: "127.0.0.1%2Fcallback", with: "127.0.0.1%3A5555%2Fcallback"), 200, nil),
            ]
            for (query, status, error) in cases {
                let (gotStatus, gotError) = try await authorize(query)
                #expect(gotStatus == status && gotError == error, "\(query)")
            }
        }
    }

    /// Regression: the provider decoded query values twice (Hummingbird had already
    /// percent-decoded them), so a `+` sent as `%2B` arrived as a space: a login hint such
    /// as `ada+work` found nobody, and a state carrying `+` or `%` came back altered.
    @Test("query parameters are decoded exactly once: '+' and '%' survive; a repeated parameter is refused", arguments: TestStore.available)
    func queryDecodedOnce(engine: TestStore) async throws {
        try await Self.withProvider(engine) { issuer, authenticator in
            _ = try await Self.bind(issuer, authenticator, username: "ada+work")
            let client = try Self.client(issuer)
            let hinted = try await client.authorizationRequest(additionalParameters: ["login_hint": "ada+work"])
            let (_, answer) = try await Self.request("GET", hinted.url, headers: ["Accept": "application/json"])
            let (_, options) = try await Self.request("GET", try Self.url(answer["authenticateURL"]))
            let allowed = ((options["publicKey"])?["allowCredentials"]?.arrayValue)?.compactMap { $0["id"]?.stringValue }
            #expect(Set(try authenticator.credentials().map { $0.metadata.credentialID.description }).isSubset(of: allowed ?? []))

            // A hand-built request whose state holds '+', '%' and a space, each encoded once.
            let query = "response_type=code&client_id=latchkey-cli&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback"
                + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&state=a%2Bb%252F+c"
            let (status, started) = try await Self.request("GET", try Self.url(issuer.absoluteString + "/authorize?" + query), headers: ["Accept": "application/json"])
            #expect(status == 200, "\(started)")
            let authenticateURL = try Self.url(started["authenticateURL"])
            let (_, challenge) = try await Self.request("GET", authenticateURL)
            let (assertion, _) = try authenticator.getAssertion(
                PublicKeyCredentialRequestOptionsJSON(json: challenge.json()), origin: Self.origin(issuer)
            )
            let (posted, redirect) = try await Self.request("POST", authenticateURL, json: try assertion.json())
            #expect(posted == 200, "\(redirect)")
            let redirectURL = try Self.url(redirect["redirectURL"])
            // The redirect encodes '+' too, so a client that reads '+' as a space (as
            // application/x-www-form-urlencoded says) gets the same state back.
            #expect(redirectURL.query?.contains("+") == false)
            let returned = URLComponents(url: redirectURL, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value
            #expect(returned == "a+b%2F c")

            let (repeated, refusal) = try await Self.request("GET", try Self.url(issuer.absoluteString + "/authorize?" + query + "&state=again"), headers: ["Accept": "application/json"])
            #expect(repeated == 400 && refusal["error"]?.stringValue == "invalid_request")
            let (malformed, _) = try await Self.request("GET", try Self.url(issuer.absoluteString + "/authorize?" + query + "&nonce=%E2%28"), headers: ["Accept": "application/json"])
            #expect(malformed == 400)
        }
    }

    @Test("an identity keeps at most maximumGrantsPerClient live grants per client; the oldest is revoked", arguments: TestStore.available)
    func refreshTokensAreBounded(engine: TestStore) async throws {
        try await Self.withProvider(engine, { $0.maximumGrantsPerClient = 2 }) { issuer, authenticator in
            _ = try await Self.bind(issuer, authenticator)
            let client = try Self.client(issuer)
            var sessions: [TokenSet] = []
            for _ in 0..<3 { sessions.append(try await Self.signIn(issuer, authenticator, client: client)) }
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.refresh(sessions[0]) }
            let second = try await client.refresh(sessions[1])
            _ = try await client.refresh(sessions[2])
            // A refreshed token replaces its parent, so the count stays at the limit.
            _ = try await client.refresh(second)
        }
    }

    @Test("a replayed code is refused and revokes what it issued; a wrong verifier is refused", arguments: TestStore.available)
    func codeReplay(engine: TestStore) async throws {
        try await Self.withProvider(engine) { issuer, authenticator in
            _ = try await Self.bind(issuer, authenticator)
            let client = try Self.client(issuer)
            let authorization = try await client.authorizationRequest()
            let (_, answer) = try await Self.request("GET", authorization.url, headers: ["Accept": "application/json"])
            let authenticateURL = try Self.url(answer["authenticateURL"]?.stringValue)
            let (_, challenge) = try await Self.request("GET", authenticateURL)
            let (assertion, _) = try authenticator.getAssertion(
                PublicKeyCredentialRequestOptionsJSON(json: challenge.json()), origin: Self.origin(issuer)
            )
            let (_, redirect) = try await Self.request("POST", authenticateURL, json: try assertion.json())
            let code = try await client.authorizationCode(from: try Self.url(redirect["redirectURL"]?.stringValue), for: authorization)

            let other = try PKCE.generate()
            await #expect(throws: OAuthError.tokenError(reason: "")) {
                try await client.exchange(code: code, codeVerifier: other.verifier, redirectURI: authorization.redirectURI, nonce: authorization.nonce)
            }
            let tokens = try await client.exchange(code: code, for: authorization)
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.exchange(code: code, for: authorization) }
            // The replay revoked the tokens the code had produced.
            do {
                _ = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: nil)
                Issue.record("the revoked access token still works")
            } catch let error as OAuthError {
                #expect(error.providerError?.error == .invalidToken)
            }
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.refresh(tokens) }
            // The authentication session is single use too.
            let replayedSession = try await Self.request("POST", authenticateURL, json: try assertion.json()).0
            #expect(replayedSession == 404)
        }
    }

    @Test("signing-key rotation: the new key is published first and signs after the delay; the old one stays published", arguments: TestStore.available)
    func signingKeyRotation(engine: TestStore) async throws {
        // The delay is judged by a clock the test moves, so the sign-in right after the
        // rotation comes before it ends however loaded the machine is.
        let clock = TestClock()
        try await Self.withProvider(engine, {
            $0.signingKeyPublicationDelay = 10
            $0.clock = clock.provider
        }) { issuer, authenticator in
            _ = try await Self.bind(issuer, authenticator)
            let client = try Self.client(issuer)
            let kid = { (tokens: TokenSet) throws -> String? in try JWS(compact: try #require(tokens.idToken)).keyID }
            let before = try kid(try await Self.signIn(issuer, authenticator, client: client))
            let rotation = try await Self.admin(issuer).call(AdminAPI.rotateSigningKey)
            #expect(rotation.status == 201)
            let next = try #require(rotation.answer?.kid)
            let (_, jwks) = try await Self.request("GET", issuer.appendingPathComponent("jwks"))
            #expect(Set((jwks["keys"]?.arrayValue ?? []).compactMap { $0["kid"]?.stringValue }) == [before, next].compactMap { $0 }.reduce(into: Set<String>()) { $0.insert($1) })
            #expect(try kid(try await Self.signIn(issuer, authenticator, client: client)) == before, "not before the publication delay")
            clock.advance(by: 10.1)
            // A relying party whose JWKS was fetched after the new key was published (the
            // delay is meant to outlast their caches) validates the new key's tokens.
            #expect(try kid(try await Self.signIn(issuer, authenticator, client: try Self.client(issuer))) == next)
        }
    }

    /// The admin API of the provider at `issuer`, with the harness's token.
    static func admin(_ issuer: URL) -> AdminAPIClient {
        AdminAPIClient(issuer: issuer, token: adminToken)
    }

    static func newAuthenticator(_ directory: URL) throws -> SoftwareAuthenticator {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyFile = directory.appendingPathComponent("vault.key")
        try #require(FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]))
        return SoftwareAuthenticator(vault: try KeyVault.open(at: directory.appendingPathComponent("vault"), key: .keyFile(keyFile)))
    }

    @Test("requireEmailCodeForBinding: a verify-code step first, its code in the outbox; wrong codes are counted", arguments: TestStore.available)
    func verifyCodeStep(engine: TestStore) async throws {
        try await Self.withProvider(engine, { $0.requireEmailCodeForBinding = true }) { issuer, authenticator in
            let created = try #require(try await Self.admin(issuer).call(AdminAPI.createIdentity, body: .init(username: "grace", email: "grace@example.com")).answer)
            let bindURL = try Self.url(created.bindURL)
            let (_, first) = try await Self.request("GET", bindURL)
            let step = try #require(first["step"])
            #expect(step["name"]?.stringValue == "verify-code" && (step["message"]?.stringValue)?.contains("g…@example.com") == true)
            let submit = try Self.url(step["submit"])
            // Binding straight away, skipping the step, is refused.
            let messages = try #require(try await Self.admin(issuer).call(AdminAPI.outbox).answer?.messages)
            #expect(messages.count == 1 && messages[0].to == "grace@example.com")
            let code = try #require(messages[0].code)
            let wrong = code == "000000" ? "111111" : "000000"
            let (wrongStatus, wrongAnswer) = try await Self.request("POST", submit, json: try JSONSerialization.data(withJSONObject: ["code": wrong]))
            #expect(wrongStatus == 400 && wrongAnswer["error"]?.stringValue == "invalid_code")
            let (rightStatus, options) = try await Self.request("POST", submit, json: try JSONSerialization.data(withJSONObject: ["code": code]))
            #expect(rightStatus == 200 && options["publicKey"] != nil)
            let (registration, _) = try authenticator.makeCredential(
                PublicKeyCredentialCreationOptionsJSON(json: options.json()), origin: Self.origin(issuer)
            )
            let (bound, _) = try await Self.request("POST", try Self.url(options["submit"]), json: try registration.json())
            #expect(bound == 201)
        }
        try await Self.withProvider(engine, { $0.requireEmailCodeForBinding = true }) { issuer, _ in
            let created = try #require(try await Self.admin(issuer).call(AdminAPI.createIdentity, body: .init(username: "mallory", email: "m@example.com")).answer)
            let (_, first) = try await Self.request("GET", try Self.url(created.bindURL))
            let submit = try Self.url((first["step"])?["submit"])
            let code = try #require(try await Self.admin(issuer).call(AdminAPI.outbox).answer?.messages.first?.code)
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<5 { _ = try await Self.request("POST", submit, json: try JSONSerialization.data(withJSONObject: ["code": wrong])) }
            // The sixth try fails even with the right code.
            let (status, answer) = try await Self.request("POST", submit, json: try JSONSerialization.data(withJSONObject: ["code": code]))
            #expect(status == 400 && answer["error"]?.stringValue == "invalid_grant")
        }
    }

    @Test("a recovery job replaces the identity's credentials; the old one is refused", arguments: TestStore.available)
    func recovery(engine: TestStore) async throws {
        try await Self.withProvider(engine) { issuer, oldDevice in
            let (identity, _) = try await Self.bind(issuer, oldDevice)
            let directoryScratch = try TemporaryDirectory()
            let directory = directoryScratch.url.appendingPathComponent("latchkey-idp-new")
            let newDevice = try Self.newAuthenticator(directory)
            let job = try await Self.admin(issuer).call(
                AdminAPI.createBindJob, identity, body: .init(kind: "recovery", postBindingRedirectURI: "https://app.example/welcome")
            )
            #expect(job.status == 201)
            let recoveryURL = try Self.url(job.answer?.bindURL)
            let (_, options) = try await Self.request("GET", recoveryURL)
            let (registration, _) = try newDevice.makeCredential(PublicKeyCredentialCreationOptionsJSON(json: options.json()), origin: Self.origin(issuer))
            let (_, bound) = try await Self.request("POST", try Self.url(options["submit"]), json: try registration.json())
            #expect(bound["postBindingRedirectURI"]?.stringValue == "https://app.example/welcome")

            let client = try Self.client(issuer)
            let tokens = try await Self.signIn(issuer, newDevice, client: client)
            #expect(tokens.idTokenClaims?.subject == identity)
            do {
                _ = try await Self.signIn(issuer, oldDevice, client: client)
                Issue.record("the replaced credential still signs in")
            } catch let error as OAuthError {
                #expect(error.reason.contains("revoked"))
            }
            let list = try await Self.admin(issuer).call(AdminAPI.credentials, identity)
            let revoked = list.answer?.credentials.filter(\.revoked).count
            #expect(revoked == 1)
        }
    }

    @Test("expired bind jobs and codes, a wrong origin, a bad signature and a counter going backwards are refused", arguments: TestStore.available)
    func refusals(engine: TestStore) async throws {
        let clock = TestClock()
        try await Self.withProvider(engine, {
            $0.authorizationCodeLifetime = 0.3
            $0.clock = clock.provider
        }) { issuer, authenticator in
            // Wrong origin: same RP ID, another port.
            let created = try #require(try await Self.admin(issuer).call(AdminAPI.createIdentity, body: .init(username: "oscar")).answer)
            let identity = created.identity.id
            let bindURL = try Self.url(created.bindURL)
            let (_, options) = try await Self.request("GET", bindURL)
            let parsed = try PublicKeyCredentialCreationOptionsJSON(json: options.json())
            let (foreign, _) = try authenticator.makeCredential(parsed, origin: "http://127.0.0.1:1")
            let (foreignStatus, foreignAnswer) = try await Self.request("POST", try Self.url(options["submit"]), json: try foreign.json())
            #expect(foreignStatus == 400 && (foreignAnswer["error_description"]?.stringValue)?.contains("origin") == true)

            // Expired bind job.
            let shortJob = try await Self.admin(issuer).call(AdminAPI.createBindJob, identity, body: .init(expiresIn: 1))
            clock.advance(by: 1.1)
            let (expiredStatus, expired) = try await Self.request("GET", try Self.url(shortJob.answer?.bindURL))
            #expect(expiredStatus == 400 && (expired["error_description"]?.stringValue)?.contains("expired") == true)

            // The original job still binds.
            let (registration, _) = try authenticator.makeCredential(parsed, origin: Self.origin(issuer))
            #expect(try await Self.request("POST", try Self.url(options["submit"]), json: try registration.json()).0 == 201)

            // Bad signature, and a counter going backwards.
            let client = try Self.client(issuer)
            @Sendable func assertion() async throws -> (URL, AuthenticationResponseJSON, AuthorizationRequest) {
                let authorization = try await client.authorizationRequest()
                let (_, answer) = try await Self.request("GET", authorization.url, headers: ["Accept": "application/json"])
                let url = try Self.url(answer["authenticateURL"])
                let (_, challenge) = try await Self.request("GET", url)
                // The vault also holds the credential the provider refused (wrong origin): pick the bound one.
                let (response, _) = try authenticator.getAssertion(
                    PublicKeyCredentialRequestOptionsJSON(json: challenge.json()),
                    origin: Self.origin(issuer), credentialID: registration.rawId.data
                )
                return (url, response, authorization)
            }
            let (firstURL, firstAssertion, _) = try await assertion()
            let (secondURL, secondAssertion, secondRequest) = try await assertion()
            var forged = secondAssertion
            var signature = forged.response.signature.data
            signature[signature.count - 1] ^= 1
            forged.response.signature = Base64URLBytes(signature)
            let (forgedStatus, forgedAnswer) = try await Self.request("POST", secondURL, json: try forged.json())
            #expect(forgedStatus == 400 && forgedAnswer["error"]?.stringValue == "invalid_assertion")
            let (_, redirect) = try await Self.request("POST", secondURL, json: try secondAssertion.json())
            let (backwardsStatus, backwards) = try await Self.request("POST", firstURL, json: try firstAssertion.json())
            #expect(backwardsStatus == 400 && (backwards["error_description"]?.stringValue)?.contains("counter") == true)

            // An expired code.
            let code = try await client.authorizationCode(from: try Self.url(redirect["redirectURL"]), for: secondRequest)
            clock.advance(by: 0.4)
            await #expect(throws: OAuthError.tokenError(reason: "")) { try await client.exchange(code: code, for: secondRequest) }
        }
    }
}

@Suite("Reference identity provider: persistence, rate limits, command line")
struct ProviderOperationsTests {
    @Test("with a SQLite data directory, identities, credentials and the signing key survive a restart")
    func persistence() async throws {
        let dataDirectoryScratch = try TemporaryDirectory()
        let dataDirectory = dataDirectoryScratch.url.appendingPathComponent("latchkey-idp-data")
        let deviceDirectoryScratch = try TemporaryDirectory()
        let deviceDirectory = deviceDirectoryScratch.url.appendingPathComponent("latchkey-idp-device")
        let device = try ProviderTests.newAuthenticator(deviceDirectory)
        let identity = ActorBox<String>()
        let keyID = ActorBox<String>()
        let port = ActorBox<Int>()
        // The restart reuses the port: the origin, and so the credential's scope, includes it.
        try await ProviderTests.withProvider(.sqlite, {
            $0.dataDirectory = dataDirectory
            $0.storeKey = nil
        }) { issuer, _ in
            await port.set(issuer.port ?? 0)
            let (bound, _) = try await ProviderTests.bind(issuer, device)
            await identity.set(bound)
            let tokens = try await ProviderTests.signIn(issuer, device, client: try ProviderTests.client(issuer))
            await keyID.set(try JWS(compact: try #require(tokens.idToken)).keyID ?? "")
        }
        // The database and the key sealing its secrets are the owner's only.
        for (name, expected) in [("latchkey.sqlite3", 0o600), ("store.key", 0o600), (".", 0o700)] {
            let mode = try FileManager.default.attributesOfItem(atPath: dataDirectory.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == expected, "\(name)")
        }
        let reusedPort = try #require(await port.value)
        try await ProviderTests.withProvider(.sqlite, {
            $0.dataDirectory = dataDirectory
            $0.storeKey = nil
            $0.port = reusedPort
        }) { issuer, _ in
            let tokens = try await ProviderTests.signIn(issuer, device, client: try ProviderTests.client(issuer))
            #expect(tokens.idTokenClaims?.subject == (await identity.value))
            #expect(try JWS(compact: try #require(tokens.idToken)).keyID == (await keyID.value))
        }
    }

    @Test("code-bearing endpoints are rate limited per client address")
    func rateLimit() async throws {
        try await ProviderTests.withProvider(.sqlite, { $0.rateLimitPerMinute = 3 }) { issuer, _ in
            var statuses: [Int] = []
            for _ in 0..<5 {
                let form = Data("grant_type=authorization_code&code=x&client_id=latchkey-cli".utf8)
                let response = try await HTTP1Transport().send(TransportRequest(
                    method: "POST", url: issuer.appendingPathComponent("token"),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"], body: form
                ))
                statuses.append(response.status)
            }
            #expect(statuses == [400, 400, 400, 429, 429])
            // Other endpoints are not limited.
            #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent(".well-known/openid-configuration")).0 == 200)
        }
    }

    @Test("`latchkey serve` runs as a process, answers discovery and JWKS, serves the admin command, and stops on SIGTERM")
    func serveProcess() async throws {
        let binary = LatchkeyServe.binary
        let token = "cli-test-token-for-the-serve-process"
        let (server, base) = try await LatchkeyServe.start(["--port", "0"], environment: ["LATCHKEY_ADMIN_TOKEN": token])
        defer { ChildProcess.stop(server) }
        let discovery = try await ProviderTests.request("GET", base.appendingPathComponent(".well-known/openid-configuration"))
        #expect(discovery.0 == 200 && discovery.1["issuer"]?.stringValue == base.absoluteString)
        let jwks = try await ProviderTests.request("GET", base.appendingPathComponent("jwks"))
        #expect(jwks.0 == 200 && (jwks.1["keys"]?.arrayValue)?.count == 1)

        let admin = try await ChildProcess.run(
            binary, ["admin", "create-identity", "--idp", base.absoluteString, "--username", "cli-user", "--json"], environment: ["LATCHKEY_ADMIN_TOKEN": token]
        )
        #expect(admin.status == 0, "\(admin.stderr)")
        let object = try JSONValue(json: Data(admin.stdout.utf8))
        #expect((object["bindURL"]?.stringValue)?.hasPrefix(base.absoluteString + "/v1/bind/") == true)

        server.terminate()  // SIGTERM
        let stopped = Date().addingTimeInterval(10)
        while server.isRunning, Date() < stopped { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!server.isRunning)
        #expect(server.terminationStatus == 0)
    }
}

extension ProviderOperationsTests {
    static var binary: URL { LatchkeyServe.binary }

    /// Runs `latchkey` with `arguments`; its exit status and standard output.
    /// Runs `latchkey` with `arguments` and the tests' admin token in its environment.
    static func latchkey(_ arguments: [String]) async throws -> (Int32, String) {
        let run = try await LatchkeyCommand.run(arguments, environment: ["LATCHKEY_ADMIN_TOKEN": ProviderTests.adminToken])
        return (run.status, run.stdout)
    }

    @Test("`latchkey admin`: list, find, bind-job, credentials, revoke, delete, rotate, each with --json")
    func adminCommands() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "latchkey is built with the tests")
        try await ProviderTests.withProvider(.sqlite) { issuer, device in
            let admin = ["--idp", issuer.absoluteString, "--json"]
            func json(_ text: String) throws -> JSONValue {
                try JSONValue(json: Data(text.utf8))
            }
            let (identity, _) = try await ProviderTests.bind(issuer, device, username: "ada")
            _ = try await Self.latchkey(["admin", "create-identity", "--username", "grace"] + admin)

            let (listed, list) = try await Self.latchkey(["admin", "list-identities"] + admin)
            #expect(listed == 0)
            #expect((try json(list)["identities"]?.arrayValue)?.compactMap { $0["username"]?.stringValue } == ["ada", "grace"])
            let (_, firstPage) = try await Self.latchkey(["admin", "list-identities", "--limit", "1"] + admin)
            let next = try #require(try json(firstPage)["next"]?.stringValue)
            let (_, secondPage) = try await Self.latchkey(["admin", "list-identities", "--limit", "1", "--after", next] + admin)
            #expect((try json(secondPage)["identities"]?.arrayValue)?.first?["username"]?.stringValue == "grace")

            let (found, byName) = try await Self.latchkey(["admin", "find-identity", "ADA"] + admin)
            #expect(found == 0)
            #expect((try json(byName)["identity"])?["id"]?.stringValue == identity)
            let (_, byID) = try await Self.latchkey(["admin", "find-identity"] + admin + ["--", identity])
            #expect((try json(byID)["identity"])?["username"]?.stringValue == "ada")

            let (made, job) = try await Self.latchkey(["admin", "create-bind-job"] + admin + ["--", identity])
            #expect(made == 0)
            #expect((try json(job)["bindURL"]?.stringValue)?.contains("/v1/bind/") == true)

            let (_, credentials) = try await Self.latchkey(["admin", "list-credentials"] + admin + ["--", identity])
            let credential = try #require((try json(credentials)["credentials"]?.arrayValue)?.first?["id"]?.stringValue)
            let (revoked, _) = try await Self.latchkey(["admin", "revoke-credential"] + admin + ["--", credential])
            #expect(revoked == 0)
            let (_, after) = try await Self.latchkey(["admin", "list-credentials"] + admin + ["--", identity])
            #expect((try json(after)["credentials"]?.arrayValue)?.first { $0["id"]?.stringValue == credential }?["revoked"]?.boolValue == true)

            let (rotated, rotation) = try await Self.latchkey(["admin", "rotate-signing-key"] + admin)
            #expect(rotated == 0)
            #expect(try json(rotation)["kid"]?.stringValue != nil)
            let (_, jwks) = try await ProviderTests.request("GET", issuer.appendingPathComponent("jwks"))
            #expect((jwks["keys"]?.arrayValue)?.count == 2, "the new key is published before it signs")

            let (deleted, _) = try await Self.latchkey(["admin", "delete-identity"] + admin + ["--", identity])
            #expect(deleted == 0)
            let (missing, _) = try await Self.latchkey(["admin", "find-identity"] + admin + ["--", identity])
            #expect(missing == 1)
        }
    }
}

/// A value shared between the two runs of a test.
actor ActorBox<Value: Sendable> {
    private(set) var value: Value?
    func set(_ newValue: Value) { value = newValue }
}
