import Foundation
import Latchkey
import LatchkeyIdP
import LatchkeyTestSupport
import LatchkeyProtocol
import Testing
import LatchkeyOAuth
import LatchkeyCrypto

/// Limits nobody can turn against users (docs/SECURITY.md, "Limits"): floods of requests
/// that prove nothing, lock-outs aimed at an owner, and code guessing spread over flows
/// and addresses. Addresses across 127.0.0.0/8 stand in for distinct clients; the real
/// user is always 127.0.0.1.
extension HostileInputSuite {
    /// The `index`th attacking address (``RawConnection/standIn(_:)``).
    static func attacker(_ index: Int) -> String {
        RawConnection.standIn(index)
    }

    /// `count` requests from the addresses `source(i)`, 4 at a time: their statuses.
    static func flood(
        _ provider: ProviderHarness, count: Int, from source: @escaping @Sendable (Int) -> String,
        _ request: @escaping @Sendable (Int) -> (method: String, target: String, json: JSONValue?)
    ) async -> [Int: Int] {
        await RawConnection.flood(port: provider.port, count: count, parallel: 4, from: source, request)
    }

    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    static func authorizeTarget(hint: String) -> String {
        let hint = hint.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? hint
        return "/authorize?client_id=latchkey-cli&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&response_type=code"
            + "&code_challenge_method=S256&code_challenge=\(challenge)&state=s&login_hint=\(hint)"
    }

    // MARK: Exhaustion

