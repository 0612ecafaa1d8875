import LatchkeyOAuth
import Testing

/// ``ResourceIndicator`` (RFC 8707 §2): what is taken, its canonical form, and each refusal.
@Suite("OAuth: resource indicators")
struct ResourceIndicatorTests {
    @Test("equal spellings of one resource have one canonical form", arguments: [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("HTTPS://MCP.Example.COM/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/", "https://mcp.example.com"),
        ("https://mcp.example.com:8443/Path/A", "https://mcp.example.com:8443/Path/A"),
        ("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"),
        ("http://localhost:80/mcp", "http://localhost/mcp"),
        ("http://[::1]:9/x", "http://[::1]:9/x"),
        // Another path, not another spelling (RFC 3986 §6.2.3 leaves these apart).
        ("https://mcp.example.com/mcp/", "https://mcp.example.com/mcp/"),
    ])
    func canonical(text: String, expected: String) throws {
        #expect(try ResourceIndicator(text).uri == expected)
    }

    @Test("each malformed or unsafe resource is refused with its reason", arguments: [
        ("", ResourceIndicator.Refusal.characters), ("https://x.example/a b", .characters), ("https://x.example/é", .characters),
        ("https://x.example/mcp#f", .fragmentOrQuery), ("https://x.example/mcp?a=1", .fragmentOrQuery),
        ("x.example/mcp", .notAbsolute), ("https://", .notAbsolute), ("urn:example:mcp", .notAbsolute),
        ("http://x.example/mcp", .scheme), ("ftp://x.example/mcp", .scheme), ("file:///etc/passwd", .notAbsolute),
        ("https://user:pass@x.example/mcp", .userInformation), ("https://" + String(repeating: "a", count: 600), .tooLong),
    ])
    func refused(text: String, refusal: ResourceIndicator.Refusal) {
        #expect(throws: refusal) { _ = try ResourceIndicator(text) }
    }
}
