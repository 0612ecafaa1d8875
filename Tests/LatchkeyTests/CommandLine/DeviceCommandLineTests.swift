import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// `latchkey login --device` on a host with no credential, approved or denied by
/// `latchkey approve`/`deny` from a host holding one, as processes against `latchkey serve`
/// (RFC 8628; docs/PROTOCOL.md section 7).
@Suite("latchkey: device sign-in and approval as processes")
struct DeviceCommandLineTests {

    /// Starts `latchkey login --device --json` in the background and returns it with its
    /// user code (the first line of its output).
    static func startLogin(_ issuer: URL, _ environment: [String: String], _ extra: [String] = []) async throws -> (SpawnedProcess, Pipe, String) {
        let (process, pipe) = try ChildProcess.start(
            CommandLineTests.binary, ["login", "--device", "--issuer", issuer.absoluteString, "--json", "--no-qr"] + extra, environment: environment
        )
        let (line, transcript) = await ChildProcess.firstLine(of: pipe) { $0.contains("\"userCode\"") }
        let first = try #require(line, "login --device printed no code: \(transcript)")
        let code = try #require(try CommandLineTests.object(first)["userCode"]?.stringValue)
        return (process, pipe, code)
    }

    @Test("login --device shows a code; approve without --yes off a terminal is a usage error; approve --yes signs the device in (tokens kept, token reuses them); the code decides once; deny ends a login with an error; wrong codes are refused")
    func deviceSignIn() async throws {
        try await TokenCommandLineTests.withBoundStore { issuer, identity, approver in
            let scratch = try TemporaryDirectory()
            let device = try CommandLineTests.vaultKeyEnvironment(scratch, "device")

            let (login, output, code) = try await Self.startLogin(issuer, device)
            defer { ChildProcess.stop(login) }
            #expect(code.count == 9 && code.dropFirst(4).first == "-", "XXXX-XXXX: \(code)")

            let unasked = try await LatchkeyCommand.run(["approve", code, "--issuer", issuer.absoluteString], environment: approver)
            #expect(unasked.status == 2 && unasked.stderr.contains("--yes"), "\(unasked.stderr)")

            let approved = try await LatchkeyCommand.run(["approve", code.lowercased(), "--issuer", issuer.absoluteString, "--yes", "--json"], environment: approver)
            #expect(approved.status == 0, "\(approved.stderr)")
            #expect(approved.stderr.contains("latchkey-cli") && approved.stderr.contains("127.0.0.1"), "what is asked is shown: \(approved.stderr)")
            #expect(try CommandLineTests.object(approved.stdout)["decision"]?.stringValue == "approve")

            let rest = String(decoding: await ChildProcess.drain(output), as: UTF8.self)
            #expect(await ChildProcess.waitForExit(login) == 0, "\(rest)")
            let tokens = try CommandLineTests.object(try #require(rest.split(separator: "\n").last.map(String.init)))
            #expect((tokens["claims"])?["sub"]?.stringValue == identity, "the approver's identity signed in: \(rest)")
            #expect(tokens["refreshToken"]?.stringValue != nil)
            #expect((tokens["claims"])?["nonce"] == nil, "RFC 8628 has no nonce")

            let kept = try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString], environment: device)
            #expect(kept.status == 0 && kept.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == tokens["accessToken"]?.stringValue, "\(kept.stderr)")

            let twice = try await LatchkeyCommand.run(["approve", code, "--issuer", issuer.absoluteString, "--yes"], environment: approver)
            #expect(twice.status == 1 && twice.stderr.contains("already decided"), "a code decides once: \(twice.stderr)")
            let guessed = try await LatchkeyCommand.run(["approve", "BCDF-GHJK", "--issuer", issuer.absoluteString, "--yes"], environment: approver)
            #expect(guessed.status == 1, "\(guessed.stderr)")
            let malformed = try await LatchkeyCommand.run(["approve", "AEIOU", "--issuer", issuer.absoluteString, "--yes"], environment: approver)
            #expect(malformed.status == 1 && malformed.stderr.contains("8 letters"), "\(malformed.stderr)")

            let (second, secondOutput, secondCode) = try await Self.startLogin(issuer, device)
            defer { ChildProcess.stop(second) }
            let denied = try await LatchkeyCommand.run(["deny", secondCode, "--issuer", issuer.absoluteString, "--yes"], environment: approver)
            #expect(denied.status == 0 && denied.stdout.contains("Denied"), "\(denied.stderr)")
            _ = await ChildProcess.drain(secondOutput)
            #expect(await ChildProcess.waitForExit(second) == 1, "a denied login fails")
        }
    }
}