    @Test("10,000 GET /authorize from one address are all answered, and a user at another address still signs in")
    func authorizeFlood() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity("ada").bindURL)
            let tally = await Self.flood(provider, count: 10_000, from: { _ in "127.0.0.2" }) { _ in
                ("GET", Self.authorizeTarget(hint: "ada"), nil)
            }
            #expect(tally == [200: 10_000], "no /authorize may be refused for want of room: \(tally)")
            #expect(try await provider.signIn(embedded).claims?.subject != nil)
        }
    }

    @Test("1,000 transfer starts with a leaked credential ID over 200 addresses; the owner still exports and imports")
    func transferFlood() async throws {
        try await TransferTests.withDevices { devices in
            let credential = devices.credential.id
            let tally = await Self.flood(devices.provider, count: 1000, from: { Self.attacker($0 % 200) }) { _ in
                ("POST", "/v1/transfers", ["credential": .string(credential)])
            }
            #expect(tally == [201: 1000], "\(tally)")
            let export = TransferTests.ExportWatcher(devices.exporter, credential: credential)
            let code = try await export.code()
            let imported = try await devices.importer.importCredential(code: code.displayed, deviceName: "after-flood", issuer: devices.provider.issuer)
            #expect(imported.count == 1)
            #expect(await export.finished().map { (try? $0.get()) != nil } == true)
        }
    }

    @Test("1,000 recovery and 1,000 sign-up starts over 200 addresses; a real recovery and sign-up still succeed")
    func enrollmentFlood() async throws {
        try await ProviderHarness.withVault({ $0.selfRegistration = true }) { provider, vault in
            let (_, bindURL) = try await provider.createIdentity("ada")
            let lost = try TemporaryVault()
            defer { lost.cleanUp() }
            _ = try await lost.embedded(allowing: [provider.host]).registerCredential(from: bindURL)
            let recoveries = await Self.flood(provider, count: 1000, from: { Self.attacker($0 % 200) }) { index in
                ("POST", "/v1/recovery", ["username": "ghost\(index)"])
            }
            let signUps = await Self.flood(provider, count: 1000, from: { Self.attacker($0 % 200) }) { index in
                ("POST", "/v1/signup", ["username": "squatter\(index)"])
            }
            #expect(recoveries == [200: 1000] && signUps == [200: 1000], "\(recoveries) \(signUps)")

            let asked = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: EnrollmentTests.outboxReader(provider, address: "ada@example.com", asked: asked))
            #expect(try await embedded.recover(issuer: provider.issuer, username: "ada").user.name == "ada")
            let newcomer = try vault.embedded(allowing: [provider.host], stepHandler: EnrollmentTests.outboxReader(provider, address: "lin@example.com", asked: asked))
            #expect(try await newcomer.signUp(issuer: provider.issuer, username: "lin", profile: [.givenName: "Lin", .email: "lin@example.com"]).user.name == "lin")
        }
    }

    // MARK: Lock-outs and guessing

    @Test("recovery starts for someone else's name, from many addresses, never block the owner's recovery")
    func recoveryStartsDoNotLockOutOwner() async throws {
        try await ProviderHarness.withVault { provider, vault in
            _ = try await provider.createIdentity("ada")
            let tally = await Self.flood(provider, count: 40, from: { Self.attacker($0 % 8) }) { _ in
                ("POST", "/v1/recovery", ["username": "ada"])
            }
            #expect(tally == [200: 40], "\(tally)")
            let mails = try await provider.outbox().filter { $0.to == "ada@example.com" }
            #expect(mails.count == 1, "40 starts in a minute mail the owner once: \(mails.count)")
            let asked = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: EnrollmentTests.outboxReader(provider, address: "ada@example.com", asked: asked))
            #expect(try await embedded.recover(issuer: provider.issuer, username: "ada").user.name == "ada")
        }
    }

    /// Starts a recovery for `username` from `source`: the code step's submit target.
    static func startRecovery(_ provider: ProviderHarness, _ username: String, from source: String) async throws -> String {
        let (status, started) = try await provider.raw("POST", "/v1/recovery", json: ["username": .string(username)], from: source)
        #expect(status == 200)
        return try #require((started["step"])?["submit"]?.stringValue)
    }

    @Test("short recovery codes guessed across flows and addresses are capped per account; the owner recovers with the long code")
    func recoveryGuessingCapped() async throws {
        try await ProviderHarness.withVault { provider, _ in
            _ = try await provider.createIdentity("ada")
            var refusals: [String] = []
            for round in 0..<4 {
                let submit = try await Self.startRecovery(provider, "ada", from: Self.attacker(round))
                for guess in 0..<3 {
                    let (_, answer) = try await provider.raw("POST", submit, json: ["code": .string(String(format: "%08d", round * 10 + guess))], from: Self.attacker(round))
                    refusals.append(answer["error"]?.stringValue ?? "?")
                }
            }
            #expect(refusals == Array(repeating: "invalid_code", count: 10) + ["slow_down", "slow_down"], "\(refusals)")

            // The owner's right short code is refused too now; the long one from the same mail works.
            let submit = try await Self.startRecovery(provider, "ada", from: "127.0.0.1")
            let mail = try #require(try await provider.outbox().last { $0.to == "ada@example.com" })
            let short = try #require(mail.code)
            let body = mail.body
            let long = try #require(body.split(separator: "\n").last.map(String.init))
            #expect(long.count == 29 && !body.contains("ada@example.com"))
            #expect(try await provider.raw("POST", submit, json: ["code": .string(short)], from: "127.0.0.1").0 == 429)
            let (status, finished) = try await provider.raw("POST", submit, json: ["code": .string(long.lowercased())], from: "127.0.0.1")
            #expect(status == 200 && finished["bindURL"]?.stringValue != nil, "\(finished)")
        }
    }

    @Test("a day's wrong short codes per account are capped (NIST SP 800-63B §5.2.2)")
    func dailyCap() async throws {
        try await ProviderHarness.withVault({
            $0.maximumCodeFailuresPerAccount = 1000
            $0.maximumCodeFailuresPerAccountPerDay = 7
        }) { provider, _ in
            _ = try await provider.createIdentity("ada")
            var statuses: [Int] = []
            for round in 0..<3 {
                let submit = try await Self.startRecovery(provider, "ada", from: Self.attacker(round))
                for guess in 0..<3 {
                    statuses.append(try await provider.raw("POST", submit, json: ["code": .string(String(format: "%08d", round * 10 + guess))], from: Self.attacker(round)).0)
                }
            }
            #expect(statuses == Array(repeating: 400, count: 7) + [429, 429], "\(statuses)")
        }
    }

    @Test("sign-up code guesses for one e-mail address are capped across addresses and usernames")
    func signUpGuessingCapped() async throws {
        try await ProviderHarness.withVault({ $0.selfRegistration = true }) { provider, _ in
            var refusals: [String] = []
            for round in 0..<4 {
                let source = Self.attacker(round)
                let (_, started) = try await provider.raw("POST", "/v1/signup", json: ["username": "mallory\(round)"], from: source)
                let profile = try #require((started["step"])?["submit"]?.stringValue)
                let (_, step) = try await provider.raw("POST", profile, json: ["givenName": "M", "email": "victim@example.com"], from: source)
                let submit = try #require((step["step"])?["submit"]?.stringValue)
                for guess in 0..<3 {
                    let (_, answer) = try await provider.raw("POST", submit, json: ["code": .string(String(format: "%08d", round * 10 + guess))], from: source)
                    refusals.append(answer["error"]?.stringValue ?? "?")
                }
            }
            #expect(refusals == Array(repeating: "invalid_code", count: 10) + ["slow_down", "slow_down"], "\(refusals)")
            // Another address's sign-ups are not affected.
            let (_, started) = try await provider.raw("POST", "/v1/signup", json: ["username": "other"], from: Self.attacker(9))
            let profile = try #require((started["step"])?["submit"]?.stringValue)
            let (_, step) = try await provider.raw("POST", profile, json: ["givenName": "O", "email": "other@example.com"], from: Self.attacker(9))
            let submit = try #require((step["step"])?["submit"]?.stringValue)
            #expect(try await provider.raw("POST", submit, json: ["code": "00000000"], from: Self.attacker(9)).1["error"]?.stringValue == "invalid_code")
        }
    }

    @Test("addresses in one IPv6 /64 share a bucket; another /64 has its own")
    func ipv6Prefixes() async throws {
        try await ProviderHarness.withVault({
            $0.rateLimitPerMinute = 3
            $0.trustedProxies = IPNetwork("127.0.0.0/8").map { [$0] } ?? []
        }) { provider, _ in
            let first = try await Self.tokenStatuses(provider) { "2001:db8:0:7::\($0 + 1)" }
            #expect(first == [400, 400, 400, 429], "four hosts of one /64 are one client: \(first)")
            let other = try await Self.tokenStatuses(provider, count: 1) { _ in "2001:db8:0:8::1" }
            #expect(other == [400], "another /64 is another client")
        }
    }

    // MARK: Enumeration

    /// The `allowCredentials` IDs `/authorize` (JSON) gives a sign-in naming `hint`.
    static func allowedAtAuthorize(_ provider: ProviderHarness, _ hint: String) async throws -> [String] {
        let (_, started) = try await provider.raw("GET", Self.authorizeTarget(hint: hint), from: "127.0.0.1")
        let authenticate = try #require(started["authenticateURL"]?.stringValue)
        let (_, challenge) = try await provider.raw("GET", authenticate, from: "127.0.0.1")
        let options = challenge["publicKey"] ?? challenge
        return (options["allowCredentials"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    /// The `allowCredentials` IDs `/authorize-challenge` gives a sign-in naming `hint`.
    static func allowedAtChallenge(_ provider: ProviderHarness, _ hint: String) async throws -> [String] {
        let request = AuthorizationChallengeRequest(
            clientID: "latchkey-cli", scope: "openid", codeChallenge: challenge, codeChallengeMethod: "S256", loginHint: hint
        )
        let (status, answer) = try await RawConnection.open(port: provider.port).exchange("POST", "/" + ProtocolPath.authorizationChallenge, form: request.formItems)
        try #require(status == 403, "\(answer)")
        return (answer["webauthn"]?["allowCredentials"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    /// Red team, milestone 3 (medium): an unknown name got one decoy ID, a user with two
    /// passkeys two, one with more than 16 an empty list.
    @Test("login_hint answers every name alike: 16 credential IDs, sorted, of authenticators' lengths, for no account, one passkey, two or seventeen, at /authorize and /authorize-challenge")
    func loginHintShape() async throws {
        try await ProviderHarness.withVault { provider, vault in
            // A vault holds one credential per account, so each passkey has a vault of its own.
            var real = Set<String>()
            for (name, count) in [("solo", 1), ("pair", 2), ("many", 17)] {
                let (identity, first) = try await provider.createIdentity(name)
                for index in 0..<count {
                    let device = index == 0 ? vault : try TemporaryVault()
                    defer { if index > 0 { device.cleanUp() } }
                    let embedded = try device.embedded(allowing: [provider.host])
                    let credential = try await embedded.registerCredential(from: index == 0 ? first : try await provider.bindURL(for: identity))
                    real.insert(credential.credential.id)
                }
            }
            try #require(real.count == 20)
            for hint in ["nobody", "solo", "pair", "many"] {
                let atAuthorize = try await Self.allowedAtAuthorize(provider, hint)
                let atChallenge = try await Self.allowedAtChallenge(provider, hint)
                #expect(atAuthorize == atChallenge, "\(hint): both doors answer alike")
                #expect(atAuthorize.count == 16, "\(hint): \(atAuthorize.count) IDs")
                let bytes = try atAuthorize.map { try Base64URL.decode($0) }
                #expect(bytes == bytes.sorted { $0.lexicographicallyPrecedes($1) }, "\(hint): in byte order, so no place tells")
                #expect(bytes.allSatisfy { [16, 32, 48, 64].contains($0.count) }, "\(hint): \(bytes.map(\.count))")
                let listedReal = Set(atAuthorize).intersection(real).count
                #expect(listedReal == ["nobody": 0, "solo": 1, "pair": 2, "many": 16][hint], "\(hint): \(listedReal) real IDs among the 16")
            }
            #expect(try await Self.allowedAtAuthorize(provider, "pair") == (try await Self.allowedAtAuthorize(provider, "pair")), "asked again, the same list")
        }
    }

    @Test("a login_hint naming an account with passkeys cannot be told from an unknown one by /authorize's timing (rank-sum |z| < 3)")
    func loginHintTiming() async throws {
        try await ProviderHarness.withVault({ $0.rateLimitPerMinute = 1_000_000 }) { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity("known").bindURL)
            let transport = HTTP1Transport()
            let scores = try await Self.timingRounds { round, index, isKnown in
                let target = Self.authorizeTarget(hint: isKnown ? "known" : "ghost-\(round)-\(index)")
                return try await transport.send(TransportRequest(
                    method: "GET", url: try #require(URL(string: provider.issuer.absoluteString + target)), headers: ["Accept": "application/json"]
                )).status
            }
            #expect(scores.contains { abs($0) < 3 }, "rank-sum z of a known against unknown names, by round: \(scores)")
            print("login_hint timing: rank-sum z by round \(scores.map { String(format: "%.2f", $0) })")
        }
    }

    @Test("login_hint decoys are keyed on the normalised name: NOBODY and nobody get the same decoys")
    func decoysNormalised() async throws {
        try await ProviderHarness.withVault { provider, _ in
            func allowed(_ hint: String) async throws -> [String] {
                try await Self.allowedAtAuthorize(provider, hint)
            }
            let lower = try await allowed("nobody")
            #expect(lower.count == 16)
            #expect(try await allowed("NOBODY") == lower)
            #expect(try await allowed("ｎｏｂｏｄｙ") == lower)
            #expect(try await allowed("somebody-else") != lower)
        }
    }
}

extension ProviderHarness {
    /// One request from `source` (any address in 127.0.0.0/8) over its own connection;
    /// `target` is a path with its query or a URL on this provider.
    func raw(_ method: String, _ target: String, json: JSONValue? = nil, from source: String) async throws -> (Int, JSONValue) {
        var path = target
        if target.hasPrefix("http"), let components = URLComponents(string: target) {
            path = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
        return try await RawConnection.open(port: port, source: source).exchange(method, path, json: json)
    }
}
