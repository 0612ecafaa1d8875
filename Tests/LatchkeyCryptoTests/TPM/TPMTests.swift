import Foundation
@testable import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// Keys inside a TPM through OpenSSL's tpm2 provider, in this process (docs/SECURITY.md,
/// "Keys in the TPM"). The provider reads `TPM2OPENSSL_TCTI` only from the environment, and
/// a test process must not change its environment while other tests spawn processes, so
/// these tests use the TPM that `.ci/run` starts (a swtpm) and names in
/// `TPM2OPENSSL_TCTI`; without it they say they were skipped. The command-line TPM tests
/// (`TPMCommandLineTests`) start a swtpm of their own per test, always.
@Suite(
    "TPM keys in this process (the TPM named by TPM2OPENSSL_TCTI)", .serialized,
    .requires(if: SystemTPM.configured, "skipped: TPM2OPENSSL_TCTI is not set (.ci/run sets it to a swtpm it starts)")
)
struct TPMTests {
    @Test("a key generated in the TPM signs there; plain OpenSSL verifies; only the wrapped blob leaves")
    func generateAndSign() throws {
        let tpm = try TPM.system()
        let key = try TPMSigningKey.generate(in: tpm)
        let message = Data("sign in".utf8)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Data("something else".utf8)))
        let blob = String(decoding: key.wrappedKey, as: UTF8.self)
        #expect(blob.hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----"), "\(blob.prefix(40))")
        #expect(!blob.contains("BEGIN PRIVATE KEY") && !blob.contains("BEGIN EC PRIVATE KEY"), "no PKCS#8 or SEC1 key")
        #expect((try? SigningKey(pkcs8DER: key.wrappedKey)) == nil)

        // The blob loads again, from nothing but itself and the public key.
        let reloaded = try TPMSigningKey(wrappedKey: key.wrappedKey, publicKey: key.publicKey, in: tpm)
        #expect(key.publicKey.isValidSignature(try reloaded.signature(for: message), for: message))
        try reloaded.checkUsable()
    }

    @Test("a blob recorded with another public key is refused before the TPM signs")
    func swappedPublicKey() throws {
        let tpm = try TPM.system()
        let key = try TPMSigningKey.generate(in: tpm)
        let other = try SigningKey.generate(.es256).publicKey
        let lying = try TPMSigningKey(wrappedKey: key.wrappedKey, publicKey: other, in: tpm)
        let error = #expect(throws: CryptoError.self) { try lying.signature(for: Data("m".utf8)) }
        #expect(error?.code == .tpmKeyUnusable, "\(String(describing: error))")
    }

    /// swtpm has no resource manager and three transient slots: two ESYS contexts loading
    /// keys at once fill them ("out of memory for object contexts"), and OpenSSL's decoder
    /// can report that as a key of another TPM. A `TPM` made again (after its TPM stopped
    /// answering, `system()` makes a new one while keys still hold the old) must wait for
    /// the other's commands.
    @Test("two TPM values for one location share its connection: four tasks signing through both at once all succeed, and the keys still verify")
    func oneConnectionPerLocation() async throws {
        let first = try TPM.system()
        let second = try TPM(location: first.location)
        let key = try TPMSigningKey.generate(in: first)
        let again = try TPMSigningKey(wrappedKey: key.wrappedKey, publicKey: key.publicKey, in: second)
        let message = Data("at once".utf8)
        let failures = await withTaskGroup(of: [String].self) { group in
            for signer in [key, again, key, again] {
                group.addTask {
                    var failed: [String] = []
                    for _ in 0..<12 {
                        do {
                            let signature = try signer.signature(for: message)
                            if !signer.publicKey.isValidSignature(signature, for: message) { failed.append("a signature that does not verify") }
                        } catch {
                            failed.append("\(error)")
                        }
                    }
                    return failed
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.count) of 48 failed, first: \(failures.first ?? "")")
    }

    @Test("ECDH in the TPM agrees with ECDH in software")
    func keyAgreement() throws {
        let tpm = try TPM.system()
        let (tpmPublic, blob) = try tpm.generateP256()
        let software = try SigningKey.generate(.es256)
        let inSoftware = try OpenSSLKeys.sharedSecret(software.context.key, peer: tpmPublic.key)
        let inTPM = try tpm.sharedSecret(wrappedKey: blob, peer: software.publicKey)
        #expect(inSoftware.count == 32 && inSoftware == inTPM)
    }

    @Test("a vault with TPM keys: signatures verify, the record holds no PKCS#8, Ed25519 is refused")
    func vaultWithTPMKeys() throws {
        _ = try TPM.system()
        let temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase())
        let entry = try vault.createKey(.es256, metadata: Data("m".utf8), protection: .tpm)
        let stored = try vault.entry(entry.handle)
        #expect(entry.protection == .tpm && stored.protection == .tpm)
        let message = Data("challenge".utf8)
        #expect(entry.publicKey.isValidSignature(try vault.sign(message, with: entry.handle), for: message))
        #expect(try vault.signingKey(entry.handle).software == nil)
        try vault.checkUsable(entry.handle)
        let ed25519 = #expect(throws: KeyVaultError.self) { try vault.createKey(.ed25519, metadata: Data(), protection: .tpm) }
        #expect(ed25519?.code == .unsupportedProtection && ed25519?.reason.contains("ES256") == true)

        // The vault reopened (no cache) still signs through the TPM.
        let reopened = try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase())
        #expect(entry.publicKey.isValidSignature(try reopened.sign(message, with: entry.handle), for: message))
    }

    @Test("a TPM-sealed vault opens with nothing but the TPM; its header holds no usable key")
    func tpmSealedVault() throws {
        _ = try TPM.system()
        let temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: .tpm)
        let entry = try vault.createKey(.es256, metadata: Data("m".utf8))
        let reopened = try KeyVault.open(at: temporary.vault, key: .tpm)
        #expect(try reopened.entry(entry.handle).metadata == Data("m".utf8))
        let header = try String(contentsOf: temporary.vault.appendingPathComponent("vault.json"), encoding: .utf8)
        #expect(header.contains("\"tpm\"") && header.contains("wrappedKey"), "\(header)")
        let passphrase = #expect(throws: KeyVaultError.self) { try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase()) }
        #expect(passphrase?.code == .keySourceMismatch && passphrase?.reason.contains("TPM") == true)
    }
}

/// Whether the environment names a TPM for this process (`.ci/run` does).
enum SystemTPM {
    static var configured: Bool {
        !(ProcessInfo.processInfo.environment[TPM.locationVariable] ?? "").isEmpty
    }
}
