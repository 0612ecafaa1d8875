public import Foundation
public import LatchkeyOAuth

/// One browser session over W3C WebDriver (https://www.w3.org/TR/webdriver2/): navigate,
/// find, click, type, run script, screenshots, frames, and the WebAuthn virtual
/// authenticator (WebAuthn L3 §11.3). Closed with ``close()``.
public struct WebDriverSession: Sendable {
    let base: URL
    /// The W3C element reference key (WebDriver §12.1).
    static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// An element found on the page.
    public struct Element: Sendable {
        public let id: String
    }

    // MARK: Navigation

    public func open(_ url: URL) async throws {
        try await send("url", ["url": .string(url.absoluteString)])
    }

    public func currentURL() async throws -> URL {
        guard let text = try await send("url", method: "GET")?.stringValue, let url = URL(string: text) else {
            throw TestSupportError("WebDriver answered no URL")
        }
        return url
    }

    // MARK: Elements

    public func find(_ selector: String) async throws -> Element {
        let answer = try await send("element", ["using": "css selector", "value": .string(selector)])
        guard let id = answer?[Self.elementKey]?.stringValue else {
            throw TestSupportError("no element \(selector)")
        }
        return Element(id: id)
    }

    public func click(_ selector: String) async throws {
        try await send("element/\(try await find(selector).id)/click", [:])
    }

    public func type(_ text: String, into selector: String) async throws {
        try await send("element/\(try await find(selector).id)/value", ["text": .string(text)])
    }

    /// The element's rendered text (WebDriver §12.4.5).
    public func text(_ selector: String) async throws -> String {
        try await send("element/\(try await find(selector).id)/text", method: "GET")?.stringValue ?? ""
    }

    /// Sends keys to the focused element (WebDriver §17.5, a key action sequence), so a
    /// test can move through a page with the keyboard only.
    public func press(_ keys: [String]) async throws {
        var actions: [JSONValue] = []
        for key in keys {
            actions.append(["type": "keyDown", "value": .string(key)])
            actions.append(["type": "keyUp", "value": .string(key)])
        }
        try await send("actions", ["actions": [["type": "key", "id": "keyboard", "actions": .array(actions)]]])
    }

    /// Tab (U+E004) and Enter (U+E007) in WebDriver's key table (§17.4.2).
    public static let tab = "\u{E004}"
    public static let enter = "\u{E007}"

    // MARK: Script, frames, alerts, screenshots

    /// Runs `script` (a function body; `arguments[i]` are `arguments`) and answers its value.
    @discardableResult
    public func run(_ script: String, _ arguments: [JSONValue] = []) async throws -> JSONValue? {
        try await send("execute/sync", ["script": .string(script), "args": .array(arguments)])
    }

    /// Runs an async `script`: it must call `arguments[arguments.length - 1](value)`.
    public func runAsync(_ script: String, _ arguments: [JSONValue] = []) async throws -> JSONValue? {
        try await send("execute/async", ["script": .string(script), "args": .array(arguments)])
    }

    /// Polls `condition` (a script returning a boolean) until it is true or `timeout` passes.
    public func wait(until condition: String, timeout: TimeInterval = 15, what: String) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? await run("return Boolean(\(condition));"))??.boolValue == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        let status = (try? await run("const s = document.getElementById('status'), e = document.getElementById('error'); return (s ? s.textContent : '') + ' | ' + (e ? e.textContent : '') + ' | ' + location.href;"))??.stringValue
        throw TestSupportError("timed out waiting for \(what); page says: \(status ?? "?")")
    }

    /// Switches into the frame `element` (WebDriver §11.3), or back to the top with nil.
    public func frame(_ element: Element?) async throws {
        let id: JSONValue = element.map { .object([Self.elementKey: .string($0.id)]) } ?? .null
        try await send("frame", ["id": id])
    }

    /// The text of an open `alert()`, or nil when there is none.
    public func alertText() async -> String? {
        (try? await send("alert/text", method: "GET"))??.stringValue
    }

    /// A PNG of the viewport, saved to `file`.
    public func screenshot(to file: URL) async throws {
        guard let text = try await send("screenshot", method: "GET")?.stringValue, let png = Data(base64Encoded: text) else {
            throw TestSupportError("WebDriver answered no screenshot")
        }
        try png.write(to: file)
    }

    // MARK: WebAuthn virtual authenticator (L3 §11.3)

    /// Adds a CTAP2 platform authenticator with resident keys and user verification that
    /// consents and verifies without a person; answers its id.
    @discardableResult
    public func addVirtualAuthenticator() async throws -> String {
        let answer = try await send("webauthn/authenticator", [
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": true, "hasUserVerification": true,
            "isUserConsenting": true, "isUserVerified": true,
        ])
        guard let id = answer?.stringValue else { throw TestSupportError("no virtual authenticator id") }
        return id
    }

    /// The credentials the authenticator holds (L3 §11.3.4): id, rpId, userHandle, signCount.
    public func credentials(of authenticator: String) async throws -> [JSONValue] {
        try await send("webauthn/authenticator/\(authenticator)/credentials", method: "GET")?.arrayValue ?? []
    }

    /// Removes every credential the authenticator holds (L3 §11.3.6).
    public func removeCredentials(of authenticator: String) async throws {
        try await send("webauthn/authenticator/\(authenticator)/credentials", method: "DELETE")
    }

    /// Makes the authenticator refuse user verification from now on (L3 §11.3.7).
    public func setUserVerified(_ verified: Bool, authenticator: String) async throws {
        try await send("webauthn/authenticator/\(authenticator)/uv", ["isUserVerified": .bool(verified)])
    }

    public func close() async {
        _ = try? await Self.command(base, method: "DELETE", body: nil, timeout: 30)
    }

    // MARK: The wire

    @discardableResult
    public func send(_ path: String, _ body: JSONValue? = nil, method: String = "POST") async throws -> JSONValue? {
        try await Self.command(base.appendingPathComponent(path), method: method, body: method == "GET" || method == "DELETE" ? nil : (body ?? [:]), timeout: 60)
    }

    /// One WebDriver command: JSON in, the `value` member out; an error answer throws
    /// with WebDriver's error code and message.
    static func command(_ url: URL, method: String, body: JSONValue?, timeout: TimeInterval) async throws -> JSONValue? {
        let payload = try body.map { try $0.json() }
        let answer = try await WebDriverWire.exchange(port: url.port ?? 80, method: method, path: url.path, body: payload, timeout: timeout)
        let value = (try? JSONValue(json: answer.body, maximumSize: 64 << 20))?["value"]
        guard answer.status == 200 else {
            let error = value?["error"]?.stringValue ?? "status \(answer.status)"
            throw TestSupportError("WebDriver \(method) \(url.path): \(error): \((value?["message"]?.stringValue ?? "").prefix(400))")
        }
        if value == .null { return nil }
        return value
    }
}
