import Foundation
@testable import LatchkeyCrypto
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// What a real TPM makes for `tpm` attestation, read back by the relying party's own
/// parsers (WebAuthn L3 §8.3): TPM2_Certify of a key tpm2-openssl made, by an attestation
/// key made through tpm2-tss, and credential activation against the endorsement key
/// whose certificate the TPM maker's CA issued (TPM 2.0 Part 1 §24). The TPM is the
/// swtpm `.ci/run` manufactures with swtpm_setup (`TPM2OPENSSL_TCTI`), and the maker's CA
/// its private swtpm-localca (`LATCHKEY_TEST_EK_ROOTS`).
@Suite(
    "TPM attestation on a software TPM (TPM2OPENSSL_TCTI, LATCHKEY_TEST_EK_ROOTS)", .serialized,
    .requires(if: ManufacturedTPM.configured, "skipped: TPM2OPENSSL_TCTI or LATCHKEY_TEST_EK_ROOTS is not set (.ci/run sets both)")
)
struct TPMOnSoftwareTPMTests {
    @Test("TPM2_Certify: certInfo names the key's pubArea and carries the qualifying data; the AK signed it; the key still signs through OpenSSL after")
    func certify() throws {
        let tpm = try TPM.system()
        let key = try TPMSigningKey.generate(in: tpm)
        let attestationKey = try tpm.createAttestationKey()
        let toBeSigned = Data("authenticator data".utf8) + (try DigestAlgorithm.sha256.hash(Data("client data".utf8)))
        let certification = try tpm.certify(key, with: attestationKey, qualifyingData: try DigestAlgorithm.sha256.hash(toBeSigned))

        let pubArea = try TPMTPublic(certification.publicArea)
        #expect(pubArea.x + pubArea.y == key.publicKey.spkiDER.suffix(64), "the pubArea holds the credential key")
        #expect(pubArea.scheme == TPMTPublic.Algorithm.null && pubArea.symmetric == TPMTPublic.Algorithm.null, "python-fido2 requires both NULL")
        let attest = try TPMSAttest(certification.certInfo)
        try attest.check(certifies: pubArea, toBeSigned: toBeSigned, hash: .sha256)

        let akArea = try TPMTPublic(attestationKey.publicArea)
        let required = TPMTPublic.Attribute.fixedTPM | TPMTPublic.Attribute.fixedParent | TPMTPublic.Attribute.sensitiveDataOrigin | TPMTPublic.Attribute.sign
        #expect(akArea.objectAttributes & required == required && akArea.objectAttributes & (1 << 16) != 0, "the AK is a restricted signing key of this TPM")
        #expect(try attestationKey.name == akArea.name)
        let akPublic = try VerifyingKey(p256X: akArea.x, y: akArea.y)
        #expect(akPublic.isValidSignature(certification.signature, for: certification.certInfo))
        #expect(!akPublic.isValidSignature(certification.signature, for: certification.certInfo + Data([0])))

        // tpm2-openssl's connection was closed for ESAPI; it reconnects.
        let message = Data("after attestation".utf8)
        #expect(key.publicKey.isValidSignature(try key.signature(for: message), for: message))
        // The AK survives as its wrapped form.
        #expect(try TPMAttestationKey(wrappedKey: attestationKey.wrappedKey) == attestationKey)
    }

    @Test("a statement whose certInfo names another key is refused by the relying party's check")
    func certInfoOfAnotherKey() throws {
        let tpm = try TPM.system()
        let (certified, other) = (try TPMSigningKey.generate(in: tpm), try TPMSigningKey.generate(in: tpm))
        let attestationKey = try tpm.createAttestationKey()
        let toBeSigned = Data("data".utf8)
        let certification = try tpm.certify(certified, with: attestationKey, qualifyingData: try DigestAlgorithm.sha256.hash(toBeSigned))
        let otherArea = try TPMTPublic(try TSS2KeyBlob(pem: other.wrappedKey).publicAreaContents)
        #expect(throws: WebAuthnError.self) { try TPMSAttest(certification.certInfo).check(certifies: otherArea, toBeSigned: toBeSigned, hash: .sha256) }
    }

    @Test("the EK certificate is read from NV, matches this TPM's EK, and chains to the maker's CA, not to another")
    func endorsementCertificate() async throws {
        let tpm = try TPM.system()
        let certificate = try tpm.endorsementCertificate()
        let roots = try ManufacturedTPM.endorsementRoots()
        #expect(certificate.chains(to: roots))
        let directory = try TemporaryDirectory()
        let unrelated = try await AttestationCertificates.make(in: directory.url)
        #expect(!certificate.chains(to: [unrelated.root]))
        let description = try tpm.describe()
        print("TPM: manufacturer \(description.manufacturerID), model \(description.model), firmware \(description.versionID)")
        #expect(description.manufacturerID.hasPrefix("id:") && description.manufacturerID.count == 11, "\(description)")
    }

    @Test("credential activation: the TPM recovers a secret made for its EK and the AK's name; another AK, a flipped byte or another EK get nothing")
    func credentialActivation() async throws {
        let tpm = try TPM.system()
        let endorsement = try tpm.endorsementCertificate()
        let attestationKey = try tpm.createAttestationKey()
        let secret = try SecureRandom.bytes(count: 32)
        let challenge = try TPMCredentialProtection.makeCredential(secret, endorsementKey: endorsement, objectName: try attestationKey.name)
        #expect(try tpm.activateCredential(attestationKey, challenge: challenge) == secret)

        // Bound to the AK's name: a TPM that is not the one the AK came from, or another
        // AK of this one, cannot recover it.
        let otherKey = try tpm.createAttestationKey()
        let refused = #expect(throws: CryptoError.self) { try tpm.activateCredential(otherKey, challenge: challenge) }
        #expect(refused?.code == .tpmCommandRefused, "\(String(describing: refused))")

        var flipped = challenge.credentialBlob
        flipped[flipped.count - 1] ^= 1
        let tampered = #expect(throws: CryptoError.self) {
            try tpm.activateCredential(attestationKey, challenge: .init(credentialBlob: flipped, encryptedSecret: challenge.encryptedSecret))
        }
        #expect(tampered?.code == .tpmCommandRefused, "\(String(describing: tampered))")

        // Made for an RSA key that is not this TPM's EK.
        let directory = try TemporaryDirectory()
        let otherEK = try await ManufacturedTPM.unrelatedRSACertificate(in: directory.url)
        let foreign = try TPMCredentialProtection.makeCredential(secret, endorsementKey: otherEK, objectName: try attestationKey.name)
        let notOurs = #expect(throws: CryptoError.self) { try tpm.activateCredential(attestationKey, challenge: foreign) }
        #expect(notOurs?.code == .tpmCommandRefused, "\(String(describing: notOurs))")
    }
}
