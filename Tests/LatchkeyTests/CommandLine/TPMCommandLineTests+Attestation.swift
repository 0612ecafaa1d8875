import Foundation
import LatchkeyOAuth
@testable import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

extension TPMCommandLineTests {
    /// `latchkey bind --attest` against `latchkey serve --attestation-ca --require-attestation
    /// tpm`, on a swtpm manufactured with an endorsement key certificate by a maker's CA of
    /// the test's own (docs/SECURITY.md, "Proving keys live in the TPM").
    @Test("bind --attest on a manufactured swtpm is accepted by serve --require-attestation tpm, listed as tpm with Latchkey's AAGUID, and signs in; bind without it is refused naming attestation")
    func attestedBind() async throws {
        let (tpm, endorsementRoots) = try await SoftwareTPM.manufactured()
        let (server, issuer) = try await CLI.serve(["--attestation-ca", "--ek-roots", endorsementRoots.path, "--require-attestation", "tpm"])
        let provider = Provider(server: server, issuer: issuer)
        defer { provider.stop() }
        let store = Store()
        defer { store.remove() }

        let created = try await CLI.latchkey(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"], environment: ["LATCHKEY_ADMIN_TOKEN": CLI.adminToken]
        )
        let identity = try #require(try CLI.object(created.stdout)["identity"]?["id"]?.stringValue, "\(created.stdout) \(created.stderr)")
        let bindURL = try #require(try CLI.object(created.stdout)["bindURL"]?.stringValue)

        let refused = try await CLI.latchkey(["bind", bindURL, "--key-protection", "tpm", "--json"], environment: store.environment(tpm))
        #expect(refused.status != 0 && refused.stderr.contains("attestation"), "\(refused.stderr)")
        #expect(try await Self.listed(store, tpm).isEmpty, "a refused bind leaves no key")

        let bound = try await CLI.latchkey(["bind", bindURL, "--key-protection", "tpm", "--attest", "--json"], environment: store.environment(tpm))
        #expect(bound.status == 0, "\(bound.stderr)")
        let credential = try Self.credential(bound)
        #expect(credential["attestation"]?.stringValue == "tpm" && credential["keyProtection"]?.stringValue == "tpm", "\(credential)")
        #expect(!bound.stderr.contains("esys"), "the TSS keeps quiet: \(bound.stderr)")

        let listed = try await CLI.latchkey(["admin", "list-credentials", "--idp", issuer.absoluteString, "--", identity], environment: ["LATCHKEY_ADMIN_TOKEN": CLI.adminToken])
        #expect(listed.status == 0 && listed.stdout.contains("attestation tpm") && listed.stdout.contains("aaguid 56f86778-a17a-44f9-b56c-648ed551da5f"), "\(listed.stdout) \(listed.stderr)")
        #expect(try await Self.listed(store, tpm).count == 1, "the attestation key is kept, but is not a credential")

        let signedIn = try await Self.signIn(provider, store, tpm)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")

        // The vault keeps the AK as a TPM key record beside the credential's key.
        let vault = try KeyVault.open(at: store.directory, key: .passphrase(store.passphrase))
        #expect(try vault.entries().filter { String(decoding: $0.metadata, as: UTF8.self).contains("tpm-attestation-key") }.count == 1)
    }
}
