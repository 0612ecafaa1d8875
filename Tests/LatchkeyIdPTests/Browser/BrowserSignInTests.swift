import Foundation
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The provider's pages in a real headless Chromium with a virtual authenticator: a
/// passkey made on the registration page, then signed in with on the sign-in page, by
/// autofill and by the button (docs/PROTOCOL.md section 9).
@Suite("Browser: registration and sign-in pages in Chromium", .serialized, .enabled(if: Chromium.available, BrowserHarness.skipped))
struct BrowserSignInTests {
    @Test("a bind link opened in Chromium registers a passkey (transports and BE/BS listed); /authorize signs in with it by autofill; code, state and iss reach the redirect; the code is redeemed")
    func registerThenSignIn() async throws {
        try await BrowserHarness.run { session in
            let (identity, bindURL) = try await session.provider.createIdentity("grace")
            try await session.registerPasskey(at: bindURL, screenshot: "registration")
            let held = try await session.browser.credentials(of: session.authenticator)
            #expect(held.count == 1 && held.first?["isResidentCredential"] as? Bool == true && held.first?["rpId"] as? String == "localhost")
            let listed = try await session.provider.admin.call(AdminAPI.credentials, identity).answer?.credentials ?? []
            #expect(listed.count == 1)

            try await BrowserHarness.withCallback { callback in
                let client = try session.provider.oauthClient(redirectURI: callback)
                let request = try await client.authorizationRequest(scopes: ["openid", "profile"])
                try await session.browser.open(request.url)
                try await session.browser.wait(until: "location.href.startsWith('\(callback.absoluteString)')", what: "the redirect to the client")
                let redirect = try await session.browser.currentURL()
                let code = try await client.authorizationCode(from: redirect, for: request)
                let tokens = try await client.exchange(code: code, for: request)
                #expect(tokens.idTokenClaims?.subject == identity)
            }
        }
    }
}
