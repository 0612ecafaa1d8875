import Foundation
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// Consent for a third-party client (a client ID metadata document served on loopback) in
/// real headless Chromium: the passkey on the sign-in page, then the consent panel naming
/// the client and where it returns to, then the code at the client's redirect.
@Suite("Browser: consent for a third-party client in Chromium", .serialized, .requires(if: Chromium.available, BrowserHarness.skipped))
struct BrowserConsentTests {
    @Test("a client known by its metadata document: passkey, then Allow on the consent panel, and the code reaches the client and is redeemed")
    func allowInBrowser() async throws {
        try await ClientMetadataDocumentTests.withDocuments { documents, _ in
            try await BrowserHarness.run({ configuration in
                configuration.clientMetadataDocuments.enabled = true
                configuration.clientMetadataDocuments.localNetwork = true
            }) { session in
                let (identity, bindURL) = try await session.provider.createIdentity("lovelace")
                try await session.registerPasskey(at: bindURL)
                try await BrowserHarness.withCallback { callback in
                    let clientID = documents.appendingPathComponent("good.json").absoluteString
                    let client = try OAuthClient(configuration: .init(issuer: session.provider.issuer, clientID: clientID, redirectURI: callback))
                    let request = try await client.authorizationRequest(scopes: ["openid"])
                    try await session.browser.open(request.url)
                    try await session.browser.wait(until: "document.getElementById('consent') && !document.getElementById('consent').hidden", what: "the consent panel")
                    try await session.screenshot("consent")
                    let shown = try await session.browser.run("return document.getElementById('consent-client').textContent + ' | ' + document.getElementById('consent-host').textContent;")?.stringValue
                    #expect(shown == "Research agent (\(clientID)) | 127.0.0.1", "\(shown ?? "")")
                    _ = try await session.browser.run("document.getElementById('allow-button').click(); return true;")
                    try await session.browser.wait(until: "location.href.startsWith('\(callback.absoluteString)')", what: "the redirect to the client")
                    let code = try await client.authorizationCode(from: try await session.browser.currentURL(), for: request)
                    #expect(try await client.exchange(code: code, for: request).idTokenClaims?.subject == identity)
                }
            }
        }
    }
}
