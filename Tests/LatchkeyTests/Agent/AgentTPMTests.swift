import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// A vault whose key the TPM seals, held by the agent (issue 36): the agent unseals it once
/// with its TPM; commands with no TPM and no key bind TPM credentials, list them and sign
/// in through it, the TPM work all done in the agent.
@Suite("latchkey agent over a TPM-sealed vault (swtpm)", .requires(if: SoftwareTPM.available, "skipped: swtpm or tpm2-openssl is not installed (.ci/run installs them)"))
struct AgentTPMTests {
    typealias CLI = CommandLineTests

    @Test("agent --vault-key tpm: bind --key-protection tpm, list and authenticate through it from commands without a TPM")
    func sealedVaultThroughAgent() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CLI.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await CLI.serve()
        defer { CLI.stop(server) }
        let tpm = try await SoftwareTPM()
        let scratch = try TemporaryDirectory()
        let store = scratch.url.appendingPathComponent("vault").path
        let agent = try await RunningAgent.start(
            ["--socket", scratch.url.appendingPathComponent("agent.sock").path, "--vault-key", "tpm"],
            environment: ["LATCHKEY_STORE": store, "TPM2OPENSSL_TCTI": tpm.tcti], in: scratch
        )
        defer { agent.stop() }
        // No TPM for the commands (a port nothing listens on) and no vault key.
        let environment = ["LATCHKEY_STORE": store, "LATCHKEY_AGENT_SOCK": agent.socket, "TPM2OPENSSL_TCTI": "swtpm:host=127.0.0.1,port=1"]

        let created = try await CLI.latchkey(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"], environment: ["LATCHKEY_ADMIN_TOKEN": CLI.adminToken]
        )
        let bindURL = try #require(try CLI.object(created.stdout)["bindURL"]?.stringValue, "\(created.stderr)")
        let bound = try await CLI.latchkey(["bind", bindURL, "--key-protection", "tpm", "--json", "-v"], environment: environment)
        #expect(bound.status == 0 && bound.stderr.contains("through the agent"), "\(bound.stderr) \(agent.logged)")
        #expect(try CLI.object(bound.stdout)["credential"]?["keyProtection"]?.stringValue == "tpm", "\(bound.stdout)")

        let listed = try await CLI.latchkey(["list", "--json"], environment: environment)
        let credentials = try #require(try CLI.object(listed.stdout)["credentials"]?.arrayValue, "\(listed.stderr)")
        #expect(credentials.count == 1 && credentials.first?["usable"]?.boolValue == true, "\(credentials)")
        let signedIn = try await CLI.latchkey(["authenticate", "--issuer", issuer.absoluteString, "--json"], environment: environment)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        let header = try String(contentsOfFile: store + "/vault.json", encoding: .utf8)
        #expect(header.contains("\"keyKind\" : \"tpm\""), "\(header)")

        // Locked, it unseals again from the TPM on --unlock: no passphrase asked.
        let control = ["--socket", agent.socket]
        #expect(try await CLI.latchkey(["agent", "--lock"] + control, environment: [:]).status == 0)
        let unlocked = try await CLI.latchkey(["agent", "--unlock"] + control, environment: [:])
        #expect(unlocked.status == 0 && unlocked.stdout.contains("unlocked"), "\(unlocked.stderr)")
        let again = try await CLI.latchkey(["authenticate", "--issuer", issuer.absoluteString], environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
    }
}
