import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import Testing

/// Latchkey's output checked by standard relying-party libraries: py_webauthn 3.x and
/// python-fido2 2.x, through Tests/Interop/webauthn_interop.py, when python3 has them
/// (`pip install webauthn==3.0.1 fido2==2.2.1`; `.ci/run` installs them when it can).
@Suite("Interoperability with py_webauthn and python-fido2", .enabled(if: PythonRelyingParties.available, "python3 with webauthn and fido2 not found: skipped"))
struct InteropTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/webauthn_interop.py")

    @Test("registrations and assertions verify with both libraries")
    func verifyWithPythonLibraries() throws {
        let fixture = try AuthenticatorFixture()
        var cases: [[String: Any]] = []
        for (algorithm, name) in [(-7, "ES256"), (-8, "Ed25519")] {
            for attestation in [nil, "direct"] as [String?] {
                let registrationChallenge = try SecureRandom.bytes(count: 32)
                let assertionChallenge = try SecureRandom.bytes(count: 32)
                let (registration, _) = try fixture.authenticator.makeCredential(
                    AuthenticatorFixture.creationOptions(challenge: registrationChallenge, algorithms: [algorithm], attestation: attestation),
                    origin: AuthenticatorFixture.origin
                )
                let (assertion, _) = try fixture.authenticator.getAssertion(
                    AuthenticatorFixture.requestOptions(challenge: assertionChallenge, allow: [registration.rawId.data]),
                    origin: AuthenticatorFixture.origin
                )
                cases.append([
                    "name": "\(name) \(attestation == nil ? "none" : "packed self")",
                    "rpId": AuthenticatorFixture.rpID,
                    "origin": AuthenticatorFixture.origin,
                    "registrationChallenge": Base64URL.encode(registrationChallenge),
                    "registration": try JSONSerialization.jsonObject(with: registration.json()),
                    "assertionChallenge": Base64URL.encode(assertionChallenge),
                    "assertion": try JSONSerialization.jsonObject(with: assertion.json()),
                ])
            }
        }
        let input = fixture.directory.appendingPathComponent("interop.json")
        try JSONSerialization.data(withJSONObject: cases).write(to: input)
        let (status, output) = try PythonRelyingParties.run(["python3", Self.script.path, input.path])
        print(output)
        #expect(status == 0, "\(output)")
    }
}

/// python3 with the two relying-party libraries, if this machine has them.
enum PythonRelyingParties {
    static let available: Bool = (try? run(["python3", "-c", "import webauthn, fido2"]).status) == 0

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
