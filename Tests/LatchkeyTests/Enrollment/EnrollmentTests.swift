import Foundation
import Latchkey
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// Self-service sign-up and account recovery against the in-process provider.
@Suite("Sign-up and recovery")
struct EnrollmentTests {
    /// A step handler that answers verify-code from the outbox (the newest code sent to
    /// `address`), and records every step it was asked.
    static func outboxReader(_ provider: ProviderHarness, address: String, asked: CallCounter<FlowStep>, wrongFirst: Bool = false, profile: [String: String] = [:]) -> Embedded.StepHandler {
        { step in
            asked.record(step)
            switch step.name {
            case .verifyCode:
                if wrongFirst, step.attempt == 1 { return .code("000000x") }
                return .code(try await provider.outboxCode(to: address))
            case .enrollProfile:
                return StepAnswer(fields: profile)
            default:
                throw CancellationError()
            }
        }
    }

    @Test("sign-up with every field given: only the code is asked; the new identity signs in", arguments: TestStore.available)
    func signUpAllFields(engine: TestStore) async throws {
        try await ProviderHarness.withVault(engine: engine, { $0.selfRegistration = true }) { provider, vault in
            let asked = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: Self.outboxReader(provider, address: "grace@example.com", asked: asked))
            let credential = try await embedded.signUp(issuer: provider.issuer, username: "grace", profile: [
                .givenName: "Grace", .familyName: "Hopper", .email: "grace@example.com",
            ])
            #expect(credential.user.name == "grace" && credential.user.displayName == "Grace Hopper")
            #expect(asked.values.map(\.name) == [.verifyCode])
            let tokens = try await provider.signIn(embedded)
            let info = try await provider.oauthClient().userInfo(accessToken: tokens.accessToken, expectedSubject: tokens.claims?.subject)
            #expect(info["email"]?.stringValue == "grace@example.com" && info["preferred_username"]?.stringValue == "grace")
            // The sign-up, then its first credential: one event each, by the new identity.
            let events = try await provider.auditEvents().filter { [.signUpCompleted, .credentialRegistered].contains($0.type) }
            #expect(events.map(\.type) == [.signUpCompleted, .credentialRegistered], "\(events.map(\.type))")
            #expect(events.first?.details?.username == "grace" && events.first?.subject == tokens.claims?.subject)
            #expect(events.allSatisfy { $0.actor == .identity(tokens.claims?.subject ?? "") })
        }
    }

    @Test("sign-up with a missing required field asks the step handler; a wrong code, then the right one")
    func signUpMissingField() async throws {
        try await ProviderHarness.withVault({ $0.selfRegistration = true }) { provider, vault in
            let asked = CallCounter<FlowStep>()
            let handler = Self.outboxReader(provider, address: "alan@example.com", asked: asked, wrongFirst: true, profile: ["email": "alan@example.com"])
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: handler)
            let credential = try await embedded.signUp(issuer: provider.issuer, username: "alan", profile: [.givenName: "Alan"])
            #expect(credential.user.displayName == "Alan")
            let steps = asked.values
            #expect(steps.map(\.name) == [.enrollProfile, .verifyCode, .verifyCode])
            #expect(steps.first?.values == ["givenName": "Alan"])
            #expect(steps.first?.fields.filter(\.required).map(\.name) == ["givenName", "email"])
            #expect(steps.last?.attempt == 2 && steps.last?.previousError?.contains("wrong code") == true)
        }
    }

    @Test("sign-up is refused when the policy is off")
    func signUpOff() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let error = await #expect(throws: LatchkeyError.self) {
                try await embedded.signUp(issuer: provider.issuer, username: "eve", profile: [.givenName: "Eve", .email: "eve@example.com"])
            }
            #expect(error?.code == .providerError && error?.providerError?.error == .accessDenied)
        }
    }

    @Test("recovery binds a new credential and revokes the old ones, on this device and others", arguments: TestStore.available)
    func recovery(engine: TestStore) async throws {
        let lostDevice = try TemporaryVault()
        defer { lostDevice.cleanUp() }
        try await ProviderHarness.withVault(engine: engine) { provider, vault in
            let old = try lostDevice.embedded(allowing: [provider.host])
            let (identity, bindURL) = try await provider.createIdentity("ada")
            _ = try await old.registerCredential(from: bindURL)

            let asked = CallCounter<FlowStep>()
            let newDevice = try vault.embedded(allowing: [provider.host], stepHandler: Self.outboxReader(provider, address: "ada@example.com", asked: asked))
            let recovered = try await newDevice.recover(issuer: provider.issuer, username: "ada")
            #expect(recovered.user.name == "ada" && asked.values.map(\.name) == [.verifyCode])
            #expect(try await provider.signIn(newDevice).claims?.subject == identity)
            let recoveries = try await provider.auditEvents().filter { $0.type == .recoveryCompleted }
            #expect(recoveries.count == 1 && recoveries.first?.subject == identity && recoveries.first?.details?.credential == recovered.id)

            let refused = await #expect(throws: LatchkeyError.self) { try await provider.signIn(old) }
            #expect(refused?.code == .credentialRevoked)

            // Recovering on a device that still holds the (now revoked) credential works,
            // and marks the old one revoked locally.
            let again = try await newDevice.recover(issuer: provider.issuer, username: "ada")
            let states = try await newDevice.credentials().map { ($0.id, $0.state) }
            #expect(states.contains { $0 == (again.id, .active) } && states.contains { $0 == (recovered.id, .revoked) })
            #expect(try await provider.signIn(newDevice).claims?.subject == identity)
        }
    }

    @Test("the completion-handler forms run once and the flows publish events")
    func completionHandlersAndEvents() async throws {
        try await ProviderHarness.withVault({ $0.selfRegistration = true }) { provider, vault in
            let asked = CallCounter<FlowStep>()
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: Self.outboxReader(provider, address: "lin@example.com", asked: asked))
            let events = embedded.events()
            let signedUp = CallCounter<Result<Credential, LatchkeyError>>()
            embedded.signUp(issuer: provider.issuer, username: "lin", profile: [.givenName: "Lin", .email: "lin@example.com"]) { signedUp.record($0) }
            var kinds: [String] = []
            for await event in events {
                switch event.kind {
                case .started: kinds.append("started")
                case .stepRequested(let name): kinds.append("step:\(name)")
                case .credentialRegistered: kinds.append("registered")
                case .completed: kinds.append("completed")
                default: continue
                }
                if kinds.last == "completed" { break }
            }
            #expect(kinds == ["started", "step:enroll-profile", "step:verify-code", "registered", "completed"])
            let deadline = Date().addingTimeInterval(10)
            while signedUp.values.isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(100))
            #expect(signedUp.values.count == 1)

            let recovered = CallCounter<Result<Credential, LatchkeyError>>()
            embedded.recover(issuer: provider.issuer, username: "lin") { recovered.record($0) }
            // A deadline of its own: under a loaded CI machine the sign-up may have used
            // most of the first one.
            let recoveryDeadline = Date().addingTimeInterval(60)
            while recovered.values.isEmpty, Date() < recoveryDeadline { try await Task.sleep(for: .milliseconds(20)) }
            switch recovered.values.first {
            case .success(let credential)?: #expect(credential.user.name == "lin")
            case .failure(let error)?: Issue.record("recovery failed: \(error)")
            case nil: Issue.record("recovery did not complete within 60 s")
            }
        }
    }

    @Test("an unknown username gets the same outward answers as a known one")
    func noEnumeration() async throws {
        try await ProviderHarness.withVault({ $0.selfRegistration = true }) { provider, _ in
            _ = try await provider.createIdentity("ada")
            func start(_ username: String) async throws -> (Int, JSONValue) {
                try await provider.post("v1/recovery", ["username": .string(username)])
            }
            let (knownStatus, known) = try await start("ada")
            let (unknownStatus, unknown) = try await start("nobody-here")
            #expect(knownStatus == 200 && unknownStatus == 200)
            let knownStep = try #require(known["step"])
            let unknownStep = try #require(unknown["step"])
            #expect(knownStep["name"]?.stringValue == unknownStep["name"]?.stringValue)
            #expect(knownStep["message"]?.stringValue == unknownStep["message"]?.stringValue)
            #expect(Set(knownStep.objectValue?.keys ?? [:].keys) == Set(unknownStep.objectValue?.keys ?? [:].keys))
            let knownSubmit = try #require((knownStep["submit"]?.stringValue).flatMap(URL.init(string:)))
            let unknownSubmit = try #require((unknownStep["submit"]?.stringValue).flatMap(URL.init(string:)))
            #expect(knownSubmit.path.count == unknownSubmit.path.count)

            let (knownWrong, knownError) = try await provider.post(knownSubmit, ["code": "123456x"])
            let (unknownWrong, unknownError) = try await provider.post(unknownSubmit, ["code": "123456x"])
            #expect(knownWrong == unknownWrong && knownError["error"]?.stringValue == unknownError["error"]?.stringValue)
            #expect(knownError["error_description"]?.stringValue == unknownError["error_description"]?.stringValue)

            // Sign-up with a taken name answers like a free one.
            let (takenStatus, taken) = try await provider.post("v1/signup", ["username": "ada"])
            let (freeStatus, free) = try await provider.post("v1/signup", ["username": "brand-new"])
            #expect(takenStatus == freeStatus && (taken["step"])?["name"]?.stringValue == (free["step"])?["name"]?.stringValue)
        }
    }

    @Test("attempt limits: five wrong codes end a flow; starts are limited per address, never per username")
    func attemptLimits() async throws {
        try await ProviderHarness.withVault({
            $0.maximumEnrollmentStartsPerAddress = 4
        }) { provider, _ in
            _ = try await provider.createIdentity("ada")
            let (_, started) = try await provider.post("v1/recovery", ["username": "ada"])
            let submitText = try #require((started["step"])?["submit"]?.stringValue)
            let submit = try #require(URL(string: submitText))
            var statuses: [String] = []
            for _ in 0..<6 {
                let (_, answer) = try await provider.post(submit, ["code": "nope"])
                statuses.append(answer["error"]?.stringValue ?? "?")
            }
            #expect(statuses == ["invalid_code", "invalid_code", "invalid_code", "invalid_code", "invalid_code", "not_found"])
            // The right code no longer helps this flow: it is gone.
            let code = try await provider.outboxCode(to: "ada@example.com")
            #expect(try await provider.post(submit, ["code": .string(code)]).0 == 404)

            // Per username there is no limit on starts (that would lock the owner out),
            // and a second flow shares the code the first one mailed.
            let (again, second) = try await provider.post("v1/recovery", ["username": "ada"])
            #expect(again == 200)
            let secondText = try #require((second["step"])?["submit"]?.stringValue)
            let secondSubmit = try #require(URL(string: secondText))
            #expect(try await provider.post("v1/recovery", ["username": "ghost"]).0 == 200)
            #expect(try await provider.post("v1/recovery", ["username": "ghost"]).0 == 200)
            // Per address: the fifth start from this address (four were let through) is refused.
            #expect(try await provider.post("v1/recovery", ["username": "ghost"]).0 == 429)
            let (finished, answer) = try await provider.post(secondSubmit, ["code": .string(code)])
            #expect(finished == 200 && answer["bindURL"]?.stringValue != nil, "\(answer)")
        }
    }
}

extension ProviderHarness {
    /// A JSON POST to the provider, without credentials.
    func post(_ path: String, _ body: JSONValue) async throws -> (Int, JSONValue) {
        try await post(issuer.appendingPathComponent(path), body)
    }

    func post(_ url: URL, _ body: JSONValue) async throws -> (Int, JSONValue) {
        let response = try await HTTPExchange.json(url, body)
        return (response.status, response.json)
    }
}
