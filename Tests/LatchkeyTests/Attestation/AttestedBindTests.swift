import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// `tpm` attestation through the facade (docs/SECURITY.md, "Proving keys live in the
/// TPM"), on the swtpm `.ci/run` manufactures: the client makes its attestation key, has
/// the provider's attestation CA certify it, binds with `tpm` attestation, and the provider
/// that demands it accepts; py_webauthn and python-fido2 accept the very registration that
/// was sent. A client without attestation is refused by name and keeps nothing.
@Suite(
    "Embedded: TPM attestation of new credentials", .serialized,
    .enabled(if: ManufacturedTPM.configured, "skipped: TPM2OPENSSL_TCTI or LATCHKEY_TEST_EK_ROOTS is not set (.ci/run sets both)")
)
struct AttestedBindTests {
    static func demandingProvider(
        policy: AttestationRequirement? = .tpm, _ body: @escaping @Sendable (ProviderHarness, TemporaryVault) async throws -> Void
    ) async throws {
        let roots = try ManufacturedTPM.endorsementRoots()
        try await ProviderHarness.withVault({ configuration in
            configuration.attestationAuthority = true
            configuration.endorsementRoots = roots
            configuration.requiredAttestation = policy
        }, body)
    }

    @Test("bound with attestation on a TPM: the demanding provider accepts it and lists it as tpm with Latchkey's AAGUID; py_webauthn and python-fido2 accept what was sent; a second bind reuses the attestation key")
    func attestedBind() async throws {
        try await Self.demandingProvider { provider, vault in
            let transport = RecordingTransport()
            let embedded = try vault.embedded(allowing: [provider.host], transport: transport, configure: {
                $0.keyProtection = .tpm
                $0.attestation = .tpm()
            })
            let (identity, bindURL) = try await provider.createIdentity("ada")
            let bound = try await embedded.registerCredential(from: bindURL)
            #expect(bound.credential.keyProtection == .tpm && bound.credential.attestation == "tpm")

            let listed = try #require(try await provider.admin.call(AdminAPI.credentials, identity).answer).credentials
            #expect(listed.map(\.attestation) == ["tpm"])
            #expect(listed.map(\.aaguid) == ["56f86778-a17a-44f9-b56c-648ed551da5f"])

            // The registration the client sent, to two independent verifiers with the root
            // the CA publishes.
            let sent = try #require(transport.requests.last { $0.method == HTTPMethod.post && $0.url.path.contains("/v1/bind/") })
            let registration = try JSONValue(json: try #require(sent.body))
            let clientData = try JSONValue(json: try Base64URL.decode(try #require(registration["response"]?["clientDataJSON"]?.stringValue)))
            let rootPEM = try await URLSessionTransport().send(TransportRequest(
                method: HTTPMethod.get, url: provider.issuer.appendingPathComponent(ProtocolPath.attestationRoots)
            )).body
            if await PythonInterop.available(["webauthn", "fido2"]) {
                let input = provider.directory.url.appendingPathComponent("bound-tpm.json")
                try JSONValue.object([
                    "rpId": .string(provider.host), "origin": .string("http://\(provider.host):\(provider.port)"),
                    "challenge": .string(try #require(clientData["challenge"]?.stringValue)),
                    "registration": registration, "root": .string(String(decoding: rootPEM, as: UTF8.self)),
                ]).json().write(to: input)
                let (status, output) = try await PythonInterop.run("tpm_attestation_interop.py", [input.path])
                print(output)
                #expect(status == 0 && output.contains("56f86778-a17a-44f9-b56c-648ed551da5f"), "\(output)")
            } else {
                print("py_webauthn/python-fido2 check skipped: python3 with webauthn and fido2 not found")
            }

            // Another identity: the attestation key and its certificate are reused, so no
            // second credential activation.
            let (_, second) = try await provider.createIdentity("grace")
            let again = try await embedded.registerCredential(from: second)
            #expect(again.credential.attestation == "tpm")
            let activations = transport.requests.filter { $0.url.path.hasSuffix(ProtocolPath.attestationActivations) }
            #expect(activations.count == 1, "one activation for two binds")
            // The kept attestation key is not a credential.
            #expect(try await embedded.credentials().count == 2)
        }
    }

    @Test("without attestation, a provider that demands it refuses with attestation_required and the vault keeps nothing; an identity can demand it under a lenient provider")
    func refusedWithoutAttestation() async throws {
        try await Self.demandingProvider { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.keyProtection = .tpm })
            let (_, bindURL) = try await provider.createIdentity("ada")
            let error = try await #require(throws: LatchkeyError.self) { try await embedded.registerCredential(from: bindURL) }
            #expect(error.code == .providerError && error.providerError?.error == .attestationRequired, "\(error)")
            #expect(error.reason.contains("attestation"))
            #expect(try await embedded.credentials().isEmpty, "the refused key was deleted again")

            // Attestation asked for, but the key would be a software one: refused before
            // anything is made or sent.
            let software = try vault.embedded(allowing: [provider.host], configure: { $0.attestation = .tpm() })
            let local = try await #require(throws: LatchkeyError.self) { try await software.registerCredential(from: bindURL) }
            #expect(local.code == .attestationFailed && local.reason.contains("TPM"), "\(local)")
        }
        try await Self.demandingProvider(policy: nil) { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            let demanding = try await provider.admin.call(AdminAPI.createIdentity, body: .init(username: "ada", requireAttestation: "tpm"))
            #expect(demanding.answer?.identity.requireAttestation == "tpm")
            let demandingURL = try #require(URL(string: demanding.answer?.bindURL ?? ""))
            let refused = try await #require(throws: LatchkeyError.self) { try await embedded.registerCredential(from: demandingURL) }
            #expect(refused.providerError?.error == .attestationRequired)
            let (_, lenient) = try await provider.createIdentity("grace")
            #expect(try await embedded.registerCredential(from: lenient).credential.attestation == "none")
        }
    }
}
