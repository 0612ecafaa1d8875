import Foundation
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// A service's client key in the vault, registered at the reference provider, getting
/// tokens with `private_key_jwt` (RFC 7523) through the facade.
@Suite("Embedded: client keys and client credentials")
struct ClientKeyTests {
    @Test("made once, shown after, deleted; its JWK Set registers the client and its tokens follow")
    func clientCredentials() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            #expect(try embedded.existingClientKey(issuer: provider.issuer, clientID: "svc") == nil)
            let key = try await embedded.clientKey(issuer: provider.issuer, clientID: "svc")
            #expect(try await embedded.clientKey(issuer: provider.issuer, clientID: "svc") == key)
            #expect(key.keyProtection == .software)
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: key.publicJWKSet)
            #expect(jwks.keys.map(\.kid) == [key.keyID])

            // Before registration the provider refuses the client.
            await #expect(throws: LatchkeyError.self) { _ = try await embedded.clientCredentials(issuer: provider.issuer, clientID: "svc") }
            let reply = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "svc", jwks: jwks, grantTypes: ["client_credentials"], scopes: ["jobs"]))
            try #require(reply.status == 201)
            let tokens = try await embedded.clientCredentials(issuer: provider.issuer, clientID: "svc", scopes: ["jobs"], dpop: true)
            #expect(tokens.tokenType == "DPoP" && tokens.tokenSet.scope == "jobs" && tokens.idToken == nil)

            #expect(try embedded.deleteClientKey(issuer: provider.issuer, clientID: "svc"))
            #expect(try embedded.existingClientKey(issuer: provider.issuer, clientID: "svc") == nil)
            let missing = await #expect(throws: LatchkeyError.self) { _ = try await embedded.clientCredentials(issuer: provider.issuer, clientID: "svc") }
            #expect(missing?.code == .clientKeyMissing)
        }
    }

    @Test("a client key is never offered to a provider outside the allowed domains")
    func allowedDomains() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: ["example.com"])
            let refused = await #expect(throws: LatchkeyError.self) { _ = try await embedded.clientKey(issuer: provider.issuer, clientID: "svc") }
            #expect(refused?.code == .domainNotAllowed)
        }
    }
}
