import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// The CLI against an OAuth provider that is not ours: Authlib's RFC 7523 and RFC 8628
/// server parts (`Tests/Interop/authlib_provider.py`), as a team's Keycloak or Okta would
/// be. Authlib checks the assertion's `aud` against its token endpoint, so the client is
/// told `--assertion-audience token-endpoint`, as Okta's and Entra's documents ask.
@Suite("latchkey against an independent provider (Authlib)", .requires("python3 with authlib and flask not found: skipped (.ci/run installs them)") { await AuthlibProvider.available })
struct AuthlibInteropTests {

    static func environment(_ scratch: TemporaryDirectory) throws -> [String: String] {
        try CommandLineTests.vaultKeyEnvironment(scratch, "vault")
    }

    @Test("client credentials with the vault's client key: refused with aud = issuer (Authlib wants its token endpoint), accepted with --assertion-audience token-endpoint, kept, and used by api")
    func clientCredentials() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let provider = try await AuthlibProvider()
        let scratch = try TemporaryDirectory()
        let environment = try Self.environment(scratch)
        let issuer = provider.issuer.absoluteString
        let key = ["--issuer", issuer, "--client-id", "report-job"]
        let made = try await LatchkeyCommand.run(["client-key"] + key, environment: environment)
        try #require(made.status == 0, "\(made.stderr)")
        try await provider.register(clientID: "report-job", jwks: Data(made.stdout.utf8), grantTypes: ["client_credentials"], scope: "reports")

        let issuerAudience = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "reports"] + key, environment: environment)
        #expect(issuerAudience.status == 1 && issuerAudience.stderr.contains("aud"), "\(issuerAudience.stderr)")
        let cc = ["--client-credentials", "--scope", "reports", "--assertion-audience", "token-endpoint"]
        let first = try await LatchkeyCommand.run(["token"] + cc + key, environment: environment)
        #expect(first.status == 0 && !first.stdout.isEmpty, "\(first.stderr)")
        let again = try await LatchkeyCommand.run(["token"] + cc + key, environment: environment)
        #expect(again.stdout == first.stdout, "kept and reused")
        let called = try await LatchkeyCommand.run(["api", issuer + "/api/whoami"] + cc + key, environment: environment)
        #expect(called.status == 0, "\(called.stderr)")
        let answer = try CommandLineTests.object(called.stdout)
        #expect(answer["client_id"]?.stringValue == "report-job" && answer["scope"]?.stringValue == "reports")
    }

    @Test("device grant: login --device polls Authlib, slows down when told (5 s more), is approved, and keeps the tokens; a denial fails the login")
    func deviceGrant() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let provider = try await AuthlibProvider()
        try await provider.register(clientID: "kiosk", grantTypes: ["urn:ietf:params:oauth:grant-type:device_code"], scope: "openid profile", slowDownFirst: true)
        let scratch = try TemporaryDirectory()
        let environment = try Self.environment(scratch)
        let issuer = provider.issuer

        let (login, output, code) = try await DeviceCommandLineTests.startLogin(issuer, environment, ["--client-id", "kiosk"])
        defer { ChildProcess.stop(login) }
        let (slowed, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("\"slowDown\"") }
        let slowDown = try CommandLineTests.object(try #require(slowed, "no slow_down reported: \(transcript)"))
        #expect(slowDown["interval"]?.numberValue == 6, "1 s + 5 s (RFC 8628 §3.5)")
        try await provider.decide(userCode: code, approve: true)
        let rest = String(decoding: await ChildProcess.drain(output), as: UTF8.self)
        #expect(await ChildProcess.waitForExit(login) == 0, "\(rest)")
        let tokens = try CommandLineTests.object(try #require(rest.split(separator: "\n").last.map(String.init)))
        #expect(tokens["tokenType"]?.stringValue == "Bearer" && tokens["accessToken"]?.stringValue != nil)
        let kept = try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString, "--client-id", "kiosk"], environment: environment)
        #expect(kept.status == 0 && kept.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == tokens["accessToken"]?.stringValue, "\(kept.stderr)")

        let (second, secondOutput, secondCode) = try await DeviceCommandLineTests.startLogin(issuer, environment, ["--client-id", "kiosk"])
        defer { ChildProcess.stop(second) }
        try await provider.decide(userCode: secondCode, approve: false)
        _ = await ChildProcess.drain(secondOutput)
        #expect(await ChildProcess.waitForExit(second) == 1, "a denied login fails")
    }
}
