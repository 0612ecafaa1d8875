import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyTestSupport
import Synchronization
import Testing

/// Secrets on a careless host (docs/SECURITY.md, "Secrets people choose", "Where tokens
/// go"): the admin token `serve` is given or makes, weak admin tokens and passphrases, and
/// where `latchkey api` sends a token. The `latchkey` binary as a process.
extension HostileInputSuite {
    /// `latchkey serve --port 0 [extra]`, until its ready text (the `Admin token:` line, or
    /// the JSON line with the issuer); then stopped. What it wrote to stdout and stderr until then.
    static func serveTranscript(_ extra: [String], environment: [String: String]) async throws -> String {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let (server, output) = try ChildProcess.start(CommandLineTests.binary, ["serve", "--port", "0"] + extra, environment: environment, mergingErrors: true)
        defer { ChildProcess.stop(server) }
        let (line, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("Admin token") || $0.contains("\"issuer\"") }
        try #require(line != nil, "serve did not come up: \(transcript)")
        return transcript
    }

    /// `latchkey serve --port 0 [arguments]` expected to refuse to start: its status and
    /// output once it exits; nil when it is still serving after 20 s (then it is stopped),
    /// so a serve that wrongly starts fails the test instead of hanging it.
    static func serveRefusal(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, output: String)? {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let (server, output) = try ChildProcess.start(CommandLineTests.binary, ["serve", "--port", "0"] + arguments, environment: environment, mergingErrors: true)
        let deadline = Date().addingTimeInterval(20)
        while server.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard !server.isRunning else {
            ChildProcess.stop(server)
            return nil
        }
        return (server.terminationStatus ?? -1, String(decoding: await ChildProcess.drain(output), as: UTF8.self))
    }

    static func adminStatus(_ issuer: String, token: String) async throws -> Int {
        let url = try #require(URL(string: issuer)).appendingPathComponent("admin/outbox")
        return try await HTTP1Transport().send(TransportRequest(method: "GET", url: url, headers: ["Authorization": "Bearer \(token)"])).status
    }

