import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// The benchmark's Python peer (`scripts/peer_provider.py`: Flask, py_webauthn, Authlib;
/// docs/PERFORMANCE.md, "A Python peer") keeps speaking Latchkey's protocol: a credential
/// binds there and signs in over the redirect flow with a validated ES256 ID token. It is
/// also one more independent relying party that verifies what the vault signs.
@Suite(
    "the benchmark's Python peer provider (Flask, py_webauthn, Authlib)",
    .requires("python3 with flask, authlib and webauthn not found: skipped (.ci/run installs them)") { await PythonInterop.available(["flask", "authlib", "webauthn"]) }
)
struct PeerProviderTests {
    static let script = PythonInterop.scripts.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/peer_provider.py")

    @Test("bind at the peer, then authenticate --flow redirect: the peer's py_webauthn accepts the vault's assertion and Authlib's ID token validates")
    func bindAndSignIn() async throws {
        let (peer, line) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", Self.script.path], name: "the Python peer provider"
        ) { $0.hasPrefix("READY ") }
        defer { ChildProcess.stop(peer) }
        let issuer = try #require(URL(string: String(line.dropFirst(6)).trimmingCharacters(in: .whitespacesAndNewlines)))
        let scratch = try TemporaryDirectory()
        let environment = try CommandLineTests.vaultKeyEnvironment(scratch, "vault")

        let created = try await HTTPExchange.json(issuer.appendingPathComponent("test/identities"), ["username": "ada"])
        try #require(created.status == 201)
        let bindURL = try #require(try CommandLineTests.object(String(decoding: created.body, as: UTF8.self))["bindURL"]?.stringValue)
        let bound = try await LatchkeyCommand.run(["bind", bindURL], environment: environment)
        #expect(bound.status == 0, "\(bound.stderr)")

        for _ in 0..<2 {
            let signedIn = try await LatchkeyCommand.run(["authenticate", "--issuer", issuer.absoluteString, "--flow", "redirect", "--json"], environment: environment)
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            let claims = try CommandLineTests.object(signedIn.stdout)["claims"]
            #expect(claims?["iss"]?.stringValue == issuer.absoluteString)
        }
    }
}
