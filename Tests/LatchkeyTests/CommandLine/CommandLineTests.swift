import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// The built `latchkey` binary as a subprocess against `latchkey serve` on loopback.
@Suite("latchkey: credential commands as processes")
struct CommandLineTests {
    typealias Run = ChildProcess.Output

    static var binary: URL { LatchkeyServe.binary }
    static let adminToken = "cli-admin-token-for-the-command-line"

    /// Runs `latchkey arguments…` (``LatchkeyCommand``).
    static func latchkey(_ arguments: [String], environment: [String: String]) async throws -> Run {
        try await LatchkeyCommand.run(arguments, environment: environment)
    }

    /// An environment whose vault `name` in `scratch` opens with a raw 32-byte key given
    /// as a systemd credential (no scrypt): for tests that run many commands, so their
    /// CPU does not starve the tests running beside them.
    static func vaultKeyEnvironment(_ scratch: TemporaryDirectory, _ name: String) throws -> [String: String] {
        let credentials = try scratch.subdirectory("credentials-\(name)")
        let file = credentials.appendingPathComponent("latchkey-vault-key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return ["CREDENTIALS_DIRECTORY": credentials.path, "LATCHKEY_STORE": scratch.url.appendingPathComponent(name).path]
    }

    static func stop(_ process: SpawnedProcess) {
        ChildProcess.stop(process)
    }

    static func drain(_ pipe: Pipe) async -> Data {
        await ChildProcess.drain(pipe)
    }

    /// Starts `latchkey serve` and returns it with its issuer.
    static func serve(_ extra: [String] = []) async throws -> (SpawnedProcess, URL) {
        try await LatchkeyServe.start(["--port", "0"] + extra, environment: ["LATCHKEY_ADMIN_TOKEN": adminToken])
    }

    struct CommandFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func object(_ text: String) throws -> JSONValue {
        do {
            return try JSONValue(json: Data(text.utf8))
        } catch {
            throw TestSupportError("not JSON: \"\(text.prefix(500))\"")
        }
    }

    @Test("admin create-identity → bind → list --json → authenticate --json → authorize --json → delete, with exit codes")
    func credentialCommands() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await Self.serve()
        defer { Self.stop(server) }
        let storeScratch = try TemporaryDirectory()
        let store = storeScratch.url.appendingPathComponent("latchkey-cli")
        let environment = ["LATCHKEY_PASSPHRASE": "correct horse battery staple", "LATCHKEY_STORE": store.path]

        let created = try await Self.latchkey(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"],
            environment: environment.merging(["LATCHKEY_ADMIN_TOKEN": Self.adminToken]) { $1 }
        )
        #expect(created.status == 0, "\(created.stderr)")
        let identity = try #require((try Self.object(created.stdout)["identity"])?["id"]?.stringValue)
        let bindURL = try #require(try Self.object(created.stdout)["bindURL"]?.stringValue)

        let bound = try await Self.latchkey(["bind", bindURL, "--json"], environment: environment)
        #expect(bound.status == 0, "\(bound.stderr)")
        let boundID = try #require((try Self.object(bound.stdout)["credential"])?["id"]?.stringValue)

        let listed = try await Self.latchkey(["list", "--json"], environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        let listing = try Self.object(listed.stdout)
        #expect((listing["damaged"]?.arrayValue)?.isEmpty == true, "list --json: \(listed.stdout)")
        let credentials = try #require(listing["credentials"]?.arrayValue, "list --json: \(listed.stdout) \(listed.stderr)")
        #expect(credentials.compactMap { $0["id"]?.stringValue } == [boundID])
        #expect(credentials.first?["issuer"]?.stringValue == issuer.absoluteString)
        #expect((credentials.first?["user"])?["name"]?.stringValue == "ada")

        let signedIn = try await Self.latchkey(["authenticate", "--issuer", issuer.absoluteString, "--json"], environment: environment)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        let tokens = try Self.object(signedIn.stdout)
        #expect(tokens["accessToken"]?.stringValue != nil && tokens["idToken"]?.stringValue != nil && tokens["refreshToken"]?.stringValue != nil && tokens["expiresAt"]?.stringValue != nil)
        let claims = try #require(tokens["claims"])
        #expect(claims["sub"]?.stringValue == identity && claims["iss"]?.stringValue == issuer.absoluteString && claims["aud"]?.stringValue == "latchkey-cli")

        let authorized = try await Self.latchkey(["authorize", "--issuer", issuer.absoluteString, "--json"], environment: environment)
        #expect(authorized.status == 0, "\(authorized.stderr)")
        let code = try Self.object(authorized.stdout)
        #expect(code["code"]?.stringValue != nil && code["state"]?.stringValue != nil && code["codeVerifier"]?.stringValue != nil)
        #expect(code["redirectURI"]?.stringValue == "http://127.0.0.1/callback")

        // Failures: one line on stderr, exit 1. Usage errors: exit 2.
        let wrongPassphrase = try await Self.latchkey(["list"], environment: environment.merging(["LATCHKEY_PASSPHRASE": "wrong"]) { $1 })
        #expect(wrongPassphrase.status == 1 && wrongPassphrase.stderr.contains("wrong passphrase"))
        #expect(wrongPassphrase.stderr.split(separator: "\n").count == 1, "\(wrongPassphrase.stderr)")
        let noKey = try await Self.latchkey(["list", "--store", store.path], environment: [:])
        #expect(noKey.status == 1 && noKey.stderr.contains("LATCHKEY_PASSPHRASE"))
        let usage = try await Self.latchkey(["authenticate"], environment: environment)
        #expect(usage.status == 2, "\(usage.stderr)")
        let unknownOption = try await Self.latchkey(["list", "--frobnicate"], environment: environment)
        #expect(unknownOption.status == 2)
        let notALink = try await Self.latchkey(["bind", "https://example.com/login"], environment: environment)
        #expect(notALink.status == 2)
        let usedLink = try await Self.latchkey(["bind", bindURL], environment: environment)
        #expect(usedLink.status == 1 && usedLink.stderr.hasPrefix("latchkey: ") && usedLink.stderr.split(separator: "\n").count == 1, "\(usedLink.stderr)")

        let deleted = try await Self.latchkey(["delete", "--json", "--", boundID], environment: environment)
        let deletedFlag = try Self.object(deleted.stdout)["deleted"]?.boolValue
        #expect(deleted.status == 0 && deletedFlag == true, "\(deleted.stderr)")
        let again = try await Self.latchkey(["delete", "--", boundID], environment: environment)
        #expect(again.status == 0 && again.stdout.contains("nothing deleted"))
        let empty = try await Self.latchkey(["list", "--json"], environment: environment)
        #expect((try Self.object(empty.stdout)["credentials"]?.arrayValue)?.isEmpty == true, "\(empty.stdout)")
        let none = try await Self.latchkey(["authenticate", "--issuer", issuer.absoluteString], environment: environment)
        #expect(none.status == 1 && none.stderr.contains("no credential"))
    }

    @Test("export in one store, import in another, approved with --yes; the importer then signs in")
    func exportImport() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await Self.serve()
        defer { Self.stop(server) }
        let scratch = try TemporaryDirectory()
        let stores = (0..<2).map { scratch.url.appendingPathComponent("store-\($0)") }
        let exporterEnvironment = ["LATCHKEY_PASSPHRASE": "first device passphrase", "LATCHKEY_STORE": stores[0].path, "LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]
        let importerEnvironment = ["LATCHKEY_PASSPHRASE": "second device passphrase", "LATCHKEY_STORE": stores[1].path, "LATCHKEY_ISSUER": issuer.absoluteString]

        let created = try await Self.latchkey(["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"], environment: exporterEnvironment)
        let identity = try #require((try Self.object(created.stdout)["identity"])?["id"]?.stringValue)
        let bound = try await Self.latchkey(["bind", try #require(try Self.object(created.stdout)["bindURL"]?.stringValue), "--json"], environment: exporterEnvironment)
        let credential = try #require((try Self.object(bound.stdout)["credential"])?["id"]?.stringValue)

        // The exporter runs in the background; its first JSON line carries the code.
        let (exporter, output) = try ChildProcess.start(Self.binary, ["export", "--yes", "--no-qr", "--json", "--", credential], environment: exporterEnvironment)
        defer { if exporter.isRunning { exporter.terminate() } }
        let (first, transcript) = await ChildProcess.firstLine(of: output) { line in
            (try? Self.object(String(line)))?["event"]?.stringValue == "codeIssued"
        }
        var text = transcript
        let code = first.flatMap { (try? Self.object($0))?["code"]?.stringValue }
        let transferCode = try #require(code, "no code from export: \(text)")

        let imported = try await Self.latchkey(["import", transferCode.lowercased().replacingOccurrences(of: "-", with: " "), "--device-name", "ci-box", "--json"], environment: importerEnvironment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let importedID = try #require(((try Self.object(imported.stdout)["credentials"]?.arrayValue)?.first)?["id"]?.stringValue)
        #expect(importedID != credential)

        text += String(decoding: await ChildProcess.drain(output), as: UTF8.self)
        _ = await ChildProcess.waitForExit(exporter)
        #expect(exporter.terminationStatus == 0, "\(text)")
        let events = text.split(separator: "\n").compactMap { try? Self.object(String($0)) }
        #expect(events.compactMap { $0["event"]?.stringValue }.suffix(2) == ["importRequested", "completed"])
        #expect(events.last?["deviceName"]?.stringValue == "ci-box")

        let signedIn = try await Self.latchkey(["authenticate", "--issuer", issuer.absoluteString, "--json"], environment: importerEnvironment)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        #expect((try Self.object(signedIn.stdout)["claims"])?["sub"]?.stringValue == identity)

        // A code that was never issued: one line, exit 1.
        let wrong = try await Self.latchkey(["import", "000-000-000", "--device-name", "x"], environment: importerEnvironment)
        #expect(wrong.status == 1 && wrong.stderr.hasPrefix("latchkey: ") && wrong.stderr.split(separator: "\n").count == 1, "\(wrong.stderr)")
    }

    @Test("latchkey demo runs every step and exits 0; --json prints one object per step")
    func demo() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "latchkey is built with the tests")
        let run = try await Self.latchkey(["demo", "--json"], environment: [:])
        #expect(run.status == 0, "\(run.stderr)")
        let steps = run.stdout.split(separator: "\n").compactMap { try? Self.object(String($0)) }
        #expect(steps.compactMap { $0["name"]?.stringValue } == [
            "provider", "create-identity", "register", "list", "authenticate", "ssh-certificate", "policy-step",
            "export", "import", "authenticate-imported", "client-credentials", "device-grant", "delete", "clean-up",
        ])
        #expect(steps.allSatisfy { $0["ok"]?.boolValue == true })
        let text = try await Self.latchkey(["demo"], environment: [:])
        #expect(text.status == 0 && text.stdout.contains("Step 14: Clean up") && text.stdout.contains("ID token claims: sub "), "\(text.stdout)")
        // OpenSSH's own reading of the certificate (.ci/run installs openssh-client).
        #expect(text.stdout.contains("ssh-keygen -L reads it:") && text.stdout.contains("user certificate") && text.stdout.contains("Signing CA: ECDSA SHA256:"), "\(text.stdout)")
    }

