import Foundation
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// The browser pages abused (docs/SECURITY.md, "Browser pages"): outside text that would
/// reorder what a person reads.
extension HostileInputSuite {
    /// Red team, milestone 3 (low): a `login_hint` with U+202E reached the sign-in page's
    /// username field raw (escaped for HTML, not spelled out).
    @Test("bidi and control characters in login_hint reach the sign-in page spelled out as [U+202E], never raw")
    func loginHintBidiOnPage() async throws {
        try await ProviderHarness.run { provider in
            let hint = "admin\u{202E}exe.txt\u{2066}\u{0007}"
            let target = Self.authorizeTarget(hint: hint)
            let response = try await HTTP1Transport().send(TransportRequest(
                method: HTTPMethod.get, url: try #require(URL(string: provider.issuer.absoluteString + target)), headers: ["Accept": "text/html"]
            ))
            let page = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == 200)
            #expect(page.contains("admin[U+202E]exe.txt[U+2066][U+0007]"), "the hint is shown spelled out")
            for hidden in ["\u{202E}", "\u{2066}", "\u{0007}"] {
                #expect(!page.contains(hidden), "U+\(String(hidden.unicodeScalars.first?.value ?? 0, radix: 16)) reached the page raw")
            }
        }
    }
}
