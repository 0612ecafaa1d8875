import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn
import LatchkeyTestSupport
import LatchkeyProtocol
import Testing
import LatchkeyIdP

/// The facade end to end against the in-process reference provider over real HTTP.
@Suite("Embedded: flows against the reference provider")
struct EmbeddedFlowTests {
    static func deepLink(for bindURL: URL, scheme: String = "myapp") throws -> URL {
        let components = try #require(URLComponents(url: bindURL, resolvingAgainstBaseURL: false))
        let job = try #require(components.path.split(separator: "/").last)
        let token = try #require(components.queryItems?.first { $0.name == "token" }?.value)
        var link = URLComponents()
        link.scheme = scheme
        link.host = "bind"
        link.queryItems = [
            URLQueryItem(name: "api_base_url", value: "\(components.scheme ?? "http")://\(components.host ?? ""):\(components.port ?? 80)"),
            URLQueryItem(name: "job_id", value: String(job)),
            URLQueryItem(name: "token", value: token),
        ]
        return try #require(link.url)
    }

    @Test("bind from both URL forms, list, authenticate, refresh, revoke, delete")
    func lifecycle() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let (identity, bindURL) = try await provider.createIdentity("ada")
            #expect(embedded.isBindURL(bindURL) && !embedded.isAuthenticateURL(bindURL))

            let first = try await embedded.registerCredential(from: bindURL)
            #expect(first.credential.user.name == "ada" && first.credential.issuer == provider.issuer && first.postBindingRedirectURI == nil)

