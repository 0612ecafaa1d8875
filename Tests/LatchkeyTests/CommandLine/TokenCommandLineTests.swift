import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyTestSupport
import Synchronization
import Testing

/// `latchkey authenticate --dpop`, `token`, `api` and `logout` as processes against
/// `latchkey serve` on loopback, with a resource server of the test's own that checks DPoP
/// proofs (issue 21).
@Suite("latchkey: kept tokens and API calls as processes")
struct TokenCommandLineTests {
    typealias Run = ChildProcess.Output

    /// A served provider, one identity bound in a fresh store, and that store's environment.
    static func withBoundStore(
        _ serveArguments: [String] = [],
        _ body: @escaping @Sendable (_ issuer: URL, _ identity: String, _ environment: [String: String]) async throws -> Void
    ) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await CommandLineTests.serve(serveArguments)
        defer { CommandLineTests.stop(server) }
        let store = try TemporaryDirectory()
        let environment = try CommandLineTests.vaultKeyEnvironment(store, "vault")
        let created = try await CommandLineTests.latchkey(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"],
            environment: environment.merging(["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]) { $1 }
        )
        try #require(created.status == 0, "\(created.stderr)")
        let identity = try #require((try CommandLineTests.object(created.stdout)["identity"])?["id"]?.stringValue)
        let bindURL = try #require(try CommandLineTests.object(created.stdout)["bindURL"]?.stringValue)
        let bound = try await CommandLineTests.latchkey(["bind", bindURL], environment: environment)
        try #require(bound.status == 0, "\(bound.stderr)")
        try await body(issuer, identity, environment)
    }

    /// The one credential's sign count: each sign-in is one assertion.
    static func signCount(_ environment: [String: String]) async throws -> Int {
        let listed = try await LatchkeyCommand.run(["list", "--json"], environment: environment)
        let credentials = try #require(try CommandLineTests.object(listed.stdout)["credentials"]?.arrayValue, "\(listed.stderr)")
        return try #require(credentials.first?["signCount"]?.intValue)
    }

    @Test("authenticate --dpop, then api <issuer>/userinfo --dpop prints the userinfo; later calls use the kept tokens (no sign-in); logout revokes and forgets")
    func endToEnd() async throws {
        try await Self.withBoundStore { issuer, identity, environment in
            let signedIn = try await LatchkeyCommand.run(["authenticate", "--issuer", issuer.absoluteString, "--dpop", "--json"], environment: environment)
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            let tokens = try CommandLineTests.object(signedIn.stdout)
            #expect(tokens["tokenType"]?.stringValue == "DPoP")
            let accessToken = try #require(tokens["accessToken"]?.stringValue)
            #expect(try await Self.signCount(environment) == 1)

            let userinfo = issuer.appendingPathComponent("userinfo").absoluteString
            let called = try await LatchkeyCommand.run(["api", userinfo, "--issuer", issuer.absoluteString, "--dpop"], environment: environment)
            #expect(called.status == 0, "\(called.stderr)")
            let claims = try CommandLineTests.object(called.stdout)
            #expect(claims["sub"]?.stringValue == identity && claims["preferred_username"]?.stringValue == "ada", "\(called.stdout)")

            // Within the token's lifetime: no sign-in, the same token.
            let again = try await LatchkeyCommand.run(["api", userinfo, "--issuer", issuer.absoluteString, "--dpop", "--json"], environment: environment)
            #expect(again.status == 0, "\(again.stderr)")
            let response = try CommandLineTests.object(again.stdout)
            #expect(response["status"]?.intValue == 200 && (response["body"])?["sub"]?.stringValue == identity)
            #expect((response["headers"])?["content-type"]?.stringValue == "application/json")
            let printed = try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString, "--dpop"], environment: environment)
            #expect(printed.status == 0 && printed.stdout == accessToken + "\n", "\(printed.stderr)")
            #expect(try await Self.signCount(environment) == 1, "the kept tokens were used")

            // The kept tokens are sealed: no vault file holds them.
            let vaultDirectory = URL(fileURLWithPath: try #require(environment["LATCHKEY_STORE"]))
            let files = try #require(FileManager.default.enumerator(at: vaultDirectory, includingPropertiesForKeys: nil))
            for case let file as URL in files where !file.hasDirectoryPath {
                let bytes = try Data(contentsOf: file)
                #expect(bytes.range(of: Data(accessToken.utf8)) == nil, "\(file.lastPathComponent) holds the access token in clear")
            }

            // The access token revoked at the provider: api is refused (401 invalid_token),
            // refreshes the kept tokens and calls again; still no sign-in.
            let revoked = try await HTTP1Transport().send(TransportRequest(
                method: "POST", url: issuer.appendingPathComponent("revoke"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: FormEncoding.encode([("token", accessToken), ("token_type_hint", "access_token"), ("client_id", "latchkey-cli")])
            ))
            #expect(revoked.status == 200)
            let afterRevocation = try await LatchkeyCommand.run(["api", userinfo, "--issuer", issuer.absoluteString, "--dpop"], environment: environment)
            #expect(afterRevocation.status == 0 && afterRevocation.stdout.contains(identity), "\(afterRevocation.stdout) \(afterRevocation.stderr)")
            let renewed = try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString], environment: environment)
            #expect(renewed.status == 0 && renewed.stdout != accessToken + "\n")
            #expect(try await Self.signCount(environment) == 1, "a refresh, not a sign-in")

            // Not 2xx: the body still on stdout, exit 1, one line on stderr.
            let missing = try await LatchkeyCommand.run(["api", issuer.appendingPathComponent("no-such-thing").absoluteString, "--issuer", issuer.absoluteString], environment: environment)
            #expect(missing.status == 1 && missing.stdout.contains("error") && missing.stderr.contains("answered HTTP 404"), "\(missing.stdout) \(missing.stderr)")

            let logout = try await LatchkeyCommand.run(["logout", "--issuer", issuer.absoluteString], environment: environment)
            #expect(logout.status == 0 && logout.stdout.contains("1 kept sign-in"), "\(logout.stdout) \(logout.stderr)")

            // Three at once after the logout: one sign-in between them, one token.
            let concurrent = try await withThrowingTaskGroup(of: Run.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString, "--dpop"], environment: environment) }
                }
                return try await group.reduce(into: [Run]()) { $0.append($1) }
            }
            #expect(concurrent.allSatisfy { $0.status == 0 }, "\(concurrent.map(\.stderr))")
            #expect(Set(concurrent.map(\.stdout)).count == 1 && concurrent[0].stdout != renewed.stdout)
            #expect(try await Self.signCount(environment) == 2)
        }
    }

    /// What the test's resource server saw.
    struct Seen: Sendable {
        var method = ""
        var body = ""
        var contentType: String?
        var custom: String?
        var thumbprint: String?
        var proofError: String?
    }

    @Test("authenticate picks the authorization challenge endpoint by itself; --flow challenge and --flow redirect both sign in; another --flow is a usage error")
    func flows() async throws {
        try await Self.withBoundStore { issuer, identity, environment in
            for flow in [[], ["--flow", "challenge"], ["--flow", "redirect"], ["--flow", "challenge", "--dpop"]] {
                let run = try await LatchkeyCommand.run(["authenticate", "--issuer", issuer.absoluteString, "--json"] + flow, environment: environment)
                #expect(run.status == 0, "\(flow): \(run.stderr)")
                #expect((try CommandLineTests.object(run.stdout)["claims"])?["sub"]?.stringValue == identity, "\(flow)")
            }
            let bogus = try await LatchkeyCommand.run(["authenticate", "--issuer", issuer.absoluteString, "--flow", "browser"], environment: environment)
            #expect(bogus.status == 2)
        }
    }

    @Test("api to another resource server: the DPoP proof verifies there; --data text, @file and -; -X; -H; headers latchkey sets are refused")
    func resourceServer() async throws {
        let seen = Mutex<[Seen]>([])
        let verifier = DPoPProofVerifier()
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put] {
            router.on("resource", method: method) { request, _ -> Response in
                var record = Seen(method: request.method.rawValue, contentType: request.headers[.contentType])
                record.body = String(buffer: try await request.body.collect(upTo: 1 << 20))
                record.custom = request.headers.first { $0.name.canonicalName == "x-test" }?.value
                let proofs = request.headers.filter { $0.name.canonicalName == "dpop" }.map(\.value)
                let token = String((request.headers[.authorization] ?? "").dropFirst("DPoP ".count))
                do {
                    let url = try #require(URL(string: "http://\(request.head.authority ?? "")/resource"))
                    record.thumbprint = try verifier.verify(proofs, method: request.method.rawValue, url: url, accessToken: token).thumbprint
                } catch {
                    record.proofError = "\(error)"
                }
                seen.withLock { $0.append(record) }
                return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"seen\":true}")))
            }
        }
        try await LiveServer.run(router, label: "resource") { resource in
            try await Self.withBoundStore { issuer, _, environment in
                let url = resource.appendingPathComponent("resource").absoluteString
                let base = ["--issuer", issuer.absoluteString, "--dpop", "--resource-origin", resource.absoluteString]
                let get = try await LatchkeyCommand.run(["api", url, "-H", "X-Test: one"] + base, environment: environment)
                #expect(get.status == 0 && get.stdout == "{\"seen\":true}", "\(get.stdout) \(get.stderr)")
                let thumbprint = try #require(seen.withLock { $0.last?.thumbprint }, "\(seen.withLock { $0.last?.proofError ?? "" })")
                #expect(seen.withLock { $0.last?.method == "GET" && $0.last?.custom == "one" })

                let text = try await LatchkeyCommand.run(["api", url, "--data", "{\"a\":1}"] + base, environment: environment)
                #expect(text.status == 0, "\(text.stderr)")
                #expect(seen.withLock { $0.last.map { $0.method == "POST" && $0.body == "{\"a\":1}" && $0.contentType == "application/json" } ?? false })

                let directory = try TemporaryDirectory()
                let file = directory.url.appendingPathComponent("body.txt")
                try Data("from a file".utf8).write(to: file)
                let fromFile = try await LatchkeyCommand.run(["api", url, "-X", "PUT", "--data", "@\(file.path)", "-H", "Content-Type: text/plain"] + base, environment: environment)
                #expect(fromFile.status == 0, "\(fromFile.stderr)")
                #expect(seen.withLock { $0.last.map { $0.method == "PUT" && $0.body == "from a file" && $0.contentType == "text/plain" } ?? false })

                let stdin = try #require(FileHandle(forReadingAtPath: file.path))
                defer { try? stdin.close() }
                let fromStdin = try await ChildProcess.run(
                    CommandLineTests.binary, ["api", url, "--data", "-"] + base, environment: environment, removing: [], input: stdin
                )
                #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
                #expect(seen.withLock { $0.last?.body == "from a file" })
                // Every proof was made with the same key: the credential's DPoP key.
                #expect(seen.withLock { $0.allSatisfy { $0.thumbprint == thumbprint && $0.proofError == nil } })

                let tooLarge = directory.url.appendingPathComponent("large.bin")
                try Data(count: (16 << 20) + 1).write(to: tooLarge)
                let overLimit = try await LatchkeyCommand.run(["api", url, "--data", "@\(tooLarge.path)"] + base, environment: environment)
                #expect(overLimit.status == 1 && overLimit.stderr.contains("over 16 MiB"), "\(overLimit.stderr)")

                let count = seen.withLock { $0.count }
                for header in ["Authorization: Basic eA", "DPoP: x", "Bad Name: x", "X-Test", "Host: elsewhere"] {
                    let refused = try await LatchkeyCommand.run(["api", url, "-H", header] + base, environment: environment)
                    #expect(refused.status == 2, "\(header): \(refused.stderr)")
                }
                let badMethod = try await LatchkeyCommand.run(["api", url, "-X", "get\r\nX: y"] + base, environment: environment)
                #expect(badMethod.status == 2)
                let offLoopback = try await LatchkeyCommand.run(["api", "http://example.com/resource"] + base, environment: environment)
                #expect(offLoopback.status == 1 && offLoopback.stderr.contains("https"), "\(offLoopback.stderr)")
                #expect(seen.withLock { $0.count } == count, "nothing refused reached a server")
            }
        }
    }

    @Test("authenticate --dpop and api --dpop at a provider that answers with bearer tokens fail, naming DPoP")
    func providerWithoutDPoP() async throws {
        let store = try TemporaryDirectory()
        let environment = try CommandLineTests.vaultKeyEnvironment(store, "vault")
        try await HostileOIDCProvider.run(.subject) { base in
            let bind = try await LatchkeyCommand.run(["bind", "\(base.absoluteString)/v1/bind/job?token=t"], environment: environment)
            try #require(bind.status == 0, "\(bind.stderr)")
            let signIn = try await LatchkeyCommand.run(["authenticate", "--issuer", base.absoluteString, "--dpop"], environment: environment)
            #expect(signIn.status == 1 && signIn.stderr.contains("does not support DPoP"), "\(signIn.stderr)")
            let api = try await LatchkeyCommand.run(["api", "\(base.absoluteString)/userinfo", "--issuer", base.absoluteString, "--dpop"], environment: environment)
            #expect(api.status == 1 && api.stderr.contains("does not support DPoP"), "\(api.stderr)")
        }
    }
}
