import Foundation
import LatchkeyOAuth
@testable import LatchkeyOAuth
import Testing

/// Discovery's endpoints must be on the issuer's origin, or https and allowed by the
/// configuration (docs/SECURITY.md, "Links and providers").
@Suite("Discovery endpoints and the issuer's origin")
struct DiscoveryOriginTests {
    static func document(_ issuer: String, _ replaced: [String: String] = [:]) -> Data {
        var members = [
            "issuer": issuer, "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
            "jwks_uri": "\(issuer)/jwks", "userinfo_endpoint": "\(issuer)/userinfo", "revocation_endpoint": "\(issuer)/revoke",
        ]
        members.merge(replaced) { $1 }
        return (try? JSONEncoder().encode(members)) ?? Data()
    }

    @Test("endpoints on the issuer's origin are accepted, spelled with the default port or another case")
    func sameOrigin() throws {
        let issuer = try #require(URL(string: "https://id.example.com"))
        _ = try ProviderMetadata.parse(Self.document("https://id.example.com", ["jwks_uri": "https://ID.example.com:443/keys"]), issuer: issuer)
    }

    @Test("each endpoint off the issuer's origin is refused by default", arguments: [
        "authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint", "revocation_endpoint",
    ])
    func foreign(_ member: String) throws {
        let issuer = try #require(URL(string: "https://id.example.com"))
        for elsewhere in ["https://evil.example/x", "https://id.example.com:8443/x", "https://keys.id.example.com/x"] {
            #expect(throws: OAuthError.endpointOutsideIssuer(reason: "")) {
                _ = try ProviderMetadata.parse(Self.document("https://id.example.com", [member: elsewhere]), issuer: issuer)
            }
        }
    }

    @Test("an https endpoint the configuration allows is accepted; plain http elsewhere never is")
    func allowed() throws {
        let issuer = try #require(URL(string: "https://id.example.com"))
        let allowExample: @Sendable (URL) -> Bool = { $0.host?.hasSuffix("example.com") == true }
        _ = try ProviderMetadata.parse(Self.document("https://id.example.com", ["jwks_uri": "https://keys.example.com/jwks"]), issuer: issuer, allowingForeign: allowExample)
        let loopback = try #require(URL(string: "http://127.0.0.1:8080"))
        #expect(throws: OAuthError.endpointOutsideIssuer(reason: "")) {
            _ = try ProviderMetadata.parse(Self.document("http://127.0.0.1:8080", ["token_endpoint": "http://127.0.0.1:9090/token"]), issuer: loopback, allowingForeign: { _ in true })
        }
    }
}