            // A second credential for the same user on this host is excluded by the
            // provider's creation options (WebAuthn §5.4 excludeCredentials).
            let excluded = await #expect(throws: LatchkeyError.self) {
                try await embedded.registerCredential(from: try await provider.bindURL(for: identity))
            }
            #expect(excluded?.code == .credentialExists)

            let (other, _) = try await provider.createIdentity("bob")
            let deepLink = try Self.deepLink(for: try await provider.bindURL(for: other, redirect: "myapp://bound"))
            #expect(embedded.isBindURL(deepLink))
            let second = try await embedded.registerCredential(from: deepLink)
            #expect(second.postBindingRedirectURI?.absoluteString == "myapp://bound")

            let listed = try await embedded.credentials()
            #expect(listed.map(\.id) == [first.credential.id, second.credential.id])
            #expect(listed.allSatisfy { $0.state == .active && $0.rpID == "127.0.0.1" && $0.signCount == 0 && $0.lastUsedAt == nil })
            #expect(listed.map(\.user.name) == ["ada", "bob"] && listed.allSatisfy { $0.algorithm == "ES256" })

            // Two fit, so the credential is named.
            let tokens = try await embedded.authenticate(
                issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback,
                scopes: ["openid", "profile"], credential: second.credential.id
            )
            #expect(tokens.claims?.subject == other && tokens.claims?.issuer == provider.issuer.absoluteString)
            #expect(tokens.refreshToken != nil && tokens.idToken != nil && tokens.expiresAt != nil && tokens.tokenType == "Bearer")
            #expect(!"\(tokens)".contains(tokens.accessToken))
            let used = try #require(try await embedded.credentials().first { $0.id == second.credential.id })
            #expect(used.signCount == 1 && used.lastUsedAt != nil)

            let refreshed = try await embedded.refresh(tokens)
            #expect(refreshed.claims?.subject == other && refreshed.refreshToken != tokens.refreshToken)
            try await embedded.revoke(refreshed)
            let afterRevoke = await #expect(throws: LatchkeyError.self) { try await embedded.refresh(refreshed) }
            #expect(afterRevoke?.code == .providerError && afterRevoke?.providerError?.error == .invalidGrant)

            #expect(try await embedded.deleteCredential(id: first.credential.id))
            #expect(try await embedded.deleteCredential(id: first.credential.id) == false)
            #expect(try await embedded.deleteCredential(id: "no-such-credential") == false)
            #expect(try await embedded.credentials().map(\.id) == [second.credential.id])
            // With one left, no choice is needed.
            let again = try await provider.signIn(embedded)
            #expect(again.claims?.subject == other)
        }
    }

    /// A bind killed after the key was made but before the provider's answer came back
    /// (the soak left such keys) used to list as an ordinary credential that could never
    /// sign in. Its key now says `pending` until the provider is known to have bound it.
    @Test("a key whose bind answer never arrived is pending: not offered unless named or listed; active after a sign-in")
    func pendingCredential() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let (_, bindURL) = try await provider.createIdentity("ada")
            let bound = try await embedded.registerCredential(from: bindURL).credential
            #expect(bound.state == .active)

            // What a killed `bind` leaves: the key made with the pending state and submitted
            // (so the provider bound it), the answer never read.
            let (other, otherBindURL) = try await provider.createIdentity("bob")
            let authenticator = SoftwareAuthenticator(vault: try KeyVault.open(at: vault.directory.appendingPathComponent("vault"), key: .keyFile(vault.keyFile)))
            let transport = HTTP1Transport()
            let job = try await transport.send(TransportRequest(method: "GET", url: otherBindURL, headers: ["Accept": "application/json"]))
            let jobObject = try JSONValue(json: job.body)
            let publicKey = try #require(jobObject["publicKey"])
            let options = try PublicKeyCredentialCreationOptionsJSON(json: publicKey.json())
            let (registration, _) = try authenticator.makeCredential(
                options, origin: provider.origin,
                attributes: ["issuer": provider.issuer.absoluteString, "state": "pending"]
            )
            let submit = try #require((jobObject["submit"]?.stringValue).flatMap(URL.init(string:)))
            let submitted = try await transport.send(TransportRequest(
                method: "POST", url: submit,
                headers: ["Content-Type": "application/json"], body: try registration.json()
            ))
            #expect(submitted.status == 201)
            let pending = try #require(try await embedded.credentials().first { $0.user.name == "bob" })
            #expect(pending.state == .pending)

            // Not offered on its own: the active credential signs in without a choice.
            let tokens = try await provider.signIn(embedded)
            #expect(tokens.claims?.subject != other)
            // Named, it signs in, and is active from then on.
            let named = try await provider.signIn(embedded, credential: pending.id)
            #expect(named.claims?.subject == other)
            #expect(try await embedded.credentials().allSatisfy { $0.state == .active })
        }
    }

    @Test("authorize returns a code that a separate OAuth client exchanges with the verifier")
    func authorizeThenExchange() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let (identity, bindURL) = try await provider.createIdentity()
            _ = try await embedded.registerCredential(from: bindURL)
            let result = try await embedded.authorize(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback)
            #expect(!"\(result)".contains(result.code) && !"\(result)".contains(result.codeVerifier))

            let backEnd = try provider.oauthClient()
            let tokens = try await backEnd.exchange(code: result.code, codeVerifier: result.codeVerifier, redirectURI: result.redirectURI, nonce: result.nonce)
            #expect(tokens.idTokenClaims?.subject == identity)
            // The code is single use.
            await #expect(throws: OAuthError.self) {
                try await backEnd.exchange(code: result.code, codeVerifier: result.codeVerifier, redirectURI: result.redirectURI, nonce: result.nonce)
            }
        }
    }

    @Test("authenticate(url:) answers an authenticate URL obtained elsewhere, in both forms")
    func urlDrivenAuthentication() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let (identity, bindURL) = try await provider.createIdentity()
            _ = try await embedded.registerCredential(from: bindURL)

            // Some other party (a web back end) starts the authorization request.
            let relyingApp = try provider.oauthClient()
            for deepLink in [false, true] {
                let request = try await relyingApp.authorizationRequest(scopes: ["openid"])
                let started = try await HTTP1Transport().send(TransportRequest(method: "GET", url: request.url, headers: ["Accept": "application/json"]))
                let object = try JSONValue(json: started.body)
                var authenticateURL = try #require((object["authenticateURL"]?.stringValue).flatMap(URL.init(string:)))
                if deepLink {
                    var link = URLComponents()
                    link.scheme = "myapp"
                    link.host = "authenticate"
                    link.queryItems = [
                        URLQueryItem(name: "api_base_url", value: provider.issuer.absoluteString),
                        URLQueryItem(name: "session_id", value: authenticateURL.lastPathComponent),
                    ]
                    authenticateURL = try #require(link.url)
                }
                #expect(embedded.isAuthenticateURL(authenticateURL) && !embedded.isBindURL(authenticateURL))

                let redirect = try await embedded.authenticate(url: authenticateURL)
                let code = try await relyingApp.authorizationCode(from: redirect, for: request)
                let tokens = try await relyingApp.exchange(code: code, for: request)
                #expect(tokens.idTokenClaims?.subject == identity)
            }
        }
    }

    @Test("two credentials for one provider: choose-credential goes to the step handler; without one the error names it")
    func chooseCredential() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let asked = CallCounter<FlowStep>()
            let chooser = try vault.embedded(allowing: [provider.host]) { step in
                asked.record(step)
                return .credential(id: try #require(step.candidates.last).id)
            }
            let (ada, adaBind) = try await provider.createIdentity("ada")
            let (bob, bobBind) = try await provider.createIdentity("bob")
            _ = try await chooser.registerCredential(from: adaBind)
            _ = try await chooser.registerCredential(from: bobBind)

            let tokens = try await provider.signIn(chooser)
            #expect(tokens.claims?.subject == bob)
            #expect(asked.values.map(\.name) == [.chooseCredential])
            #expect(asked.values.first?.candidates.map(\.user.name) == ["ada", "bob"])

            // Naming one skips the question.
            let named = try await chooser.credentials().first { $0.user.name == "ada" }
            let direct = try await provider.signIn(chooser, credential: named?.id)
            #expect(direct.claims?.subject == ada && asked.values.count == 1)

            // An answer that is not a candidate is asked again, then refused.
            let stubborn = try vault.embedded(allowing: [provider.host]) { _ in .credential(id: "not-offered") }
            let refused = await #expect(throws: LatchkeyError.self) {
                try await provider.signIn(stubborn)
            }
            #expect(refused?.code == .invalidStepAnswer)

            let noHandler = try vault.embedded(allowing: [provider.host])
            let error = await #expect(throws: LatchkeyError.self) {
                try await provider.signIn(noHandler)
            }
            #expect(error?.code == .stepUnsupported && error?.step == "choose-credential")
        }
    }

    @Test("requireEmailCodeForBinding: verify-code answered from the outbox; a wrong code, then the right one")
    func verifyCode() async throws {
        try await ProviderHarness.withVault({ $0.requireEmailCodeForBinding = true }) { provider, vault in
            let asked = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host]) { step in
                asked.record(step)
                #expect(step.name == .verifyCode && step.fields.map(\.name) == ["code"])
                return step.attempt == 1 ? .code("wrong") : .code(try await provider.outboxCode())
            }
            let (_, bindURL) = try await provider.createIdentity()
            let bound = try await embedded.registerCredential(from: bindURL)
            #expect(try await embedded.credentials().map(\.id) == [bound.credential.id])
            #expect(asked.values.map(\.attempt) == [1, 2])
            #expect(asked.values.last?.previousError?.contains("wrong code") == true)
            #expect(asked.values.first?.message?.contains("a…@example.com") == true)

            // Without a handler the flow stops at the step, naming it, and binds nothing.
            let (_, otherBind) = try await provider.createIdentity("bob")
            let silent = try vault.embedded(allowing: [provider.host])
            let error = await #expect(throws: LatchkeyError.self) { try await silent.registerCredential(from: otherBind) }
            #expect(error?.code == .stepUnsupported && error?.step == "verify-code")

            // Wrong codes until the provider gives up: a provider error, nothing bound.
            let (_, thirdBind) = try await provider.createIdentity("cy")
            let guesser = try vault.embedded(allowing: [provider.host]) { _ in .code("nope") }
            let exhausted = await #expect(throws: LatchkeyError.self) { try await guesser.registerCredential(from: thirdBind) }
            #expect(exhausted?.code == .providerError && exhausted?.providerError?.error == .invalidGrant)
            #expect(try await embedded.credentials().count == 1)
        }
    }

    @Test("an unknown provider step ends the flow with an error naming it; nothing is bound")
    func unknownStep() async throws {
        try await ProviderHarness.withVault({ $0.termsOfService = "Accept the terms of use" }) { provider, vault in
            let handler = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host]) { step in
                handler.record(step)
                return StepAnswer(fields: [:])
            }
            let (_, bindURL) = try await provider.createIdentity()
            let error = await #expect(throws: LatchkeyError.self) { try await embedded.registerCredential(from: bindURL) }
            #expect(error?.code == .stepUnsupported && error?.step == "accept-terms")
            #expect(error?.reason.contains("accept-terms") == true)
            #expect(handler.values.isEmpty)
            #expect(try await embedded.credentials().isEmpty)
        }
    }

    @Test("a host outside the allowed domains is refused before any request")
    func domainNotAllowed() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let transport = RecordingTransport()
            let embedded = try vault.embedded(allowing: ["example.com"], transport: transport)
            let (_, bindURL) = try await provider.createIdentity()
            #expect(!embedded.isBindURL(bindURL))
            #expect(!embedded.isBindURL(try EmbeddedFlowTests.deepLink(for: bindURL)))

            for attempt in 0..<3 {
                let error = await #expect(throws: LatchkeyError.self) {
                    switch attempt {
                    case 0: _ = try await embedded.registerCredential(from: bindURL)
                    case 1: _ = try await embedded.registerCredential(from: EmbeddedFlowTests.deepLink(for: bindURL))
                    default: _ = try await provider.signIn(embedded)
                    }
                }
                #expect(error?.code == .domainNotAllowed, "attempt \(attempt)")
            }
            #expect(transport.requests.isEmpty)
        }
    }

    @Test("a credential the provider revoked: a clear error, marked revoked in the vault")
    func revokedCredential() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let (_, bindURL) = try await provider.createIdentity()
            let bound = try await embedded.registerCredential(from: bindURL)
            let revocation = try await provider.admin.call(AdminAPI.revokeCredential, bound.credential.id)
            #expect(revocation.status == 200)

            for _ in 0..<2 {
                let error = await #expect(throws: LatchkeyError.self) {
                    try await provider.signIn(embedded)
                }
                #expect(error?.code == .credentialRevoked)
                #expect(error?.reason.contains("bind a new one") == true)
            }
            #expect(try await embedded.credentials().first?.state == .revoked)
        }
    }

    @Test("no credential for the provider, and malformed links, give typed errors")
    func typedErrors() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let none = await #expect(throws: LatchkeyError.self) {
                try await provider.signIn(embedded)
            }
            #expect(none?.code == .noCredential)
            let notBind = await #expect(throws: LatchkeyError.self) {
                try await embedded.registerCredential(from: provider.issuer.appendingPathComponent("v1/authenticate/x"))
            }
            #expect(notBind?.code == .notABindURL)
            let notAuthenticate = await #expect(throws: LatchkeyError.self) {
                try await embedded.authenticate(url: try #require(URL(string: "myapp://bind?api_base_url=http://127.0.0.1&job_id=a&token=b")))
            }
            #expect(notAuthenticate?.code == .notAnAuthenticateURL)
            // A used bind link.
            let (_, bindURL) = try await provider.createIdentity()
            _ = try await embedded.registerCredential(from: bindURL)
            let used = await #expect(throws: LatchkeyError.self) { try await embedded.registerCredential(from: bindURL) }
            #expect(used?.code == .providerError && used?.reason.contains("ask for a new one") == true)
            #expect(try await embedded.credentials().count == 1)
        }
    }

    @Test("events trace a flow: started, credential chosen, code, tokens, completed; failures too")
    func events() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let (_, bindURL) = try await provider.createIdentity()
            _ = try await embedded.registerCredential(from: bindURL)

            let stream = embedded.events()
            let tokens = try await provider.signIn(embedded)
            _ = try? await embedded.registerCredential(from: bindURL)
            var names: [String] = []
            var flows = Set<UUID>()
            for await event in stream {
                flows.insert(event.flowID)
                switch event.kind {
                case .started: names.append("started")
                case .credentialChosen: names.append("credentialChosen")
                case .codeReceived: names.append("codeReceived")
                case .tokensReceived: names.append("tokensReceived")
                case .completed: names.append("completed")
                case .failed(let error): names.append("failed:\(error.code)")
                default: names.append("other")
                }
                if names.last?.hasPrefix("failed") == true { break }
            }
            #expect(names == ["started", "credentialChosen", "codeReceived", "tokensReceived", "completed", "started", "failed:providerError"])
            #expect(flows.count == 2 && tokens.claims != nil)
        }
    }

    @Test("completion handlers are called exactly once: on success, on failure and on cancellation")
    func completionHandlers() async throws {
        try await ProviderHarness.withVault({ $0.requireEmailCodeForBinding = true }) { provider, vault in
            // The step handler waits for a code that never comes, until cancelled.
            let embedded = try vault.embedded(allowing: [provider.host]) { _ in
                try await Task.sleep(for: .seconds(120))
                return .code("never")
            }
            let listed = CallCounter<Result<[Credential], LatchkeyError>>()
            let failed = CallCounter<Result<BoundCredential, LatchkeyError>>()
            let cancelled = CallCounter<Result<BoundCredential, LatchkeyError>>()
            let (_, bindURL) = try await provider.createIdentity()

            let events = embedded.events()
            embedded.credentials { listed.record($0) }
            embedded.registerCredential(from: try #require(URL(string: "https://example.org/not-a-bind-url"))) { failed.record($0) }
            let task = embedded.registerCredential(from: bindURL) { cancelled.record($0) }
            for await event in events {
                if case .stepRequested(.verifyCode) = event.kind { break }
            }
            task.cancel()

            let deadline = Date().addingTimeInterval(20)
            while (listed.values.isEmpty || failed.values.isEmpty || cancelled.values.isEmpty), Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(listed.values.count == 1 && failed.values.count == 1 && cancelled.values.count == 1)
            if case .success(let credentials)? = listed.values.first { #expect(credentials.isEmpty) } else { Issue.record("listing failed") }
            if case .failure(let error)? = failed.values.first { #expect(error.code == .notABindURL) } else { Issue.record("a bad URL succeeded") }
            if case .failure(let error)? = cancelled.values.first { #expect(error.code == .cancelled) } else { Issue.record("cancel did not fail the flow") }
            #expect(try await embedded.credentials().isEmpty)
        }
    }
}
