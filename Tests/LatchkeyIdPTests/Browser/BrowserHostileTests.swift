import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// Attacks on the browser pages, by name, in a real Chromium where a browser is what the
/// attack needs (docs/SECURITY.md, "Browser pages"): script in every displayed field,
/// cross-origin posts, framing, an open redirect, a passkey signed for another RP ID,
/// and a replayed assertion.
@Suite("Browser: hostile pages and requests", .serialized, .requires(if: Chromium.available, BrowserHarness.skipped))
struct BrowserHostileTests {
    static let script = "<script>alert('x')</script><img src=x onerror=alert('y')>"
    static let bidi = "\u{202E}gepj.exe\u{2066}"

    /// The sign-in page's data: the session's submit URL, page token and options.
    static func pageData(_ browser: WebDriverSession) async throws -> JSONValue {
        let text = try #require(try await browser.run("return document.getElementById('page-data').textContent;")?.stringValue)
        return try #require(try? JSONValue(json: Data(text.utf8)))
    }

    /// A POST as a browser's fetch would send it, with the headers chosen.
    static func post(_ url: URL, _ body: Data, headers: [String: String]) async throws -> (Int, String) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// An authorization request for the CLI client naming `hint`, so the page asks by
    /// button and nothing signs in by itself.
    static func signInPage(_ session: BrowserHarness, hint: String) async throws -> URL {
        let client = try session.provider.oauthClient(redirectURI: URL(string: "http://127.0.0.1:9/callback"))
        return try await client.authorizationRequest(additionalParameters: ["login_hint": hint]).url
    }

    @Test("XSS: <script>, an onerror image and bidi controls in the provider's name, the client's name, the identity's display name, the login hint and a user_code in the query are shown as text and never run")
    func scriptInEveryField() async throws {
        try await BrowserHarness.run({ $0.displayName = "Corp" + Self.script + Self.bidi }) { session in
            let created = try await session.provider.admin.call(AdminAPI.createClient, body: AdminAPI.Client(
                id: "evil-app", name: "App" + Self.script + Self.bidi, grantTypes: ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"],
                redirectURIs: ["http://127.0.0.1/callback"]
            ))
            try #require(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let identity = try await session.provider.admin.call(AdminAPI.createIdentity, body: .init(
                username: "mallory", email: "mallory@example.com", displayName: "Mal" + Self.script + Self.bidi
            ))
            let bindURL = try #require(identity.answer.flatMap { URL(string: $0.bindURL) }, "\(identity.status) \(String(decoding: identity.body, as: UTF8.self))")
            try await session.browser.open(bindURL)
            try await session.browser.wait(until: "document.readyState === 'complete'", what: "the registration page")
            #expect(await session.browser.alertText() == nil, "no script ran")
            let bindText = try await session.browser.text("main")
            #expect(bindText.contains("Mal<script>alert('x')</script>") && bindText.contains("[U+202E]gepj.exe[U+2066]"), "\(bindText)")
            #expect(try await session.browser.run("return document.querySelectorAll('script').length;")?.intValue == 2, "the static script and the JSON data only")
            #expect(try await session.browser.run("return document.querySelectorAll('img').length;")?.intValue == 0)

            let client = try OAuthClientFactory.client(issuer: session.provider.issuer, id: "evil-app")
            let request = try await client.authorizationRequest(additionalParameters: ["login_hint": "\"><script>alert('hint')</script>"])
            try await session.browser.open(request.url)
            try await session.browser.wait(until: "document.getElementById('sign-in-button')", what: "the sign-in page")
            try await session.screenshot("hostile-names")
            #expect(await session.browser.alertText() == nil, "no script ran")
            #expect(try await session.browser.text("header").contains("Corp<script>alert('x')</script>"))
            #expect(try await session.browser.text("main strong").contains("App<script>"))
            #expect(try await session.browser.run("return document.getElementById('username').value;")?.stringValue == "\"><script>alert('hint')</script>")
            #expect(try await session.browser.run("return document.querySelectorAll('script, img').length;")?.intValue == 2)
            #expect(try await session.browser.run("return document.title;")?.stringValue == "Sign in · Corp" + Self.script + "[U+202E]gepj.exe[U+2066]")

