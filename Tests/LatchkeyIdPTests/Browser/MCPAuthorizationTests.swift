import Foundation
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The MCP authorization spec end to end, with the MCP Python SDK's own client and server
/// (`Tests/Interop/mcp_client.py`, `mcp_server.py`; `.ci/run` installs `mcp`) and a real
/// `latchkey serve` process: the SDK's client finds the provider from the MCP server's 401
/// (RFC 9728), is known by a client ID metadata document served over https on loopback or
/// registers itself (RFC 7591), and a person signs in with a passkey in real headless
/// Chromium and allows the agent on the consent panel; the tool call succeeds, and the
/// token is refused by a second MCP server (RFC 8707). `latchkey api` then reaches the
/// same MCP endpoint from its URL and an allowed provider alone.
@Suite("MCP authorization: the MCP Python SDK through latchkey serve, in Chromium", .serialized, .requires(if: Chromium.available, BrowserHarness.skipped))
struct MCPAuthorizationTests {
    static let adminToken = "mcp-admin-" + (0..<6).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36) }.joined()

    /// One Python MCP server: its process and its resource URL.
    struct MCPServer {
        let process: SpawnedProcess
        let resource: URL
    }

    /// Starts `mcp_server.py` for a resource server registered at the provider with
    /// `format` (`opaque`, checked by introspection; `jwt`, checked offline), and waits
    /// until it answers its protected resource metadata.
    static func startServer(issuer: URL, admin: AdminAPIClient, format: String) async throws -> MCPServer {
        let port = try LoopbackPort.free()
        let resource = "http://127.0.0.1:\(port)/mcp"
        let created = try await admin.call(AdminAPI.createResourceServer, body: .init(name: "MCP \(format)", resource: resource, accessTokenFormat: format))
        let server = try #require(created.answer, "registering \(resource): \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        let mode = format == "jwt" ? ["jwt"] : ["introspect", server.id, server.secret]
        let script = PythonInterop.scripts.appendingPathComponent("mcp_server.py").path
        let (process, _) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, issuer.absoluteString, String(port)] + mode, name: "the MCP server"
        ) { $0.hasPrefix("READY ") }
        let metadata = try #require(URL(string: "http://127.0.0.1:\(port)/.well-known/oauth-protected-resource/mcp"))
        for _ in 0..<150 {
            if let answer = try? await HTTP1Transport().send(TransportRequest(method: "GET", url: metadata)), answer.status == 200 {
                return MCPServer(process: process, resource: try #require(URL(string: resource)))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        ChildProcess.stop(process)
        throw TestSupportError("the MCP server at \(resource) never answered")
    }

    @Test(
        "the SDK's client signs in with a passkey and consent, calls a tool, and its token is refused by a second MCP server",
        arguments: [("metadata-document", "jwt"), ("registration", "opaque")]
    )
    func sdkSignIn(mode: String, format: String) async throws {
        try #require(await PythonInterop.available(["mcp", "jwt"]), "python3 lacks the MCP Python SDK (mcp) or PyJWT: .ci/run installs them")
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates.make(in: directory.url)
        let port = try LoopbackPort.free()
        // The provider trusts the test CA for the metadata document's https (OpenSSL reads
        // SSL_CERT_FILE); localhost is the WebAuthn RP ID Chromium accepts.
        let (serve, issuer) = try await LatchkeyServe.start(
            [
                "--port", String(port), "--issuer", "http://localhost:\(port)", "--client-metadata-documents", "allow",
                "--client-metadata-local-network", "--client-registration", "open",
            ],
            environment: ["LATCHKEY_ADMIN_TOKEN": Self.adminToken, "SSL_CERT_FILE": certificates.ca.path]
        )
        defer { ChildProcess.stop(serve) }
        let admin = AdminAPIClient(issuer: issuer, token: Self.adminToken)
        // Two MCP servers checking tokens the same way: the second refuses the first's token
        // for its audience alone.
        let first = try await Self.startServer(issuer: issuer, admin: admin, format: format)
        defer { ChildProcess.stop(first.process) }
        let second = try await Self.startServer(issuer: issuer, admin: admin, format: format)
        defer { ChildProcess.stop(second.process) }

        let created = try await admin.call(AdminAPI.createIdentity, body: .init(username: "grace", email: "grace@example.com"))
        let identity = try #require(created.answer, "\(created.status)")
        let bindURL = try #require(URL(string: identity.bindURL))

        let chromium = try await Chromium()
        let browser = try await chromium.session()
        let outcome: Result<Void, any Error>
        do {
            _ = try await browser.addVirtualAuthenticator()
            try await BrowserHarness.registerPasskey(in: browser, at: bindURL)

            var arguments = ["python3", PythonInterop.scripts.appendingPathComponent("mcp_client.py").path, first.resource.absoluteString, second.resource.absoluteString, mode]
            if mode == "metadata-document" { arguments += [certificates.certificate.path, certificates.key.path] }
            let (client, output) = try ChildProcess.start(URL(fileURLWithPath: "/usr/bin/env"), arguments, mergingErrors: true)
            defer { ChildProcess.stop(client) }
            let (line, transcript) = await ChildProcess.firstLine(of: output, timeout: .seconds(60)) { $0.hasPrefix("AUTHORIZE ") }
            let authorize = try #require(line.flatMap { URL(string: String($0.dropFirst("AUTHORIZE ".count))) }, "the MCP client asked for no authorization: \(transcript)")
            let query = URLComponents(url: authorize, resolvingAgainstBaseURL: false)?.queryItems ?? []
            #expect(query.first { $0.name == "resource" }?.value == first.resource.absoluteString, "RFC 8707: the SDK names the MCP server")

            // The passkey on the sign-in page, then the consent panel naming the agent.
            try await browser.open(authorize)
            try await browser.wait(until: "document.getElementById('consent') && !document.getElementById('consent').hidden", timeout: 30, what: "the consent panel")
            let shown = try await browser.run("return document.getElementById('consent-client').textContent + ' | ' + document.getElementById('consent-host').textContent;")?.stringValue ?? ""
            #expect(shown.hasPrefix("MCP research agent (") && shown.hasSuffix(" | 127.0.0.1"), "\(shown)")
            _ = try await browser.run("document.getElementById('allow-button').click(); return true;")
            try await browser.wait(until: "location.href.startsWith('http://127.0.0.1:') && location.pathname == '/callback'", what: "the redirect to the MCP client")

            let status = await ChildProcess.waitForExit(client)
            let rest = String(decoding: await ChildProcess.drain(output), as: UTF8.self)
            try #require(status == 0, "the MCP client failed: \(rest)")
            let summary = try JSONValue(json: Data(try #require(rest.split(separator: "\n").last, "\(rest)").utf8))
            let whoami = try #require(summary["whoami"], "\(rest)")
            #expect(whoami["sub"]?.stringValue == identity.identity.id && whoami["resource"]?.stringValue == first.resource.absoluteString, "\(summary)")
            let clientID = summary["clientID"]?.stringValue ?? ""
            if mode == "metadata-document" {
                #expect(clientID.hasPrefix("https://localhost:") && clientID.hasSuffix("/agent/client.json") && whoami["client_id"]?.stringValue == clientID, "\(summary)")
            } else {
                #expect(clientID.hasPrefix("dyn-") && whoami["client_id"]?.stringValue == clientID, "\(summary)")
            }
            #expect(summary["secondStatus"]?.intValue == 401, "the second MCP server took a token for the first: \(summary)")

            let page = try await admin.call(AdminAPI.events, query: [(AdminAPI.EventQuery.limit, "1000")])
            let events = try #require(page.answer, "\(page.status)").events
            #expect(events.contains { $0.type == .consentGranted && $0.client == clientID }, "consent is audited")
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await browser.close()
        try outcome.get()
    }

    @Test("latchkey api reaches the MCP server's endpoint from its URL and an allowed provider, and never asks one not allowed")
    func latchkeyAPI() async throws {
        try #require(await PythonInterop.available(["mcp", "jwt"]), "python3 lacks the MCP Python SDK (mcp) or PyJWT: .ci/run installs them")
        let (serve, issuer) = try await LatchkeyServe.start(["--port", "0"], environment: ["LATCHKEY_ADMIN_TOKEN": Self.adminToken])
        defer { ChildProcess.stop(serve) }
        let admin = AdminAPIClient(issuer: issuer, token: Self.adminToken)
        let server = try await Self.startServer(issuer: issuer, admin: admin, format: "opaque")
        defer { ChildProcess.stop(server.process) }

        let scratch = try TemporaryDirectory()
        let environment = ["LATCHKEY_STORE": scratch.url.appendingPathComponent("vault").path, "LATCHKEY_PASSPHRASE": "correct horse battery staple"]
        let created = try await admin.call(AdminAPI.createIdentity, body: .init(username: "ada", email: "ada@example.com"))
        let identity = try #require(created.answer, "\(created.status)")
        let bound = try await LatchkeyCommand.run(["bind", identity.bindURL], environment: environment)
        try #require(bound.status == 0, "\(bound.stderr)")

        let call = [
            "api", server.resource.absoluteString, "-X", "POST", "-H", "Accept: application/json, text/event-stream",
            "--data", #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
        ]
        let answered = try await LatchkeyCommand.run(call + ["--allow-provider", issuer.absoluteString], environment: environment)
        #expect(answered.status == 0, "\(answered.stderr)")
        let reply = try JSONValue(json: Data(answered.stdout.utf8))
        let text = try #require(reply["result"]?["content"]?.arrayValue?.first?["text"]?.stringValue, "\(answered.stdout)")
        let whoami = try JSONValue(json: Data(text.utf8))
        #expect(whoami["sub"]?.stringValue == identity.identity.id && whoami["client_id"]?.stringValue == "latchkey-cli" && whoami["resource"]?.stringValue == server.resource.absoluteString)

        // A provider the user did not allow is never asked: exit 1, the reason on stderr.
        let refused = try await LatchkeyCommand.run(call + ["--allow-provider", "https://id.example"], environment: environment)
        #expect(refused.status == 1 && refused.stderr.contains("none of which is allowed"), "\(refused.stderr)")
        // --allow-provider and --issuer are two ways, not one.
        let both = try await LatchkeyCommand.run(call + ["--allow-provider", issuer.absoluteString, "--issuer", issuer.absoluteString], environment: environment)
        #expect(both.status == 2)
    }
}
