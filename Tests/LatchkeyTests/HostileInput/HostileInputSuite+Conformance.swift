import Foundation
import LatchkeyOAuth
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
@testable import LatchkeyOAuth
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing
import LatchkeyProtocol

/// The reference provider held to the letter of the RFCs it implements (docs/PROTOCOL.md):
/// each case failed on the provider before these checks and passes now.
extension HostileInputSuite {
    static let conformance: [Attack] = [
        Attack("code_challenge of 43 characters that is not base64url (RFC 7636 §4.2)", "400 invalid_request") { context in
            try await context.send("GET", "\(context.provider.issuer.absoluteString)/authorize?response_type=code&client_id=latchkey-cli&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&code_challenge=\(String(repeating: ".", count: 43))&code_challenge_method=S256", headers: ["Accept": "application/json"])
        },
        Attack("revocation by an unregistered client_id (RFC 7009 §2.1)", "401 invalid_client") { context in
            let authorization = try await context.authorize()
            let (access, _) = try await context.exchange(authorization)
            try await context.form("revoke", ["token": access, "client_id": "someone-else"])
        },
        Attack("revocation with no client_id at all (RFC 7009 §2.1)", "401 invalid_client") { context in
            let (access, _) = try await context.exchange(try await context.authorize())
            try await context.form("revoke", ["token": access])
        },
        Attack("an assertion whose userHandle names another user (WebAuthn L3 §7.2 step 6)", "400 invalid_assertion") { context in
            try await tamperedSignIn(context, loginHint: true) { $0.response.userHandle = Base64URLBytes(Data("another-identity".utf8)) }
        },
        Attack("an assertion without userHandle when no credentials were listed (WebAuthn L3 §7.2 step 6)", "400 invalid_assertion") { context in
            try await tamperedSignIn(context, loginHint: false) { $0.response.userHandle = nil }
        },
    ]

    /// A sign-in at the provider with the vault's credential, its assertion changed by
    /// `change` before it is posted; the provider's refusal is thrown.
    static func tamperedSignIn(_ context: Context, loginHint: Bool, _ change: (inout AuthenticationResponseJSON) -> Void) async throws {
        let issuer = context.provider.issuer
        var components = try #require(URLComponents(url: issuer.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false))
        components.queryItems = [
            .init(name: "response_type", value: "code"), .init(name: "client_id", value: "latchkey-cli"),
            .init(name: "redirect_uri", value: "http://127.0.0.1/callback"), .init(name: "scope", value: "openid"),
            .init(name: "code_challenge", value: try PKCE.generate().challenge), .init(name: "code_challenge_method", value: "S256"),
        ] + (loginHint ? [.init(name: "login_hint", value: "ada")] : [])
        let transport = HTTP1Transport()
        let started = try await transport.send(TransportRequest(method: "GET", url: try #require(components.url), headers: ["Accept": "application/json"]))
        let authenticateText = (try JSONValue(json: started.body))["authenticateURL"]?.stringValue
        let authenticate = try #require(authenticateText.flatMap(URL.init(string:)), "no authenticateURL: \(String(decoding: started.body, as: UTF8.self))")
        let challenge = try await transport.send(TransportRequest(method: "GET", url: authenticate))
        let submit = try #require((try JSONValue(json: challenge.body))["submit"]?.stringValue)
        let options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.body)
        let authenticator = SoftwareAuthenticator(vault: try KeyVault.open(at: context.vault.directory.appendingPathComponent("vault"), key: .keyFile(context.vault.keyFile)))
        var (assertion, _) = try authenticator.getAssertion(options, origin: issuer.absoluteString, credentialID: context.credential.credentialID)
        change(&assertion)
        try await context.send("POST", submit, body: try assertion.json(), headers: ["Content-Type": "application/json"])
    }

    @Test("token responses say Pragma: no-cache and Cache-Control: no-store (RFC 6749 §5.1)")
    func tokenResponseCaching() async throws {
        try await Self.withSignedIn({ _ in }) { context in
            let authorization = try await context.authorize()
            let body = "grant_type=authorization_code&code=\(authorization.code)&redirect_uri=\(FormEncoding.escape(authorization.redirectURI.absoluteString))&code_verifier=\(authorization.codeVerifier)&client_id=latchkey-cli"
            let response = try await HTTP1Transport().send(TransportRequest(
                method: "POST", url: context.provider.issuer.appendingPathComponent("token"),
                headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data(body.utf8)
            ))
            #expect(response.status == 200)
            #expect(response.headers["pragma"] == "no-cache", "\(response.headers)")
            #expect(response.headers["cache-control"] == "no-store", "\(response.headers)")
        }
    }

    @Test("a 401 from userinfo carries WWW-Authenticate: Bearer, with invalid_token only when a token was sent (RFC 6750 §3)")
    func userInfoChallenge() async throws {
        try await Self.withSignedIn({ _ in }) { context in
            let url = context.provider.issuer.appendingPathComponent("userinfo")
            let bad = try await HTTP1Transport().send(TransportRequest(method: "GET", url: url, headers: ["Authorization": "Bearer made-up"]))
            #expect(bad.status == 401)
            #expect(bad.headers["www-authenticate"]?.hasPrefix(#"Bearer error="invalid_token""#) == true, "\(bad.headers)")
            let none = try await HTTP1Transport().send(TransportRequest(method: "GET", url: url))
            #expect(none.status == 401)
            #expect(none.headers["www-authenticate"] == "Bearer", "\(none.headers)")
        }
    }

    @Test("unknown scopes are not granted; the token response names what was (RFC 6749 §3.3)")
    func unknownScopes() async throws {
        try await Self.withSignedIn({ _ in }) { context in
            let tokens = try await context.embedded.authenticate(
                issuer: context.provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid", "admin", "profile", "root:write"]
            )
            #expect(tokens.tokenSet.scope == "openid profile", "granted: \(tokens.tokenSet.scope ?? "-")")
        }
    }
}

extension HostileInputSuite {
    /// One letter carrying 15,000 combining marks: one character to a grapheme count.
    static let zalgo = "a" + String(repeating: "\u{0301}", count: 15_000)
    /// One letter carrying ten: short enough for every length limit, still a stack.
    static let stacked = "a" + String(repeating: "\u{0301}", count: 10)

