import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing
import LatchkeyIdP

/// Errors from the layers below reach the app as ``LatchkeyError``s with their own code,
/// the original kept whole in `underlying` and the place it arose in `file` and `line`.
@Suite("Embedded: errors keep their cause")
struct ErrorWrappingTests {
    @Test("a CryptoError raised during a flow surfaces with the crypto code, kept whole, with its origin")
    func cryptoErrorThroughEmbedded() async throws {
        try await ProviderHarness.withVault({ $0.requireEmailCodeForBinding = true }) { provider, vault in
            // The app's step handler fails in a cryptographic operation of its own.
            let raised = CryptoError.invalidKey(reason: "the app's key is not on the curve")
            let embedded = try vault.embedded(allowing: [provider.host]) { _ in throw raised }
            let (_, bindURL) = try await provider.createIdentity()
            let error = try #require(await #expect(throws: LatchkeyError.self) { try await embedded.registerCredential(from: bindURL) })
            #expect(error.code == .crypto)
            let underlying = try #require(error.underlying as? CryptoError)
            #expect(underlying.code == .invalidKey && underlying.reason == raised.reason)
            #expect(error.file == raised.file && error.line == raised.line, "where it arose, not where it was wrapped")
            #expect(error.description.contains("caused by CryptoError.invalidKey"))
            #expect(try await embedded.credentials().isEmpty, "nothing half-bound stays")
        }
    }

    @Test("an OAuth error keeps its origin and its cause")
    func oauthErrorKeepsCause() async throws {
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        // A closed port: the transport fails with OAuthError.network.
        let embedded = try vault.embedded(allowing: ["127.0.0.1"])
        let issuer = try #require(URL(string: "http://127.0.0.1:9"))
        let error = try #require(await #expect(throws: LatchkeyError.self) {
            _ = try await embedded.authenticate(issuer: issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback)
        })
        #expect(error.code == .network)
        let underlying = try #require(error.underlying as? OAuthError)
        #expect(underlying.code == .network)
        #expect(error.file == underlying.file && error.line == underlying.line)
    }
}