    /// Runs `latchkey arguments… --code -` and, once the provider has e-mailed a new code
    /// to `address`, writes it to the command's stdin.
    static func latchkey(_ arguments: [String], environment: [String: String], answeringCodeFor address: String, issuer: URL) async throws -> Run {
        let before = try await outboxCodes(issuer, address).count
        let input = Pipe()
        async let run = ChildProcess.run(binary, arguments + ["--code", "-"], environment: environment, input: input.fileHandleForReading)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let codes = try await outboxCodes(issuer, address)
            if codes.count > before, let code = codes.last {
                input.fileHandleForWriting.write(Data((code + "\n").utf8))
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        try? input.fileHandleForWriting.close()
        return try await run
    }

    static func outboxCodes(_ issuer: URL, _ address: String) async throws -> [String] {
        let response = try await HTTP1Transport().send(TransportRequest(
            method: "GET", url: issuer.appendingPathComponent("admin/outbox"), headers: ["Authorization": "Bearer \(CommandLineTests.adminToken)"]
        ))
        let messages = (try? JSONValue(json: response.body))?["messages"]?.arrayValue ?? []
        return messages.filter { $0["to"]?.stringValue == address }.compactMap { $0["code"]?.stringValue }
    }

    @Test("signup → authenticate → recover on another device → authenticate; the old device is refused")
    func signUpAndRecover() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await Self.serve(["--allow-signup"])
        defer { Self.stop(server) }
        let scratch = try TemporaryDirectory()
        let stores = (0..<2).map { scratch.url.appendingPathComponent("store-\($0)") }
        let first = ["LATCHKEY_PASSPHRASE": "first device passphrase", "LATCHKEY_STORE": stores[0].path]
        let second = ["LATCHKEY_PASSPHRASE": "second device passphrase", "LATCHKEY_STORE": stores[1].path]

        let signedUp = try await Self.latchkey(
            ["signup", "--issuer", issuer.absoluteString, "--username", "grace", "--given-name", "Grace", "--family-name", "Hopper", "--email", "grace@example.com", "--json"],
            environment: first, answeringCodeFor: "grace@example.com", issuer: issuer
        )
        #expect(signedUp.status == 0, "\(signedUp.stderr)")
        #expect(((try Self.object(signedUp.stdout)["credential"])?["user"])?["displayName"]?.stringValue == "Grace Hopper")

        let signedIn = try await Self.latchkey(["authenticate", "--issuer", issuer.absoluteString, "--json"], environment: first)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        let subject = try #require((try Self.object(signedIn.stdout)["claims"])?["sub"]?.stringValue)

        let recovered = try await Self.latchkey(
            ["recover", "--issuer", issuer.absoluteString, "--username", "grace", "--json"],
            environment: second, answeringCodeFor: "grace@example.com", issuer: issuer
        )
        #expect(recovered.status == 0, "\(recovered.stderr)")
        let afterRecovery = try await Self.latchkey(["authenticate", "--issuer", issuer.absoluteString, "--json"], environment: second)
        #expect(afterRecovery.status == 0, "\(afterRecovery.stderr)")
        #expect((try Self.object(afterRecovery.stdout)["claims"])?["sub"]?.stringValue == subject)

        let oldDevice = try await Self.latchkey(["authenticate", "--issuer", issuer.absoluteString], environment: first)
        #expect(oldDevice.status == 1 && oldDevice.stderr.contains("revoked"), "\(oldDevice.stderr)")

        // Without --email and without a terminal, sign-up names the missing option.
        let missing = try await Self.latchkey(["signup", "--issuer", issuer.absoluteString, "--username", "alan", "--given-name", "Alan"], environment: second)
        #expect(missing.status == 1 && missing.stderr.contains("--email"), "\(missing.stderr)")
    }

