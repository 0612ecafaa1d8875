import Foundation
@testable import Latchkey
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The facade's choice of sign-in protocol (``SignInFlow``): the authorization challenge
/// endpoint when the provider offers one (draft-ietf-oauth-first-party-apps), the redirect
/// flow when told, both ending in the same kept, DPoP-bound tokens.
@Suite("Embedded: sign-in over the authorization challenge endpoint")
struct ChallengeFlowTests {
    @Test("automatic: the challenge endpoint, no /authorize, DPoP-bound tokens kept; redirect: /authorize and the authenticate URL")
    func flows() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let recording = RecordingTransport()
            let embedded = try vault.embedded(allowing: [provider.host], transport: recording)
            let bound = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            let tokens = try await embedded.authenticate(
                issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid", "profile"], proofOfPossession: .dpop
            )
            #expect(tokens.tokenType == "DPoP" && tokens.credentialID == bound.credential.id)
            let paths = recording.requests.map(\.url.path)
            #expect(paths.filter { $0.hasSuffix("/authorize-challenge") }.count == 2, "\(paths)")
            #expect(!paths.contains { $0.hasSuffix("/authorize") || $0.contains("/v1/authenticate/") }, "\(paths)")
            #expect(recording.requests.filter { $0.url.path.hasSuffix("/authorize-challenge") }.allSatisfy { $0.headers["DPoP"] != nil }, "every challenge request proves the key")
            let kept = try await embedded.validTokens(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, proofOfPossession: .dpop)
            #expect(kept.accessToken == tokens.accessToken)

            let redirectRecording = RecordingTransport()
            let redirect = try vault.embedded(allowing: [provider.host], transport: redirectRecording) { $0.signInFlow = .redirect }
            let viaRedirect = try await redirect.authenticate(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
            #expect(viaRedirect.claims?.subject == tokens.claims?.subject)
            #expect(redirectRecording.requests.contains { $0.url.path.hasSuffix("/authorize") })
            #expect(!redirectRecording.requests.contains { $0.url.path.hasSuffix("/authorize-challenge") })
        }
    }

    /// The `login_hint` of each challenge sign-in's first request, by its form body.
    static func loginHints(_ recording: RecordingTransport) throws -> [String?] {
        try recording.requests.filter { $0.url.path.hasSuffix("/authorize-challenge") }
            .map { try FormEncoding.decode(Substring(decoding: $0.body ?? Data(), as: UTF8.self)) }
            .filter { $0["auth_session"] == nil }
            .map { $0["login_hint"] }
    }

    @Test("login_hint names only a credential the caller named: a bound sign-in that chose its own sends none, and signs with it; one naming a credential sends its user's name")
    func loginHintOnlyWhenNamed() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let recording = RecordingTransport()
            let embedded = try vault.embedded(allowing: [provider.host], transport: recording)
            let bound = try await embedded.registerCredential(from: try await provider.createIdentity("grace").bindURL)
            for proofOfPossession in [ProofOfPossession.dpop, .none] {
                let chosen = try await embedded.authenticate(
                    issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, proofOfPossession: proofOfPossession
                )
                #expect(chosen.credentialID == bound.credential.id)
                let named = try await embedded.authenticate(
                    issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, credential: bound.credential.id,
                    proofOfPossession: proofOfPossession
                )
                #expect(named.credentialID == bound.credential.id)
                #expect(named.claims?.subject == chosen.claims?.subject)
            }
            // Four sign-ins, each one first request: hinted only where the credential was named.
            #expect(try Self.loginHints(recording) == [nil, "grace", nil, "grace"])
        }
    }
}
