import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The provider's side of a host's sign-in (docs/PROTOCOL.md section 13): the
/// `latchkey_pam_login` authorization detail (RFC 9396) is taken only from a client that
/// authenticated, only well-formed, shown to the approver, and its approval gives the
/// host no refresh token.
@Suite("PAM: the provider's authorization details for host sign-ins")
struct PAMProviderTests {
    /// A host client `web-1` registered with a key of its own, and its OAuth client.
    static func host(_ provider: ProviderHarness) async throws -> OAuthClient {
        let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
        let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
        let reply = try await provider.admin.call(AdminAPI.createClient, body: AdminAPI.Client(id: "web-1", jwks: jwks, grantTypes: [GrantType.deviceCode.rawValue]))
        try #require(reply.status == 201)
        return try OAuthClient(configuration: .init(
            issuer: provider.issuer, clientID: "web-1", redirectURI: ProviderHarness.callback, authentication: .privateKeyJWT(signer, audience: .issuer)
        ))
    }

    @Test("refused as invalid_authorization_details: from a client that did not authenticate, another type, two details, not an array, over 4 KiB, a control character in a field", arguments: TestStore.available)
    func hostileDetails(engine: TestStore) async throws {
        try await ProviderHarness.run(engine) { provider in
            let host = try await Self.host(provider)
            let valid = try PAMLoginDetail(service: "sshd", user: "alice", remoteHost: "203.0.113.5").parameter()
            let public_ = try provider.oauthClient()
            let refusedPublic = await #expect(throws: OAuthError.self) { _ = try await public_.deviceAuthorization(authorizationDetails: valid) }
            #expect(refusedPublic?.providerError?.error == .invalidAuthorizationDetails)

            let hostile = [
                #"[{"type":"payment_initiation","service":"sshd","user":"alice"}]"#,
                #"[{"type":"latchkey_pam_login","service":"sshd","user":"alice"},{"type":"latchkey_pam_login","service":"sudo","user":"root"}]"#,
                #"{"type":"latchkey_pam_login","service":"sshd","user":"alice"}"#,
                #"[{"type":"latchkey_pam_login","service":"sshd","user":""# + String(repeating: "a", count: 5000) + #""}]"#,
                #"[{"type":"latchkey_pam_login","service":"sshd","user":"alice","remote_host":"evil\u001b[2J"}]"#,
                #"[{"type":"latchkey_pam_login","service":"sshd"}]"#,
            ]
            for details in hostile {
                let refused = await #expect(throws: OAuthError.self) { _ = try await host.deviceAuthorization(authorizationDetails: details) }
                #expect(refused?.providerError?.error == .invalidAuthorizationDetails, "\(details.prefix(80))")
            }
            // The well-formed one is taken.
            _ = try await host.deviceAuthorization(authorizationDetails: valid)
        }
    }

    @Test("the approver sees the host sign-in; its approval gives the host an ID token and an access token, no refresh token", arguments: TestStore.available)
    func approvalGivesNoRefreshToken(engine: TestStore) async throws {
        try await ProviderHarness.run(engine, { $0.deviceCodeInterval = 1 }) { provider in
            let host = try await Self.host(provider)
            let vault = try TemporaryVault()
            let alice = try vault.embedded(allowing: [provider.host])
            _ = try await alice.registerCredential(from: try await provider.createIdentity("alice").bindURL)
            let detail = PAMLoginDetail(service: "sudo", user: "root", tty: "/dev/pts/3")
            let started = Date()
            let authorization = try await host.deviceAuthorization(authorizationDetails: try detail.parameter())
            let approved = try await alice.approveDevice(issuer: provider.issuer, userCode: authorization.userCode) { request in
                request.hostLogin?.user == "root" && request.hostLogin?.service == "sudo" && request.clientID == "web-1"
            }
            #expect(approved, "the approver was shown the host sign-in")
            let tokens = try await host.deviceTokens(for: authorization, issuedAt: started)
            #expect(tokens.refreshToken == nil && tokens.idTokenClaims?.authTime != nil)
            // Redeemed once: a replay of the device code, by this host or by another
            // enrolled host, is refused.
            let replayed = await #expect(throws: OAuthError.self) { _ = try await host.pollDeviceToken(authorization) }
            #expect(replayed?.providerError?.error == .invalidGrant)
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            try #require(try await provider.admin.call(AdminAPI.createClient, body: AdminAPI.Client(id: "web-2", jwks: jwks, grantTypes: [GrantType.deviceCode.rawValue])).status == 201)
            let other = try OAuthClient(configuration: .init(
                issuer: provider.issuer, clientID: "web-2", redirectURI: ProviderHarness.callback, authentication: .privateKeyJWT(signer, audience: .issuer)
            ))
            let stolen = await #expect(throws: OAuthError.self) { _ = try await other.pollDeviceToken(authorization) }
            #expect(stolen?.providerError?.error == .invalidGrant, "another host's code")
            let events = try await provider.auditEvents().filter { $0.type == .pamApproved }
            #expect(events.count == 1 && events.first?.details?.username == "root" && events.first?.details?.service == "sudo")
        }
    }
}