    @Test("verify-code without a terminal: fails naming --code; with --code the bind succeeds")
    func verifyCodeOption() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await Self.serve(["--require-email-code"])
        defer { Self.stop(server) }
        let storeScratch = try TemporaryDirectory()
        let store = storeScratch.url.appendingPathComponent("latchkey-cli")
        let environment = ["LATCHKEY_PASSPHRASE": "a long enough passphrase", "LATCHKEY_STORE": store.path, "LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]
        let created = try await Self.latchkey(["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--email", "ada@example.com", "--json"], environment: environment)
        let bindURL = try #require(try Self.object(created.stdout)["bindURL"]?.stringValue)

        let withoutCode = try await Self.latchkey(["bind", bindURL], environment: environment)
        #expect(withoutCode.status == 1 && withoutCode.stderr.contains("--code"), "\(withoutCode.stderr)")
        let wrongCode = try await Self.latchkey(["bind", bindURL, "--code", "nope"], environment: environment)
        #expect(wrongCode.status == 1 && wrongCode.stderr.contains("wrong code"), "\(wrongCode.stderr)")

        let outbox = try await Self.latchkey(["admin", "outbox", "--idp", issuer.absoluteString, "--json"], environment: environment)
        let code = try #require((try Self.object(outbox.stdout)["messages"]?.arrayValue)?.last?["code"]?.stringValue)
        let bound = try await Self.latchkey(["bind", bindURL, "--code", code], environment: environment)
        #expect(bound.status == 0, "\(bound.stderr)")
    }
}
