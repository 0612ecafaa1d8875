import Foundation
import Hummingbird
import LatchkeyIdP
import LatchkeyTestSupport
import Testing

/// A provider in-process at `http://localhost:PORT` (Chromium refuses passkeys for an IP
/// address as RP ID, WebAuthn L3 §5.1.4.1's "valid domain") and a fresh headless Chromium
/// session with a virtual platform authenticator, for one browser test.
struct BrowserHarness: Sendable {
    let provider: ProviderHarness
    let browser: WebDriverSession
    let authenticator: String
    /// Where this test's screenshots go: its temporary directory, and also
    /// `$LATCHKEY_SCREENSHOT_DIR` when set (how README's picture is made).
    let screenshots: URL

    static let skipped: Comment = "chromium and chromium-driver not found: skipped (.ci/run installs them)"

    static func run(
        _ configure: @escaping @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (BrowserHarness) async throws -> Void
    ) async throws {
        let chromium = try await Chromium()
        let port = try LoopbackPort.free()
        try await ProviderHarness.run(nil, { configuration in
            configuration.port = port
            configuration.issuer = URL(string: "http://localhost:\(port)")
            configure(&configuration)
        }) { provider in
            let browser = try await chromium.session()
            let outcome: Result<Void, any Error>
            do {
                let authenticator = try await browser.addVirtualAuthenticator()
                let screenshots = try provider.directory.subdirectory("screenshots")
                outcome = .success(try await body(BrowserHarness(provider: provider, browser: browser, authenticator: authenticator, screenshots: screenshots)))
            } catch {
                outcome = .failure(error)
            }
            await browser.close()
            try outcome.get()
        }
        _ = chromium
    }

    /// A client's redirect endpoint on a loopback port for `body`: `http://127.0.0.1:PORT/callback`,
    /// answering a page that says it got there (any port matches the CLI client's
    /// registered loopback redirect, RFC 8252 §7.3).
    static func withCallback(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        router.get("callback") { _, _ in "signed in" }
        try await LiveServer.run(router, label: "callback") { base in
            try await body(base.appendingPathComponent("callback"))
        }
    }

    /// Saves a PNG of what the browser shows now as `name.png`.
    func screenshot(_ name: String) async throws {
        try await browser.screenshot(to: screenshots.appendingPathComponent("\(name).png"))
        if let directory = ProcessInfo.processInfo.environment["LATCHKEY_SCREENSHOT_DIR"] {
            try await browser.screenshot(to: URL(fileURLWithPath: directory).appendingPathComponent("\(name).png"))
        }
    }

    /// Opens a bind link and creates a passkey on the registration page; answers the
    /// identity's credential count afterwards from the admin API.
    func registerPasskey(at bindURL: URL, screenshot name: String? = nil) async throws {
        try await Self.registerPasskey(in: browser, at: bindURL) {
            if let name { try await screenshot(name) }
        }
    }

    /// The same in any browser session: opens the bind link, presses create on the
    /// registration page (after `beforeCreating`) and waits for the passkey to be saved.
    static func registerPasskey(in browser: WebDriverSession, at bindURL: URL, beforeCreating: () async throws -> Void = {}) async throws {
        try await browser.open(bindURL)
        try await browser.wait(until: "!document.getElementById('create').hidden", what: "the create button")
        try await beforeCreating()
        try await browser.click("#create-button")
        try await browser.wait(until: "!document.getElementById('done').hidden", what: "the passkey to be saved")
    }
}
