import Foundation
import LatchkeyOAuth
import Testing

/// RFC 9728 on the client: the challenge that points to a resource's metadata (§5.1,
/// RFC 9110 §11.6.1 syntax) and the metadata's own checks (§3.1, §3.3).
@Suite("Protected resource metadata (RFC 9728) and WWW-Authenticate challenges")
struct ProtectedResourceMetadataTests {
    @Test("challenges: parameters, quoted strings with escapes, several challenges, token68; hostile headers read as nothing")
    func challenges() {
        let parsed = AuthenticationChallenge.parse(#"Bearer realm="mcp", error="invalid_token", error_description="a \"quoted\" word", resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256 EdDSA""#)
        #expect(parsed.count == 2)
        #expect(parsed.first?.scheme == "bearer" && parsed.first?.error == "invalid_token")
        #expect(parsed.first?.parameters["error_description"] == #"a "quoted" word"#)
        #expect(parsed.first?.resourceMetadata == "https://r.example/.well-known/oauth-protected-resource/mcp")
        #expect(parsed.last?.scheme == "dpop" && parsed.last?.parameters["algs"] == "ES256 EdDSA")
        #expect(AuthenticationChallenge.parse("Basic dXNlcjpwYXNz==").first?.token68 == "dXNlcjpwYXNz==")
        #expect(AuthenticationChallenge.parse("Negotiate abc, Bearer scope=read").map(\.scheme) == ["negotiate", "bearer"])
        #expect(AuthenticationChallenge.parse("Bearer SCOPE=\"a b\"").first?.scope == "a b", "names are case-insensitive")

        // A parameter named twice drops the challenge (RFC 9110 §11.2).
        #expect(AuthenticationChallenge.parse(#"Bearer resource_metadata="https://a.example/x", resource_metadata="https://b.example/x""#).isEmpty)
        // Unterminated, control characters, too long, too many parameters.
        #expect(AuthenticationChallenge.parse(#"Bearer resource_metadata="https://a.example"#).isEmpty)
        #expect(AuthenticationChallenge.parse("Bearer realm=\"a\u{1}b\"").isEmpty)
        #expect(AuthenticationChallenge.parse("Bearer realm=\"" + String(repeating: "a", count: 9000) + "\"").isEmpty)
        let many = (0..<40).map { "p\($0)=v" }.joined(separator: ", ")
        #expect(AuthenticationChallenge.parse("Bearer " + many).isEmpty)
        #expect(AuthenticationChallenge.parse("").isEmpty && AuthenticationChallenge.parse(", ,").isEmpty)
    }

    @Test("the well-known URL goes between the host and the path (§3.1)")
    func wellKnown() throws {
        let cases = [
            ("https://r.example/mcp", "https://r.example/.well-known/oauth-protected-resource/mcp"),
            ("https://r.example", "https://r.example/.well-known/oauth-protected-resource"),
            ("https://R.example:443/", "https://r.example/.well-known/oauth-protected-resource"),
            ("http://127.0.0.1:8080/a/b", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b"),
        ]
        for (resource, expected) in cases {
            #expect(ProtectedResourceMetadata.wellKnownURL(for: try ResourceIndicator(resource))?.absoluteString == expected, "\(resource)")
        }
    }

    @Test("the metadata must describe the URL called (§3.3) and name issuers over https; sizes are bounded")
    func parse() throws {
        func document(_ members: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: members) }
        let called = try #require(URL(string: "https://r.example/mcp/tools?x=1"))
        let good = try ProtectedResourceMetadata.parse(
            try document(["resource": "https://r.example/mcp", "authorization_servers": ["https://id.example"], "scopes_supported": ["tools"], "extra": true]), for: called
        )
        #expect(good.resource.uri == "https://r.example/mcp" && good.authorizationServers == ["https://id.example"] && good.scopesSupported == ["tools"])
        #expect(good.covers(try #require(URL(string: "https://r.example/mcp"))))
        #expect(!good.covers(try #require(URL(string: "https://r.example/mcpx"))))
        #expect(!good.covers(try #require(URL(string: "https://r.example:8443/mcp"))))
        #expect(!good.covers(try #require(URL(string: "http://r.example/mcp"))))

        let refusals: [(String, Data, OAuthError.Code)] = [
            ("another resource", try document(["resource": "https://r.example/other", "authorization_servers": ["https://id.example"]]), .resourceMetadataMismatch),
            ("another host", try document(["resource": "https://evil.example/mcp"]), .resourceMetadataMismatch),
            ("no resource", try document(["authorization_servers": ["https://id.example"]]), .malformedResponse),
            ("a resource with a query", try document(["resource": "https://r.example/mcp?a=b"]), .resourceMetadataMismatch),
            ("an issuer over http", try document(["resource": "https://r.example/mcp", "authorization_servers": ["http://id.example"]]), .insecureTransport),
            ("too many issuers", try document(["resource": "https://r.example/mcp", "authorization_servers": (0..<40).map { "https://id\($0).example" }]), .malformedResponse),
            ("a scope with a space", try document(["resource": "https://r.example/mcp", "scopes_supported": ["a b"]]), .malformedResponse),
            ("too big", Data(repeating: 0x20, count: 70 * 1024), .responseTooLarge),
            ("not JSON", Data("<html>".utf8), .malformedResponse),
        ]
        for (name, data, code) in refusals {
            #expect(throws: OAuthError.self, "\(name)") { try ProtectedResourceMetadata.parse(data, for: called) }
            do {
                _ = try ProtectedResourceMetadata.parse(data, for: called)
            } catch let error as OAuthError {
                #expect(error.code == code, "\(name): \(error)")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }
}