    @Test("a device name of a letter under a stack of combining marks is refused, and nothing is imported (RFC 8264 §4.3)", arguments: [zalgo, stacked])
    func stackedDeviceName(_ name: String) async throws {
        try await TransferTests.withDevices(confirm: { _ in .approve }) { devices in
            let export = TransferTests.ExportWatcher(devices.exporter, credential: devices.credential.id)
            let code = try await export.code()
            let error = await #expect(throws: LatchkeyError.self) {
                try await devices.importer.importCredential(code: code.displayed, deviceName: name, issuer: devices.provider.issuer)
            }
            #expect(error?.providerError?.error == .invalidRequest, "\(String(describing: error))")
            if name == Self.stacked {
                #expect(error?.providerError?.errorDescription?.contains("combining marks") == true, "\(String(describing: error))")
            }
            #expect(try await devices.importer.credentials().filter { $0.user.name == "ada" }.isEmpty)
            export.task.cancel()
        }
    }

    @Test("profile names with a right-to-left override, an isolate, a zero-width space or a mark-stacked letter are refused (RFC 8264 §4.3, §12.2)", arguments: [
        "Ev\u{202E}il", "Ada\u{2066}x", "Zero\u{200B}width", stacked,
    ])
    func hostileProfileName(_ name: String) async throws {
        try await ProviderHarness.withVault({ $0.selfRegistration = true }) { provider, vault in
            let asked = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: { step in
                asked.record(step)
                throw CancellationError()
            })
            let error = await #expect(throws: LatchkeyError.self) {
                try await embedded.signUp(issuer: provider.issuer, username: "eve", profile: [.givenName: name, .email: "eve@example.com"])
            }
            // The provider refuses the profile and asks for it again (enroll-profile with the
            // refusal as its previous error); this handler then gives up.
            let reasked = asked.values.first { $0.name == .enrollProfile }
            #expect(
                error?.providerError?.error == .invalidProfile || reasked?.previousError?.contains("givenName") == true,
                "the provider must refuse the profile: \(String(describing: error)), steps \(asked.values.map { "\($0.name) \($0.previousError ?? "")" })"
            )
            let outbox = try await provider.outbox()
            #expect(outbox.isEmpty, "no code may be sent for a refused profile: \(outbox)")
        }
    }
}

