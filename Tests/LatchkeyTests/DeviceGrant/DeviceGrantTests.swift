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
/// helpers its abuse cases use (`HostileInputSuite+DeviceGrant.swift`).
@Suite("Device grant: sign-in by code, approval by passkey, and their abuse")
struct DeviceGrantTests {
    /// A provider with fast device codes, a vault bound to identity `ada` (the approver)
    /// and an empty one (the device).
    static func withDevices(
        engine: TestStore? = nil,
        _ configure: @escaping @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ProviderHarness, Embedded, Embedded) async throws -> Void
    ) async throws {
        try await ProviderHarness.withVault(engine: engine, { configuration in
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
        let response = try await HTTPExchange.form(provider.issuer.appendingPathComponent(path), items)
        return (response.status, response.errorCode, try? JSONValue(json: response.body))
    }

    /// A raw user-code lookup's status.
    static func lookup(_ provider: ProviderHarness, _ code: String) async throws -> Int {
        try await HTTPExchange.json(
            provider.issuer.appendingPathComponent(ProtocolPath.deviceApproval), encoding: DeviceApprovalExchange.Lookup(userCode: code)
        ).status
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

    @Test("the facade: code event, pending polls, approval by the other vault's passkey, validated tokens kept and reused, DPoP-bound on request", arguments: TestStore.available)
    func signInByCode(engine: TestStore) async throws {
        try await Self.withDevices(engine: engine) { provider, approver, device in
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
            // The approval and the device's tokens, each its own audit event.
            let events = try await provider.auditEvents()
            let approved = try #require(events.first { $0.type == .deviceApproved }, "\(events.map(\.type))")
            #expect(approved.client == "latchkey-cli" && approved.actor.kind == .identity && approved.subject == approved.actor.id)
            #expect(approved.details?.scope == "openid profile")
            let issued = events.filter { $0.type == .tokenIssued && $0.details?.grantType == GrantType.deviceCode.rawValue }
            #expect(issued.count == 1 && issued.first?.subject == approved.subject && issued.first?.actor == .client("latchkey-cli"))
            #expect(signedIn.tokenType == "DPoP" && signedIn.claims?.nonce == nil && signedIn.refreshToken != nil)
            let kept = try await device.validTokens(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid"], proofOfPossession: .dpop)
            #expect(kept.accessToken == signedIn.accessToken, "the device's kept sign-in answers validTokens")
            // Near expiry (here: asked to last longer than they do), they are refreshed with
            // a proof of the same key, and kept again.
            let refreshed = try await device.validTokens(
                issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid"],
                proofOfPossession: .dpop, minimumValidity: 100_000
            )
            #expect(refreshed.accessToken != signedIn.accessToken && refreshed.tokenType == "DPoP")
            let again = try await device.validTokens(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid"], proofOfPossession: .dpop)
            #expect(again.accessToken == refreshed.accessToken, "the refreshed tokens were kept")
        }
    }
}
