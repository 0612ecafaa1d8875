import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The authorization challenge endpoint abused (docs/SECURITY.md, "First-party apps"):
/// DPoP proofs presented twice.
extension HostileInputSuite {
    /// A form POST to `/authorize-challenge` with `headers`: status and error code.
    static func challengePost(_ provider: ProviderHarness, _ items: [(String, String)], headers: [String: String]) async throws -> (Int, JSONValue) {
        let response = try await HTTPExchange.form(provider.issuer.appendingPathComponent(ProtocolPath.authorizationChallenge), items, headers: headers)
        return (response.status, response.json)
    }

    /// Red team, milestone 3 (low): the proof that bound an `auth_session` was not spent,
    /// and the same proof was accepted again (RFC 9449 §11.1).
    @Test("every DPoP proof /authorize-challenge accepts is spent: the one that bound a session, and one that asked for its options again, are refused when replayed")
    func challengeProofReplayed() async throws {
        try await ProviderHarness.run { provider in
            let key = try DPoPSigner(key: SigningKey.generate(.es256))
            let url = provider.issuer.appendingPathComponent(ProtocolPath.authorizationChallenge)
            let start = AuthorizationChallengeRequest(clientID: "latchkey-cli", scope: "openid", codeChallenge: Self.challenge, codeChallengeMethod: "S256").formItems
            let binding = try key.headers(method: HTTPMethod.post, url: url)
            let (status, first) = try await Self.challengePost(provider, start, headers: binding)
            #expect(status == 403 && first["error"]?.stringValue == "insufficient_authorization", "\(first)")
            let (replayed, replayError) = try await Self.challengePost(provider, start, headers: binding)
            #expect(replayed == 400 && replayError["error"]?.stringValue == "invalid_dpop_proof", "the binding proof again: \(replayed) \(replayError)")

            let session = try #require(first["auth_session"]?.stringValue)
            let again = AuthorizationChallengeRequest(clientID: "latchkey-cli", authSession: session).formItems
            let asking = try key.headers(method: HTTPMethod.post, url: url)
            #expect(try await Self.challengePost(provider, again, headers: asking).0 == 403)
            let (askedTwice, askedError) = try await Self.challengePost(provider, again, headers: asking)
            #expect(askedTwice == 400 && askedError["error"]?.stringValue == "invalid_dpop_proof", "\(askedTwice) \(askedError)")
            // A fresh proof of the same key still gets the session's options.
            #expect(try await Self.challengePost(provider, again, headers: try key.headers(method: HTTPMethod.post, url: url)).0 == 403)
        }
    }
}