    @Test("serve never prints an admin token it was given, by environment, file or credential, as text or JSON")
    func suppliedAdminTokenNotPrinted() async throws {
        let directory = try TemporaryDirectory()
        let token = try AdminTokenCases.strong()
        let file = directory.url.appendingPathComponent("admin-token")
        try Data((token + "\n").utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let credentials = try directory.subdirectory("credentials")
        try Data(token.utf8).write(to: credentials.appendingPathComponent("latchkey-admin-token"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: credentials.appendingPathComponent("latchkey-admin-token").path)
        let cases: [(arguments: [String], environment: [String: String], says: String)] = [
            ([], ["LATCHKEY_ADMIN_TOKEN": token], "LATCHKEY_ADMIN_TOKEN"),
            (["--json"], ["LATCHKEY_ADMIN_TOKEN": token], "\"adminTokenSource\":\"environment\""),
            (["--admin-token-file", file.path], [:], file.path),
            (["--admin-token-file", file.path, "--json"], [:], "\"adminTokenSource\":\"file\""),
            ([], ["CREDENTIALS_DIRECTORY": credentials.path], "systemd credential"),
        ]
        for (arguments, environment, says) in cases {
            let transcript = try await Self.serveTranscript(arguments, environment: environment)
            #expect(!transcript.contains(token), "\(arguments) \(environment.keys.sorted()): the token was printed")
            #expect(transcript.contains(says), "\(arguments): \(transcript)")
        }
    }

    @Test("a token serve makes is kept 0600 in the data directory (never printed to a pipe), works, and is read back on restart")
    func generatedAdminTokenKept() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.url.appendingPathComponent("data")
        let first = try await Self.serveTranscript(["--data-dir", data.path, "--json"], environment: [:])
        let kept = data.appendingPathComponent("admin-token")
        let token = try String(contentsOf: kept, encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(token.count == 43, "a 256-bit base64url token: \(token.count)")
        #expect(!first.contains(token), "the generated token reached stdout: \(first)")
        #expect(first.contains(kept.path) && first.contains("\"adminTokenSource\":\"generated\""), "\(first)")
        let mode = try #require(FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        // Restarted on the same directory: the same token, and it opens the admin API.
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path))
        let (server, issuer) = try await LatchkeyServe.start(["--port", "0", "--data-dir", data.path])
        defer { ChildProcess.stop(server) }
        #expect(try await Self.adminStatus(issuer.absoluteString, token: token) == 200)
        #expect(try String(contentsOf: kept, encoding: .utf8).trimmingCharacters(in: .newlines) == token)

        // Without a data directory and with stdout a pipe: a private 0600 file, named, that
        // goes when serve ends (the in-memory provider it opens is gone then).
        let (memoryServer, output) = try ChildProcess.start(CommandLineTests.binary, ["serve", "--port", "0"], environment: [:], mergingErrors: true)
        defer { ChildProcess.stop(memoryServer) }
        let (line, memory) = await ChildProcess.firstLine(of: output) { $0.contains("Admin token") }
        try #require(line != nil, "serve did not come up: \(memory)")
        let path = String(try #require(memory.firstMatch(of: /kept in (\S+admin-token)/)?.1, "\(memory)"))
        let made = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(!memory.contains(made) && made.count == 43)
        let madeMode = try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(madeMode == 0o600)
        let madeDirectory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        ChildProcess.stop(memoryServer)
        #expect(!FileManager.default.fileExists(atPath: madeDirectory), "the token's directory outlived serve: \(madeDirectory)")
        try? FileManager.default.removeItem(atPath: madeDirectory)

        // Refused after the token was made: nothing is left either.
        let refusal = try #require(try await Self.serveRefusal(["--json", "--rate-limit-per-minute", "0"], environment: ["TMPDIR": directory.url.path]))
        #expect(refusal.status != 0, "\(refusal.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("latchkey-serve-") }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    enum AdminTokenCases {
        static func strong() throws -> String { Base64URL.encode(try SecureRandom.bytes(count: 32)) }
        static let weak = [
            String(repeating: "password", count: 4), String(repeating: "0", count: 40), String(repeating: "ab", count: 20),
            "qwertyuiopasdfghjklzxcvbnm1234567890", "correcthorsebatterystaplecorrecthorse",
        ]
    }

    @Test("a database password on the command line is refused by serve and admin events verify, without echoing it; the same URL from $LATCHKEY_DATABASE_URL is taken, and --database without one")
    func databasePasswordNotFromArgv() async throws {
        let secret = "s3cret-db-pw"
        // A port nothing listens on: a URL that is taken fails to connect, later.
        let urls = [
            "postgres://latchkey:\(secret)@127.0.0.1:1/latchkey",
            "postgresql://latchkey:\(secret)@127.0.0.1:1/latchkey?sslmode=disable",
            "postgres://latchkey:@127.0.0.1:1/latchkey",
            // Not a URL URLComponents takes, a password in it all the same.
            "postgres://latchkey:\(secret)@[127.0.0.1:1/latchkey",
        ]
        let directory = try TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("store.key")
        try Data(repeating: 7, count: 32).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        for url in urls {
            let refusal = try #require(try await Self.serveRefusal(["--database", url], environment: [:]), "serve started with \(url)")
            #expect(refusal.status != 0)
            #expect(refusal.output.contains("--database must not carry a password"), "\(refusal.output)")
            #expect(!refusal.output.contains(secret), "the password was echoed: \(refusal.output)")
            let verify = try await LatchkeyCommand.run(["admin", "events", "verify", "--database", url, "--store-key-file", keyFile.path])
            #expect(verify.status != 0)
            #expect(verify.stderr.contains("--database must not carry a password"), "\(verify.stderr)")
            #expect(!(verify.stdout + verify.stderr).contains(secret))
        }
        // From the environment the URL is taken: serve comes up (answering 503 until the
        // database answers), and says nothing of the password.
        let transcript = try await Self.serveTranscript(
            ["--json", "--store-key-file", keyFile.path],
            environment: ["LATCHKEY_DATABASE_URL": urls[0], "LATCHKEY_ADMIN_TOKEN": try AdminTokenCases.strong()]
        )
        #expect(!transcript.contains("must not carry a password"), "\(transcript)")
        #expect(!transcript.contains(secret), "\(transcript)")
        // Without a password in it, --database is taken too; the password comes from $PGPASSWORD.
        let withoutPassword = try await LatchkeyCommand.run(
            ["admin", "events", "verify", "--database", "postgres://latchkey@127.0.0.1:1/latchkey", "--store-key-file", keyFile.path],
            environment: ["PGPASSWORD": secret]
        )
        #expect(withoutPassword.status != 0, "nothing listens on port 1")
        #expect(!withoutPassword.stderr.contains("must not carry a password"), "\(withoutPassword.stderr)")
        #expect(!(withoutPassword.stdout + withoutPassword.stderr).contains(secret))
    }

    @Test("serve refuses low-entropy admin tokens (a repeated unit, a run, a keyboard sequence, a common word repeated); admin generate-token prints one it takes")
    func weakAdminTokens() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        for weak in AdminTokenCases.weak {
            let refusal = try await Self.serveRefusal([], environment: ["LATCHKEY_ADMIN_TOKEN": weak])
            #expect(refusal.map { $0.status != 0 && $0.output.contains("too weak") } == true, "\(weak): \(String(describing: refusal))")
        }
        let generated = try await ChildProcess.run(CommandLineTests.binary, ["admin", "generate-token"])
        #expect(generated.status == 0)
        let token = generated.stdout.trimmingCharacters(in: .newlines)
        #expect(SecretStrength.estimate(token).bits >= 200, "\(token)")
        let (server, issuer) = try await LatchkeyServe.start(["--port", "0"], environment: ["LATCHKEY_ADMIN_TOKEN": token])
        defer { ChildProcess.stop(server) }
        #expect(try await Self.adminStatus(issuer.absoluteString, token: token) == 200)
    }