/// The admin API's token (docs/SECURITY.md, "The provider's store").
extension HostileInputSuite {
    /// One admin request over a raw connection from `source`: its status.
    static func adminStatus(_ provider: ProviderHarness, token: String, from source: String) async throws -> RawConnection.Outcome {
        let connection = try await RawConnection.open(port: provider.port, source: source)
        _ = connection.send("GET /admin/outbox HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        return await connection.outcome(within: 10)
    }

    @Test("failed admin authentications are throttled per address; another address is not affected")
    func adminThrottle() async throws {
        try await ProviderHarness.withVault { provider, _ in
            var statuses: [RawConnection.Outcome] = []
            for _ in 0..<11 { statuses.append(try await Self.adminStatus(provider, token: "guess", from: "127.0.0.2")) }
            #expect(statuses == Array(repeating: .status(401), count: 10) + [.status(429)], "\(statuses)")
            #expect(try await Self.adminStatus(provider, token: ProviderHarness.adminToken, from: "127.0.0.2") == .status(429), "the guessing address is refused even with the token")
            #expect(try await Self.adminStatus(provider, token: ProviderHarness.adminToken, from: "127.0.0.3") == .status(200), "the owner's address is not locked out")
        }
    }

    @Test("latchkey serve refuses a weak admin token and any token on its command line")
    func adminTokenRules() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        for weak in ["1234", "password-password", String(repeating: "a", count: 21), "deadbeefdeadbeefdeadbeef"] {
            let run = try await ChildProcess.run(CommandLineTests.binary, ["serve", "--port", "0"], environment: ["LATCHKEY_ADMIN_TOKEN": weak])
            #expect(run.status == 1 && run.stderr.contains("too weak"), "\(weak): \(run.stderr)")
        }
        let onArgv = try await ChildProcess.run(CommandLineTests.binary, ["serve", "--port", "0", "--admin-token", "x"])
        #expect(onArgv.status == 2, "serve --admin-token must be a usage error: \(onArgv.stderr)")
        let adminOnArgv = try await ChildProcess.run(CommandLineTests.binary, ["admin", "outbox", "--idp", "http://127.0.0.1:9", "--admin-token", "x"])
        #expect(adminOnArgv.status == 2, "admin --admin-token must be a usage error: \(adminOnArgv.stderr)")
        let plainIssuer = try await ChildProcess.run(
            CommandLineTests.binary, ["serve", "--port", "0", "--issuer", "http://id.example.com"], environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]
        )
        #expect(plainIssuer.status == 2 && plainIssuer.stderr.contains("https"), "an http non-loopback issuer must be refused: \(plainIssuer.stderr)")
    }
}

/// Trusted proxies (docs/SECURITY.md, "Trusted proxies").
extension HostileInputSuite {
    /// Four token requests, each claiming to come from `forwarded(i)`: their statuses.
    static func tokenStatuses(_ provider: ProviderHarness, count: Int = 4, forwarded: (Int) -> String) async throws -> [Int] {
        var statuses: [Int] = []
        for index in 0..<count {
            let response = try await HTTP1Transport().send(TransportRequest(
                method: "POST", url: provider.issuer.appendingPathComponent("token"),
                headers: ["Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": forwarded(index)],
                body: Data("grant_type=authorization_code&code=x&client_id=latchkey-cli".utf8)
            ))
            statuses.append(response.status)
        }
        return statuses
    }

    @Test("without --trusted-proxy a forged X-Forwarded-For buys no new rate-limit bucket")
    func forwardedIgnored() async throws {
        try await ProviderHarness.withVault({ $0.rateLimitPerMinute = 3 }) { provider, _ in
            let statuses = try await Self.tokenStatuses(provider) { "203.0.113.\($0 + 1)" }
            #expect(statuses == [400, 400, 400, 429], "\(statuses)")
        }
    }

    @Test("with --trusted-proxy each forwarded client gets its own bucket")
    func forwardedTrusted() async throws {
        try await ProviderHarness.withVault({
            $0.rateLimitPerMinute = 3
            $0.trustedProxies = IPNetwork("127.0.0.0/8").map { [$0] } ?? []
        }) { provider, _ in
            let first = try await Self.tokenStatuses(provider) { _ in "203.0.113.1" }
            #expect(first == [400, 400, 400, 429], "\(first)")
            let second = try await Self.tokenStatuses(provider, count: 1) { _ in "203.0.113.2" }
            #expect(second == [400], "another forwarded client is not limited by the first")
            let spoofed = try await Self.tokenStatuses(provider, count: 1) { _ in "203.0.113.9, 203.0.113.1" }
            #expect(spoofed == [429], "only the rightmost untrusted hop counts")
        }
    }
}
