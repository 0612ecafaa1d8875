import Foundation
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The device approval, sign-up and recovery pages in a real Chromium (docs/PROTOCOL.md
/// section 9): a `latchkey login --device` approved on `/device` with a browser passkey,
/// and the self-service pages with codes from the provider's outbox.
@Suite("Browser: device approval, sign-up and recovery pages in Chromium", .serialized, .requires(if: Chromium.available, BrowserHarness.skipped))
struct BrowserFlowTests {
    @Test("latchkey login --device, approved on /device in the browser with a passkey: the page shows client, scope, when and where; the CLI gets the approver's tokens")
    func deviceApproval() async throws {
        let binary = ChildProcess.executable("latchkey")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "latchkey is built with the tests")
        try await BrowserHarness.run { session in
            let (identity, bindURL) = try await session.provider.createIdentity("noether")
            try await session.registerPasskey(at: bindURL)
            let credentials = try session.provider.directory.subdirectory("credentials")
            let key = credentials.appendingPathComponent("latchkey-vault-key")
            try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: key)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
            let environment = ["CREDENTIALS_DIRECTORY": credentials.path, "LATCHKEY_STORE": session.provider.directory.url.appendingPathComponent("vault").path]
            let (login, output) = try ChildProcess.start(
                binary, ["login", "--device", "--issuer", session.provider.issuer.absoluteString, "--json", "--no-qr"], environment: environment
            )
            defer { ChildProcess.stop(login) }
            let (line, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("\"userCode\"") }
            let first = try #require(line, "login --device printed no code: \(transcript)")
            let shown = try #require(try? JSONValue(json: Data(first.utf8)))
            let code = try #require(shown["userCode"]?.stringValue)
            let complete = try #require((shown["verificationURIComplete"]?.stringValue).flatMap(URL.init(string:)), "\(first)")

            try await session.browser.open(complete)
            try await session.browser.wait(until: "document.getElementById('user-code').value === '\(code)'", what: "the code prefilled")
            try await session.screenshot("device-code")
            try await session.browser.click("#lookup-button")
            try await session.browser.wait(until: "!document.getElementById('request').hidden", what: "the request's details")
            try await session.screenshot("device-request")
            #expect(try await session.browser.text("#request-client").contains("latchkey-cli"))
            #expect(try await session.browser.text("#request-where").contains("127.0.0.1"))
            #expect(try await session.browser.text("#request-scope").contains("openid"))
            try await session.browser.click("#approve-button")
            try await session.browser.wait(until: "!document.getElementById('decided').hidden", what: "the approval")
            #expect(try await session.browser.text("#decided-text").hasPrefix("Approved"))

            let rest = String(decoding: await ChildProcess.drain(output), as: UTF8.self)
            #expect(await ChildProcess.waitForExit(login) == 0, "\(rest)")
            let last = try #require(rest.split(separator: "\n").last.map(String.init), "\(rest)")
            let tokens = try #require(try? JSONValue(json: Data(last.utf8)))
            #expect(tokens["claims"]?["sub"]?.stringValue == identity, "\(rest)")
        }
    }

    @Test("sign-up page: a username, the profile, the e-mailed code, then the registration page makes the passkey; the new account is listed with it")
    func signUp() async throws {
        try await BrowserHarness.run({ $0.selfRegistration = true }) { session in
            try await session.browser.open(session.provider.issuer.appendingPathComponent("signup"))
            try await session.browser.wait(until: "document.getElementById('username')", what: "the sign-up page")
            try await session.screenshot("sign-up")
            try await session.browser.type("turing", into: "#username")
            try await session.browser.click("#start-button")
            try await session.browser.wait(until: "document.getElementById('field-email')", what: "the profile step")
            try await session.browser.type("Alan", into: "#field-givenName")
            try await session.browser.type("alan@example.com", into: "#field-email")
            try await session.browser.click("#step-form button")
            try await session.browser.wait(until: "document.getElementById('field-code')", what: "the code step")
            try await session.screenshot("sign-up-code")
            let code = try await session.provider.outboxCode(to: "alan@example.com")
            try await session.browser.type(code, into: "#field-code")
            try await session.browser.click("#step-form button")
            try await session.browser.wait(until: "!document.getElementById('create').hidden", what: "the registration page")
            try await session.browser.click("#create-button")
            try await session.browser.wait(until: "!document.getElementById('done').hidden", what: "the passkey to be saved")
            let found = try await session.provider.admin.call(AdminAPI.listIdentities, query: [("username", "turing")])
            let identity = try #require(found.answer?.identities.first?.id, "\(found.status)")
            #expect(try await session.provider.admin.call(AdminAPI.credentials, identity).answer?.credentials.count == 1)
        }
    }

    @Test("recovery page: the username, the e-mailed code, the recovery registration page (which warns), a new passkey; the old one is revoked; a wrong code is shown in words")
    func recovery() async throws {
        try await BrowserHarness.run { session in
            let (identity, bindURL) = try await session.provider.createIdentity("hamilton")
            try await session.registerPasskey(at: bindURL)
            try await session.browser.removeCredentials(of: session.authenticator)
            try await session.browser.open(session.provider.issuer.appendingPathComponent("recovery"))
            try await session.browser.wait(until: "document.getElementById('username')", what: "the recovery page")
            try await session.screenshot("recovery")
            try await session.browser.type("hamilton", into: "#username")
            try await session.browser.click("#start-button")
            try await session.browser.wait(until: "document.getElementById('field-code')", what: "the code step")
            try await session.browser.type("000000", into: "#field-code")
            try await session.browser.click("#step-form button")
            try await session.browser.wait(until: "!document.getElementById('error').hidden", what: "the wrong code's error")
            #expect(try await session.browser.text("#error").lowercased().contains("code"))
            let code = try await session.provider.outboxCode(to: "hamilton@example.com")
            try await session.browser.run("document.getElementById('field-code').value = '';")
            try await session.browser.type(code, into: "#field-code")
            try await session.browser.click("#step-form button")
            try await session.browser.wait(until: "!document.getElementById('create').hidden", what: "the recovery registration page")
            #expect(try await session.browser.text(".warning").contains("stops working"))
            try await session.browser.click("#create-button")
            try await session.browser.wait(until: "!document.getElementById('done').hidden", what: "the new passkey")
            try await session.screenshot("recovery-done")
            let listed = try await session.provider.admin.call(AdminAPI.credentials, identity).answer?.credentials ?? []
            #expect(listed.count == 2 && listed.filter(\.revoked).count == 1, "the old passkey is revoked")
        }
    }
}