            // The device page shows the client's name too (written by the script as text).
            let started = try await Self.post(
                session.provider.issuer.appendingPathComponent("device_authorization"), Data("client_id=evil-app&scope=openid".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"]
            )
            let device = try #require(try? JSONValue(json: Data(started.1.utf8)), "\(started)")
            let complete = try #require((device["verification_uri_complete"]?.stringValue).flatMap(URL.init(string:)))
            try await session.browser.open(complete)
            try await session.browser.wait(until: "document.getElementById('user-code').value", what: "the device page")
            try await session.browser.click("#lookup-button")
            try await session.browser.wait(until: "!document.getElementById('request').hidden", what: "the request's details")
            #expect(await session.browser.alertText() == nil, "no script ran")
            #expect(try await session.browser.text("#request-client").contains("App<script>alert('x')</script>"))
            #expect(try await session.browser.text("#request-client").contains("[U+202E]gepj.exe[U+2066]"))
            #expect(try await session.browser.run("return document.querySelectorAll('script, img').length;")?.intValue == 2)

            // A user_code in the query is only a prefill, and only as the input's value.
            var hostile = URLComponents(url: session.provider.issuer.appendingPathComponent("device"), resolvingAgainstBaseURL: false)!
            hostile.queryItems = [URLQueryItem(name: "user_code", value: "\"><script>alert(1)</script>")]
            try await session.browser.open(hostile.url!)
            try await session.browser.wait(until: "document.getElementById('user-code')", what: "the device page")
            #expect(await session.browser.alertText() == nil, "no script ran")
            #expect(try await session.browser.run("return document.getElementById('user-code').value;")?.stringValue == "\"><script>alert(1)</script>")
            #expect(try await session.browser.run("return document.querySelectorAll('script, img').length;")?.intValue == 2)
        }
    }

    @Test("CSRF: page endpoints refuse another origin (a real cross-origin form post from Chromium), Origin null, Sec-Fetch-Site cross-site, a missing or another session's page token; the CLI's requests (no Origin) still work")
    func crossOriginPosts() async throws {
        try await BrowserHarness.run { session in
            let (_, bindURL) = try await session.provider.createIdentity("ada")
            try await session.registerPasskey(at: bindURL)
            let issuer = session.provider.issuer
            let origin = "http://localhost:\(session.provider.port)"
            // A form on another origin (127.0.0.1 is not localhost) posting to the device lookup.
            try await session.browser.open(URL(string: "http://127.0.0.1:\(session.provider.port)/device")!)
            try await session.browser.run("""
                const f = document.createElement('form'); f.method = 'POST'; f.action = arguments[0];
                const i = document.createElement('input'); i.name = 'userCode'; i.value = 'BCDF-GHJK'; f.append(i); document.body.append(f); f.submit();
                """, [.string(issuer.appendingPathComponent("v1/device").absoluteString)])
            try await session.browser.wait(until: "document.body.innerText.includes('access_denied')", what: "the refusal")
            #expect(try await session.browser.text("body").contains("another origin"))

            try await session.browser.open(try await Self.signInPage(session, hint: "ada"))
            try await session.browser.wait(until: "document.getElementById('page-data')", what: "the sign-in page")
            let data = try await Self.pageData(session.browser)
            let submit = try #require((data["submit"]?.stringValue).flatMap(URL.init(string:)))
            let token = try #require(data["token"]?.stringValue)
            let body = Data("{}".utf8)
            for (name, headers) in [
                ("another origin", ["Origin": "http://evil.example", "Latchkey-Page-Token": token]),
                ("Origin null", ["Origin": "null", "Latchkey-Page-Token": token]),
                ("a look-alike origin", ["Origin": origin + ".evil.example", "Latchkey-Page-Token": token]),
                ("Sec-Fetch-Site cross-site", ["Origin": origin, "Sec-Fetch-Site": "cross-site", "Latchkey-Page-Token": token]),
                ("no page token", ["Origin": origin, "Sec-Fetch-Site": "same-origin"]),
                ("a forged page token", ["Origin": origin, "Latchkey-Page-Token": String(token.reversed())]),
            ] {
                let (status, answer) = try await Self.post(submit, body, headers: headers)
                #expect(status == 403 && answer.contains("access_denied"), "\(name): \(status) \(answer)")
            }
            // Another session's token does not carry over.
            try await session.browser.open(try await Self.signInPage(session, hint: "ada"))
            try await session.browser.wait(until: "document.getElementById('page-data')", what: "a second sign-in page")
            let other = try #require(try await Self.pageData(session.browser)["token"]?.stringValue)
            let (crossed, crossedAnswer) = try await Self.post(submit, body, headers: ["Origin": origin, "Latchkey-Page-Token": other])
            #expect(crossed == 403, "another session's token: \(crossed) \(crossedAnswer)")
            // The right origin and token pass the page check and reach the assertion's own (400).
            let (checked, checkedAnswer) = try await Self.post(submit, body, headers: ["Origin": origin, "Sec-Fetch-Site": "same-origin", "Latchkey-Page-Token": token])
            #expect(checked == 400, "\(checked) \(checkedAnswer)")
            // A client without Origin (the CLI) is not asked for a page token.
            let (api, apiAnswer) = try await Self.post(submit, body, headers: [:])
            #expect(api == 400, "\(api) \(apiAnswer)")
        }
    }

    @Test("clickjacking: the sign-in page in another site's frame does not render (CSP frame-ancestors 'none', X-Frame-Options DENY), and every page says so in its headers")
    func framed() async throws {
        try await BrowserHarness.run { session in
            let page = try await Self.signInPage(session, hint: "ada")
            let html = "<html><body><iframe id='victim' src='\(page.absoluteString)' width='600' height='400'></iframe></body></html>"
            try await session.browser.open(URL(string: "data:text/html;base64," + Data(html.utf8).base64EncodedString())!)
            try await Task.sleep(for: .seconds(1))
            try await session.browser.frame(try await session.browser.find("#victim"))
            let inside = try await session.browser.run("return location.href + ' ' + Boolean(document.getElementById('sign-in'));")?.stringValue
            try await session.browser.frame(nil)
            #expect(inside?.hasPrefix("chrome-error://") == true && inside?.hasSuffix("false") == true, "the frame was blocked: \(inside ?? "?")")

            var request = URLRequest(url: page)
            request.setValue("text/html", forHTTPHeaderField: "Accept")
            let (_, response) = try await URLSession.shared.data(for: request)
            let headers = try #require(response as? HTTPURLResponse)
            let csp = headers.value(forHTTPHeaderField: "Content-Security-Policy") ?? ""
            #expect(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe-inline") && !csp.contains("form-action"))
            #expect(headers.value(forHTTPHeaderField: "X-Frame-Options") == "DENY")
            #expect(headers.value(forHTTPHeaderField: "X-Content-Type-Options") == "nosniff")
            #expect(headers.value(forHTTPHeaderField: "Referrer-Policy") == "no-referrer")
            #expect(headers.value(forHTTPHeaderField: "Cache-Control") == "no-store")
        }
    }

    @Test("open redirect: /authorize in a browser with an unregistered or look-alike redirect_uri, or an unknown client, shows an error page in words and sends the browser nowhere")
    func openRedirect() async throws {
        try await BrowserHarness.run { session in
            let pkce = try PKCEChallenge.make()
            for redirect in ["https://evil.example/callback", "http://127.0.0.1.evil.example/callback", "http://127.0.0.1/callback/../../evil"] {
                var components = URLComponents(url: session.provider.issuer.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)!
                components.queryItems = [
                    .init(name: "client_id", value: "latchkey-cli"), .init(name: "redirect_uri", value: redirect), .init(name: "response_type", value: "code"),
                    .init(name: "code_challenge", value: pkce), .init(name: "code_challenge_method", value: "S256"), .init(name: "state", value: "s"),
                ]
                try await session.browser.open(components.url!)
                try await session.browser.wait(until: "document.readyState === 'complete'", what: "the error page")
                try await Task.sleep(for: .milliseconds(300))
                let here = try await session.browser.currentURL()
                #expect(here.host == "localhost" && here.path == "/authorize", "\(redirect): stayed on the provider, at \(here)")
                let text = try await session.browser.text("main")
                #expect(text.contains("redirect_uri is not registered") && !text.contains("{"), "\(redirect): \(text)")
            }
            try await session.screenshot("error")
        }
    }

    @Test("a passkey signed for another RP ID (the registered key, copied into the authenticator under evil.localhost, answering our own challenge from that origin) is refused")
    func anotherRelyingParty() async throws {
        try await BrowserHarness.run { session in
            let (_, bindURL) = try await session.provider.createIdentity("ada")
            try await session.registerPasskey(at: bindURL)
            let held = try #require(try await session.browser.credentials(of: session.authenticator).first)
            let credentialID = try #require(held["credentialId"]?.stringValue)
            let privateKey = try #require(held["privateKey"]?.stringValue)
            try await session.browser.removeCredentials(of: session.authenticator)
            try await session.browser.send("webauthn/authenticator/\(session.authenticator)/credential", [
                "credentialId": .string(credentialID), "isResidentCredential": false, "rpId": "evil.localhost", "privateKey": .string(privateKey), "signCount": 10,
            ])
            try await session.browser.open(try await Self.signInPage(session, hint: "ada"))
            try await session.browser.wait(until: "document.getElementById('page-data')", what: "the sign-in page")
            let data = try await Self.pageData(session.browser)
            let options = try #require(data["options"])
            let challenge = try #require(options["challenge"]?.stringValue)
            let token = try #require(data["token"]?.stringValue)
            // The phishing page: another origin whose RP ID is evil.localhost.
            try await session.browser.open(URL(string: "http://evil.localhost:\(session.provider.port)/device")!)
            let signed = try await session.browser.runAsync(Self.assertionScript, [.string(challenge), .string(credentialID)])
            let assertion = try #require(signed?.stringValue, "the authenticator signed for evil.localhost")
            let submit = try #require((data["submit"]?.stringValue).flatMap(URL.init(string:)))
            let (status, answer) = try await Self.post(submit, Data(assertion.utf8), headers: [
                "Origin": "http://localhost:\(session.provider.port)", "Latchkey-Page-Token": token,
            ])
            #expect(status == 400 && (answer.contains("origin") || answer.contains("RP ID") || answer.contains("rpId")), "\(status) \(answer)")
        }
    }

    @Test("a replayed assertion: captured from the page, it signs in once; sent again it is refused, and it does not answer another session")
    func replayedAssertion() async throws {
        try await BrowserHarness.run { session in
            let (_, bindURL) = try await session.provider.createIdentity("ada")
            try await session.registerPasskey(at: bindURL)
            try await session.browser.open(try await Self.signInPage(session, hint: "ada"))
            try await session.browser.wait(until: "document.getElementById('page-data')", what: "the sign-in page")
            let data = try await Self.pageData(session.browser)
            // The page's fetch is caught, so the assertion is taken instead of sent.
            try await session.browser.run("window.__taken = null; window.fetch = (url, init) => { window.__taken = init.body; return new Promise(() => {}); };")
            try await session.browser.click("#sign-in-button")
            try await session.browser.wait(until: "window.__taken", what: "the assertion")
            let assertion = try #require(try await session.browser.run("return window.__taken;")?.stringValue)
            let pageToken = try #require(data["token"]?.stringValue)
            let headers = ["Origin": "http://localhost:\(session.provider.port)", "Latchkey-Page-Token": pageToken]
            let submit = try #require((data["submit"]?.stringValue).flatMap(URL.init(string:)))
            let (first, firstAnswer) = try await Self.post(submit, Data(assertion.utf8), headers: headers)
            #expect(first == 200 && firstAnswer.contains("code="), "\(first) \(firstAnswer)")
            let (again, againAnswer) = try await Self.post(submit, Data(assertion.utf8), headers: headers)
            #expect(again == 404 || again == 400, "replayed: \(again) \(againAnswer)")

            try await session.browser.open(try await Self.signInPage(session, hint: "ada"))
            try await session.browser.wait(until: "document.getElementById('page-data')", what: "another sign-in page")
            let other = try await Self.pageData(session.browser)
            let otherSubmit = try #require((other["submit"]?.stringValue).flatMap(URL.init(string:)))
            let otherToken = try #require(other["token"]?.stringValue)
            let (crossed, crossedAnswer) = try await Self.post(
                otherSubmit, Data(assertion.utf8), headers: ["Origin": "http://localhost:\(session.provider.port)", "Latchkey-Page-Token": otherToken]
            )
            #expect(crossed == 400 && crossedAnswer.contains("challenge"), "another session: \(crossed) \(crossedAnswer)")
        }
    }

    /// Asks the authenticator for an assertion over `arguments[0]` (a base64url challenge)
    /// by credential `arguments[1]`, for this page's own RP ID; answers it as JSON.
    static let assertionScript = """
        const done = arguments[arguments.length - 1];
        const decode = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((t.length + 3) % 4)), (c) => c.charCodeAt(0));
        const encode = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
        navigator.credentials.get({ publicKey: { challenge: decode(arguments[0]), rpId: location.hostname,
            allowCredentials: [{ type: 'public-key', id: decode(arguments[1]) }], userVerification: 'preferred' } })
          .then((c) => done(JSON.stringify({ id: c.id, rawId: encode(c.rawId), type: c.type, clientExtensionResults: {},
              response: { clientDataJSON: encode(c.response.clientDataJSON), authenticatorData: encode(c.response.authenticatorData),
                          signature: encode(c.response.signature) } })))
          .catch((e) => done(null));
        """
}

/// A PKCE S256 challenge for hand-built authorization requests.
enum PKCEChallenge {
    static func make() throws -> String { try PKCE.generate().challenge }
}

/// An OAuth client of a registered client id (loopback redirect).
enum OAuthClientFactory {
    static func client(issuer: URL, id: String) throws -> OAuthClient {
        try OAuthClient(configuration: .init(issuer: issuer, clientID: id, redirectURI: URL(string: "http://127.0.0.1:9/callback")!))
    }
}
