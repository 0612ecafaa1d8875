import Foundation
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The provider's pages in a real headless Chromium with a virtual authenticator: a
/// passkey made on the registration page, then signed in with on the sign-in page, by
/// autofill and by the button (docs/PROTOCOL.md section 9).
@Suite("Browser: registration and sign-in pages in Chromium", .serialized, .requires(if: Chromium.available, BrowserHarness.skipped))
struct BrowserSignInTests {
    @Test("a bind link opened in Chromium registers a passkey (transports and BE/BS listed); /authorize signs in with it by autofill; code, state and iss reach the redirect; the code is redeemed")
    func registerThenSignIn() async throws {
        try await BrowserHarness.run { session in
            let (identity, bindURL) = try await session.provider.createIdentity("grace")
            try await session.registerPasskey(at: bindURL, screenshot: "registration")
            let held = try await session.browser.credentials(of: session.authenticator)
            #expect(held.count == 1 && held.first?["isResidentCredential"]?.boolValue == true && held.first?["rpId"]?.stringValue == "localhost")
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

    @Test("keyboard only: with login_hint the page asks by button (no autofill); Tab to the button and Enter signs in; the admin listing says browser, internal")
    func buttonByKeyboard() async throws {
        try await BrowserHarness.run { session in
            let (identity, bindURL) = try await session.provider.createIdentity("hopper")
            try await session.registerPasskey(at: bindURL)
            try await BrowserHarness.withCallback { callback in
                let client = try session.provider.oauthClient(redirectURI: callback)
                let request = try await client.authorizationRequest(additionalParameters: ["login_hint": "hopper"])
                try await session.browser.open(request.url)
                try await session.browser.wait(until: "document.readyState === 'complete' && document.getElementById('sign-in-button')", what: "the sign-in page")
                try await session.screenshot("sign-in")
                #expect(try await session.browser.run("return location.href;")?.stringValue == request.url.absoluteString, "no autofill sign-in happened by itself")
                try await session.browser.press([WebDriverSession.tab])
                #expect(try await session.browser.run("return document.activeElement.id;")?.stringValue == "username")
                try await session.browser.press([WebDriverSession.tab])
                #expect(try await session.browser.run("return document.activeElement.id;")?.stringValue == "sign-in-button")
                try await session.browser.press([WebDriverSession.enter])
                try await session.browser.wait(until: "location.href.startsWith('\(callback.absoluteString)')", what: "the redirect after the button")
                let code = try await client.authorizationCode(from: try await session.browser.currentURL(), for: request)
                #expect(try await client.exchange(code: code, for: request).idTokenClaims?.subject == identity)
            }
            let listed = try #require(try await session.provider.admin.call(AdminAPI.credentials, identity).answer?.credentials.first)
            #expect(listed.registeredFrom == "browser" && listed.transports == ["internal"] && listed.backupEligible == false)
        }
    }

    @Test("a standard OIDC relying party (Authlib's Flask client): its authorization request gets the sign-in page, the passkey signs in, and the RP verifies the ID token; Cancel returns access_denied with iss")
    func authlibRelyingParty() async throws {
        if !(await AuthlibRelyingParty.available) { try TestEnvironment.unavailable("python3 with authlib, flask and requests (.ci/run installs them)") }
        try await BrowserHarness.run { session in
            let registered = try await session.provider.admin.call(AdminAPI.createClient, body: AdminAPI.Client(
                id: "wiki", name: "Team wiki", grantTypes: ["authorization_code", "refresh_token"], redirectURIs: ["http://127.0.0.1/callback"]
            ))
            try #require(registered.status == 201, "\(String(decoding: registered.body, as: UTF8.self))")
            let (identity, bindURL) = try await session.provider.createIdentity("lovelace")
            try await session.registerPasskey(at: bindURL)
            let relyingParty = try await AuthlibRelyingParty(issuer: session.provider.issuer, clientID: "wiki")
            try await session.browser.open(relyingParty.login)
            try await session.browser.wait(until: "location.href.startsWith('\(relyingParty.callback.absoluteString)')", what: "the RP's callback")
            let answer = try #require(try await session.browser.run("return document.body.innerText;")?.stringValue)
            let result = try #require(try? JSONValue(json: Data(answer.utf8)), "\(answer)")
            #expect(result["verified"]?.boolValue == true, "\(answer)")
            #expect(result["sub"]?.stringValue == identity && result["iss"]?.stringValue == session.provider.issuer.absoluteString)
            #expect(result["iss_parameter"]?.stringValue == session.provider.issuer.absoluteString, "RFC 9207's iss on the redirect")

            // A second sign-in from the RP, declined: the RP hears access_denied, with iss.
            // (The passkey is taken away first, or autofill would sign in at once.)
            let second = try await AuthlibRelyingParty(issuer: session.provider.issuer, clientID: "wiki")
            try await session.browser.removeCredentials(of: session.authenticator)
            try await session.browser.open(second.login)
            try await session.browser.wait(until: "document.getElementById('cancel-button')", what: "the sign-in page")
            #expect(try await session.browser.text("main strong").contains("Team wiki"))
            try await session.browser.click("#cancel-button")
            try await session.browser.wait(until: "location.href.startsWith('\(second.callback.absoluteString)')", what: "the RP's callback after Cancel")
            let declined = try #require(try await session.browser.run("return document.body.innerText;")?.stringValue)
            #expect(declined.contains("access_denied") && declined.contains(session.provider.issuer.absoluteString), "\(declined)")
        }
    }
}
