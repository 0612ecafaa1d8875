import Foundation
import LatchkeyOAuth
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import LatchkeyTestSupport
import Testing

/// Latchkey's output checked by standard relying-party libraries: py_webauthn 3.x and
/// python-fido2 2.x, through Tests/Interop/webauthn_interop.py, when python3 has them
/// (`pip install webauthn==3.0.1 fido2==2.2.1`; `.ci/run` installs them when it can).
@Suite("Interoperability with py_webauthn and python-fido2", .requires("python3 with webauthn and fido2 not found: skipped") { await PythonInterop.available(["webauthn", "fido2"]) })
struct InteropTests {
    @Test("registrations and assertions verify with both libraries")
    func verifyWithPythonLibraries() async throws {
        let fixture = try AuthenticatorFixture()
        var cases: [JSONValue] = []
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
                    "rpId": .string(AuthenticatorFixture.rpID),
                    "origin": .string(AuthenticatorFixture.origin),
                    "registrationChallenge": .string(Base64URL.encode(registrationChallenge)),
                    "registration": try JSONValue(json: registration.json()),
                    "assertionChallenge": .string(Base64URL.encode(assertionChallenge)),
                    "assertion": try JSONValue(json: assertion.json()),
                ])
            }
        }
        let input = fixture.directory.appendingPathComponent("interop.json")
        try JSONValue.array(cases).json().write(to: input)
        let (status, output) = try await PythonInterop.run("webauthn_interop.py", [input.path])
        print(output)
        #expect(status == 0, "\(output)")
    }
}
