import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// URL classification: both link forms, the allowed-domain rule, and hostile links.
@Suite("Embedded: bind and authenticate links")
struct EmbeddedLinkTests {
    /// Whether an `Embedded` allowing `domains` classifies `url` as `kind`.
    static func classifies(_ url: URL, as kind: String, allowing domains: [String]) throws -> Bool {
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let embedded = try vault.embedded(allowing: domains)
        return kind == "bind" ? embedded.isBindURL(url) : embedded.isAuthenticateURL(url)
    }

    static let token = "vOdKvNru0YxTvQP5rWHet6nNuf7s0XhomF3gn-Vrhsk"

    @Test("bind links", arguments: [
        ("https://id.example.com/v1/bind/job1?token=\(token)", true),
        ("https://ID.Example.COM/v1/bind/job1?token=\(token)", true),
        ("https://id.example.com/tenant/v1/bind/job1?token=\(token)", true),
        ("https://example.com./v1/bind/job1?token=\(token)", true),
        ("myapp://bind?api_base_url=https://id.example.com&job_id=job1&token=\(token)", true),
        ("myapp://bind?api_base_url=https%3A%2F%2Fid.example.com%2Ftenant&job_id=job1&token=\(token)", true),
        ("http://127.0.0.1:8080/v1/bind/job1?token=\(token)", true),
        // Outside the allowed domains, or look-alikes of them.
        ("https://evil.com/v1/bind/job1?token=\(token)", false),
        ("https://example.com.evil.com/v1/bind/job1?token=\(token)", false),
        ("https://evilexample.com/v1/bind/job1?token=\(token)", false),
        ("https://еxample.com/v1/bind/job1?token=\(token)", false),  // Cyrillic е
        ("https://127.0.0.2/v1/bind/job1?token=\(token)", false),
        ("myapp://bind?api_base_url=https://evil.com&job_id=job1&token=\(token)", false),
        // Plain http off loopback.
        ("http://id.example.com/v1/bind/job1?token=\(token)", false),
        ("myapp://bind?api_base_url=http://id.example.com&job_id=job1&token=\(token)", false),
        ("myapp://bind?api_base_url=ftp://id.example.com&job_id=job1&token=\(token)", false),
        // Malformed or ambiguous.
        ("https://id.example.com/v1/bind/job1", false),
        ("https://id.example.com/v1/bind/job1?token=\(token)&token=other", false),
        ("https://id.example.com/v1/bind/job1?token=\(token)&extra=1", false),
        ("https://id.example.com/v1/bind/../job1?token=\(token)", false),
        ("https://id.example.com/v1/bind/job%2F1?token=\(token)", false),
        ("https://id.example.com/v1/bind/job1?token=a%20b", false),
        ("https://user:pass@id.example.com/v1/bind/job1?token=\(token)", false),
        ("https://id.example.com/v1/bind/job1?token=\(token)#frag", false),
        ("https://id.example.com/v1/authenticate/session1", false),
        ("myapp://bind?api_base_url=https://id.example.com&token=\(token)", false),
        ("myapp://bind?api_base_url=https://id.example.com&job_id=job1", false),
        ("myapp://authenticate?api_base_url=https://id.example.com&session_id=s1", false),
        ("myapp://bind?api_base_url=https://id.example.com&job_id=\(String(repeating: "a", count: 300))&token=\(token)", false),
        ("https://id.example.com/v1/bind/job1?token=\(String(repeating: "t", count: 5000))", false),
        ("mailto:someone@example.com", false),
    ])
    func bindLinks(_ text: String, expected: Bool) throws {
        let url = try #require(URL(string: text), "\(text)")
        #expect(try Self.classifies(url, as: "bind", allowing: ["example.com", "127.0.0.1"]) == expected, "\(text)")
    }

    @Test("authenticate links", arguments: [
        ("https://id.example.com/v1/authenticate/session1", true),
        ("https://id.example.com/tenant/v1/authenticate/session1", true),
        ("myapp://authenticate?api_base_url=https://id.example.com&session_id=session1", true),
        ("https://evil.com/v1/authenticate/session1", false),
        ("https://id.example.com/v1/authenticate/", false),
        ("https://id.example.com/v1/authenticate/session1?next=https://evil.com", false),
        ("myapp://authenticate?api_base_url=https://id.example.com&session_id=s1&session_id=s2", false),
        ("myapp://authenticate?api_base_url=https://id.example.com", false),
        ("https://id.example.com/v1/bind/job1?token=abc", false),
    ])
    func authenticateLinks(_ text: String, expected: Bool) throws {
        let url = try #require(URL(string: text), "\(text)")
        #expect(try Self.classifies(url, as: "authenticate", allowing: ["example.com"]) == expected, "\(text)")
    }

    @Test("an empty allowed list allows nothing; an IP entry allows that address only")
    func allowedDomainRules() throws {
        let link = try #require(URL(string: "https://id.example.com/v1/bind/job1?token=\(Self.token)"))
        #expect(try Self.classifies(link, as: "bind", allowing: []) == false)
        #expect(try Self.classifies(link, as: "bind", allowing: ["id.example.com"]))
        #expect(try Self.classifies(link, as: "bind", allowing: ["other.example.com"]) == false)
        let loopback = try #require(URL(string: "http://127.0.0.1:9/v1/bind/job1?token=\(Self.token)"))
        #expect(try Self.classifies(loopback, as: "bind", allowing: ["0.0.1"]) == false)
        #expect(try Self.classifies(loopback, as: "bind", allowing: ["127.0.0.1"]))
    }

    @Test("provider(of:) names the provider of either form, for a CLI to allow it")
    func providerOfLink() throws {
        let deep = try #require(URL(string: "myapp://bind?api_base_url=https://id.example.com/t/&job_id=j&token=t"))
        #expect(Embedded.provider(of: deep)?.absoluteString == "https://id.example.com/t")
        let direct = try #require(URL(string: "https://id.example.com/v1/authenticate/s"))
        #expect(Embedded.provider(of: direct)?.absoluteString == "https://id.example.com")
        #expect(Embedded.provider(of: try #require(URL(string: "https://id.example.com/login"))) == nil)
    }
}