    @Test("new vaults refuse a short passphrase, twelve spaces, aaaaaaaaaaaa, 123456789012 and passwordpass unless --allow-weak-passphrase; such a vault still opens")
    func trivialPassphrases() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let cases = [("x", "at least 12 characters")] + [String(repeating: " ", count: 12), "aaaaaaaaaaaa", "123456789012", "passwordpass", "qwertyuiop12", "P@ssw0rd2024"].map {
            ($0, "too easy to guess")
        }
        for (passphrase, says) in cases {
            let vault = try TemporaryVault()
            defer { vault.cleanUp() }
            let environment = Self.cliEnvironment(vault, passphrase: passphrase)
            let refused = try await CommandLineTests.latchkey(["list"], environment: environment)
            #expect(refused.status == 1 && refused.stderr.contains(says), "\(passphrase): \(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: vault.directory.appendingPathComponent("cli/vault.json").path))
            let allowed = try await CommandLineTests.latchkey(["list", "--allow-weak-passphrase"], environment: environment)
            #expect(allowed.status == 0, "\(allowed.stderr)")
            let reopened = try await CommandLineTests.latchkey(["list"], environment: environment)
            #expect(reopened.status == 0, "an existing vault opens as before: \(reopened.stderr)")
        }
    }

    @Test("latchkey api sends a token to the issuer's origin and --resource-origin ones only; another is refused before any request, sign-in included")
    func apiTokenOrigins() async throws {
        let seen = Mutex<[String]>([])
        let router = Router()
        router.get("resource") { request, _ -> Response in
            seen.withLock { $0.append(request.headers[.authorization] ?? "") }
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "{}")))
        }
        try await LiveServer.run(router, label: "other-origin") { other in
            try await TokenCommandLineTests.withBoundStore { issuer, _, environment in
                let url = other.appendingPathComponent("resource").absoluteString
                let base = ["--issuer", issuer.absoluteString]
                let otherOrigin = try #require(WebOrigin(other)).description
                let refused = try await CommandLineTests.latchkey(["api", url] + base, environment: environment)
                #expect(refused.status == 1 && refused.stderr.contains(otherOrigin) && refused.stderr.contains("--resource-origin"), "\(refused.stderr)")
                // The issuer's origin in the URL's user part changes nothing.
                let disguised = "http://\(issuer.host ?? ""):\(issuer.port ?? 0)@127.0.0.1:\(other.port ?? 0)/resource"
                let tricked = try await CommandLineTests.latchkey(["api", disguised] + base, environment: environment)
                #expect(tricked.status != 0, "\(tricked.stderr)")
                #expect(seen.withLock { $0.isEmpty }, "nothing reached the other origin")
                #expect(try await TokenCommandLineTests.signCount(environment) == 0, "no sign-in was made for a refused call")

                for bad in ["https://api.example.com/path", "ftp://api.example.com", "http://example.com", "https://user@api.example.com", "not a url"] {
                    let invalid = try await CommandLineTests.latchkey(["api", url, "--resource-origin", bad] + base, environment: environment)
                    #expect(invalid.status == 2, "\(bad): \(invalid.stderr)")
                }
                let allowed = try await CommandLineTests.latchkey(["api", url, "--resource-origin", other.absoluteString] + base, environment: environment)
                #expect(allowed.status == 0, "\(allowed.stderr)")
                #expect(seen.withLock { $0.count == 1 && $0[0].hasPrefix("Bearer ") })
            }
        }
    }
}
