import Foundation
@testable import Latchkey
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyCrypto
import LatchkeyWebAuthn
import Synchronization
import Testing

/// The device authorization grant (RFC 8628) through the facade on both sides, and the
/// abuse cases of issue 31 against the reference provider over real HTTP: polling too
/// fast, expired codes, approving twice, guessing user codes, approving without an
/// assertion of this code, too many live codes, another client's device code.
@Suite("Device grant: sign-in by code, approval by passkey, and their abuse")
struct DeviceGrantTests {
    /// A provider with fast device codes, a vault bound to identity `ada` (the approver)
    /// and an empty one (the device).
    static func withDevices(
        _ configure: @escaping @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ProviderHarness, Embedded, Embedded) async throws -> Void
    ) async throws {
        try await ProviderHarness.withVault({ configuration in
            configuration.deviceCodeInterval = 1
            configure(&configuration)
        }) { provider, approverVault in
            let approver = try approverVault.embedded(allowing: [provider.host])
            _ = try await approver.registerCredential(from: try await provider.createIdentity().bindURL)
            let deviceVault = try TemporaryVault()
            defer { deviceVault.cleanUp() }
            try await body(provider, approver, try deviceVault.embedded(allowing: [provider.host]))
        }
    }

    /// A raw form POST: status and the OAuth error code.
    static func post(_ provider: ProviderHarness, _ path: String, _ items: [(String, String)]) async throws -> (Int, String?, JSONValue?) {
        let response = try await URLSessionTransport().send(TransportRequest(
            method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(path),
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: FormEncoding.encode(items)
        ))
        let body = try? JSONValue(json: response.body)
        return (response.status, body?["error"]?.stringValue, body)
    }

    /// A raw user-code lookup's status.
    static func lookup(_ provider: ProviderHarness, _ code: String) async throws -> Int {
        try await URLSessionTransport().send(TransportRequest(
            method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.deviceApproval),
            headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(DeviceApprovalExchange.Lookup(userCode: code))
        )).status
    }

    static func startDevice(_ provider: ProviderHarness, clientID: String = "latchkey-cli") async throws -> DeviceAuthorizationResponse {
        let (status, error, body) = try await post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: clientID, scope: "openid profile").formItems)
        try #require(status == 200, "\(error ?? "-")")
        return try JSONDecoder().decode(DeviceAuthorizationResponse.self, from: try #require(body).json())
    }

    static func poll(_ provider: ProviderHarness, _ deviceCode: String, clientID: String = "latchkey-cli") async throws -> (Int, String?) {
        let (status, error, _) = try await post(provider, ProtocolPath.token, TokenRequest(grantType: .deviceCode, clientID: clientID, deviceCode: deviceCode).formItems)
        return (status, error)
    }

    @Test("the facade: code event, pending polls, approval by the other vault's passkey, validated tokens kept and reused, DPoP-bound on request")
    func signInByCode() async throws {
        try await Self.withDevices { provider, approver, device in
            let metadata = try await provider.oauthClient().metadata()
            #expect(metadata.deviceAuthorizationEndpoint == provider.issuer.appendingPathComponent(ProtocolPath.deviceAuthorization))
            #expect(metadata.grantTypesSupported?.contains(GrantType.deviceCode.rawValue) == true)

            var pending = 0
            var tokens: Tokens?
            for try await event in device.deviceAuthorization(issuer: provider.issuer, clientID: "latchkey-cli", scopes: ["openid", "profile"], dpop: true) {
                switch event {
                case .code(let prompt):
                    #expect(DeviceUserCode.normalise(prompt.userCode) != nil && prompt.interval == 1)
                    #expect(prompt.verificationURIComplete?.absoluteString.contains(prompt.userCode) == true)
                    let shown = Mutex<DeviceApprovalRequest?>(nil)
                    Task {
                        try await Task.sleep(for: .milliseconds(1500))
                        try await approver.approveDevice(issuer: provider.issuer, userCode: prompt.userCode) { request in
                            shown.withLock { $0 = request }
                            return true
                        }
                        let request = try #require(shown.withLock { $0 })
                        #expect(request.clientID == "latchkey-cli" && request.scopes == ["openid", "profile"] && request.requestedFrom == "127.0.0.1")
                    }
                case .pending: pending += 1
                case .slowDown: Issue.record("polled at the interval, never too fast")
                case .signedIn(let received): tokens = received
                }
            }
            let signedIn = try #require(tokens)
            #expect(pending >= 1)
            #expect(signedIn.tokenType == "DPoP" && signedIn.claims?.nonce == nil && signedIn.refreshToken != nil)
            let kept = try await device.validTokens(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid"], proofOfPossession: .dpop)
            #expect(kept.accessToken == signedIn.accessToken, "the device's kept sign-in answers validTokens")
        }
    }

    @Test("polling faster than the interval is slow_down, and the interval grows by 5 s; another client's poll is invalid_grant; a denied code is access_denied")
    func pollingTooFast() async throws {
        try await Self.withDevices { provider, approver, _ in
            let started = try await Self.startDevice(provider)
            #expect(try await Self.poll(provider, started.deviceCode).1 == "authorization_pending")
            #expect(try await Self.poll(provider, started.deviceCode) == (400, "slow_down"))
            try await Task.sleep(for: .milliseconds(1200))
            #expect(try await Self.poll(provider, started.deviceCode).1 == "slow_down", "the interval is 6 s now")
            #expect(try await Self.poll(provider, started.deviceCode, clientID: "someone-else").1 == "invalid_client")
            let registered = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "tv-app", grantTypes: [GrantType.deviceCode.rawValue]))
            try #require(registered.status == 201)
            #expect(try await Self.poll(provider, started.deviceCode, clientID: "tv-app").1 == "invalid_grant", "a device code is its client's only")

            try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode, decision: .deny) { _ in true }
            try await Task.sleep(for: .seconds(6))
            #expect(try await Self.poll(provider, started.deviceCode).1 == "access_denied")
        }
    }

    @Test("an expired code: the poll is expired_token and the code can no longer be approved")
    func expired() async throws {
        try await Self.withDevices({ $0.deviceCodeLifetime = 2 }) { provider, approver, _ in
            let started = try await Self.startDevice(provider)
            try await Task.sleep(for: .milliseconds(2200))
            #expect(try await Self.poll(provider, started.deviceCode).1 == "expired_token")
            let refused = await #expect(throws: LatchkeyError.self) {
                try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true }
            }
            #expect(refused?.providerError?.error == .invalidCode)
        }
    }

    @Test("a code is decided once: approving twice is refused, and the device's tokens come once")
    func approvingTwice() async throws {
        try await Self.withDevices { provider, approver, _ in
            let started = try await Self.startDevice(provider)
            try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true }
            await #expect(throws: LatchkeyError.self) { try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true } }
            #expect(try await Self.poll(provider, started.deviceCode).0 == 200)
            #expect(try await Self.poll(provider, started.deviceCode).1 == "invalid_grant", "tokens once only")
        }
    }

    @Test("guessing user codes: wrong entries are counted per address; past the limit even the right code is refused")
    func guessing() async throws {
        try await Self.withDevices({ $0.maximumUserCodeFailuresPerAddress = 3 }) { provider, _, _ in
            let started = try await Self.startDevice(provider)
            for guess in ["BCDF-GHJK", "ZZZZ-ZZZZ", "not a code"] {
                #expect(try await Self.lookup(provider, guess) == 400)
            }
            #expect(try await Self.lookup(provider, started.userCode) == 429, "the right code after too many wrong ones")
        }
        try await Self.withDevices({ $0.maximumUserCodeFailures = 2 }) { provider, approver, _ in
            let started = try await Self.startDevice(provider)
            for guess in ["BCDF-GHJK", "ZZZZ-ZZZZ"] {
                await #expect(throws: LatchkeyError.self) { try await approver.approveDevice(issuer: provider.issuer, userCode: guess) { _ in true } }
            }
            let refused = await #expect(throws: LatchkeyError.self) { try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true } }
            #expect(refused?.providerError?.error == .slowDown, "the whole code space is limited too")
        }
    }

    @Test("a decision needs an assertion over this code's own challenge: a session of another code, a forged assertion or a second use are refused, and the code stays pending")
    func approvalNeedsTheAssertion() async throws {
        try await Self.withDevices { provider, approver, _ in
            let first = try await Self.startDevice(provider)
            let second = try await Self.startDevice(provider)
            func lookup(_ code: String) async throws -> DeviceApprovalExchange.Request {
                let response = try await URLSessionTransport().send(TransportRequest(
                    method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.deviceApproval),
                    headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(DeviceApprovalExchange.Lookup(userCode: code))
                ))
                return try JSONDecoder().decode(DeviceApprovalExchange.Request.self, from: response.body)
            }
            let forFirst = try await lookup(first.userCode)
            let forSecond = try await lookup(second.userCode)
            #expect(forFirst.publicKey.challenge != forSecond.publicKey.challenge)
            // A genuine assertion, made over the first code's challenge…
            let origin = try #require(WebOrigin(provider.issuer)).description
            let credentialID = try #require(try await approver.credentials().first).credentialID
            let (assertion, _) = try approver.authenticator.getAssertion(forFirst.publicKey, origin: origin, credentialID: credentialID)
            func decide(_ submit: String, _ body: DeviceApprovalExchange.Decision) async throws -> Int {
                try await URLSessionTransport().send(TransportRequest(
                    method: HTTPMethod.post, url: try #require(URL(string: submit)), headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(body)
                )).status
            }
            // …sent to the second code's session is refused.
            #expect(try await decide(forSecond.submit, .init(decision: .approve, credential: assertion)) == 400)
            // A credential this provider never saw is refused.
            var forged = assertion
            forged.rawId = Base64URLBytes(Data(repeating: 7, count: 32))
            forged.id = Base64URL.encode(forged.rawId.data)
            #expect(try await decide(forFirst.submit, .init(decision: .approve, credential: forged)) == 400)
            #expect(try await Self.poll(provider, second.deviceCode).1 == "authorization_pending")
            // The genuine one where it belongs works once.
            #expect(try await decide(forFirst.submit, .init(decision: .approve, credential: assertion)) == 200)
            #expect(try await decide(forFirst.submit, .init(decision: .approve, credential: assertion)) == 404)
        }
    }

    @Test("live device codes are capped per address: past the cap, device_authorization is refused")
    func liveCodesCapped() async throws {
        try await Self.withDevices({ $0.maximumLiveDeviceCodesPerAddress = 2 }) { provider, _, _ in
            _ = try await Self.startDevice(provider)
            _ = try await Self.startDevice(provider)
            let (status, error, _) = try await Self.post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: "latchkey-cli").formItems)
            #expect(status == 429 && error == "slow_down")
            let (unknown, unknownError, _) = try await Self.post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: "nobody").formItems)
            #expect(unknown == 401 && unknownError == "invalid_client")
        }
    }
}
