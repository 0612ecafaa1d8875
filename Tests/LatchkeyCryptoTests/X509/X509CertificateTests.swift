import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// X.509 certificates as a relying party reads an attestation certificate (WebAuthn L3
/// §8.3.1): certificates made by the `openssl` command (a CA and an AIK-style
/// certificate: empty subject, critical SAN with the TPM's manufacturer, model and
/// firmware version, EKU 2.23.133.8.3, not a CA), read back field by field, chained, and
/// hostile DER refused with a typed error.
@Suite("X.509 certificates")
struct X509CertificateTests {
    @Test("an AIK-style certificate reads back: v3, empty subject, critical SAN with the TPM's attributes, EKU, not a CA, AKI = the CA's SKI, its key; it chains to its CA only, and only while valid")
    func aikCertificate() async throws {
        let directory = try TemporaryDirectory()
        let made = try await AttestationCertificates.make(in: directory.url)
        let aik = made.aik
        #expect(aik.version == 3)
        #expect(aik.subjectIsEmpty)
        #expect(!made.root.subjectIsEmpty)
        #expect(aik.extendedKeyUsages == ["2.23.133.8.3"])
        #expect(made.root.extendedKeyUsages == nil)
        #expect(aik.basicConstraints == (present: true, isCA: false))
        #expect(made.root.basicConstraints == (present: true, isCA: true))
        let san = try #require(aik.subjectAlternativeName)
        #expect(san.critical)
        #expect(san.directoryNameAttributes.map(\.oid) == ["2.23.133.2.1", "2.23.133.2.2", "2.23.133.2.3"])
        #expect(san.directoryNameAttributes.map(\.value) == ["id:53574D00", "swtpm", "id:20191023"])
        #expect(aik.authorityKeyIdentifier != nil && aik.authorityKeyIdentifier == made.root.subjectKeyIdentifier)
        #expect(try aik.publicKey == made.aikKey.publicKey)

        #expect(aik.chains(to: [made.root]))
        #expect(!aik.chains(to: [made.otherRoot]), "an AIK certificate from another CA")
        #expect(!aik.chains(to: []))
        #expect(!aik.chains(to: [made.root], at: Date().addingTimeInterval(3 * 86_400)), "expired")
        #expect(!aik.chains(to: [made.root], at: Date().addingTimeInterval(-86_400)), "not yet valid")
    }

    @Test("hostile DER: empty, truncated anywhere, a trailing byte, oversized, or not a certificate is invalidEncoding")
    func hostile() async throws {
        let directory = try TemporaryDirectory()
        let der = try await AttestationCertificates.make(in: directory.url).aik.derEncoded
        func code(_ bytes: Data) -> CryptoError.Code? {
            do {
                _ = try X509Certificate(derEncoded: bytes)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(Data()) == .invalidEncoding)
        for length in stride(from: 1, to: der.count, by: 7) {
            #expect(code(der.prefix(length)) == .invalidEncoding, "cut at \(length)")
        }
        #expect(code(der + Data([0])) == .invalidEncoding)
        #expect(code(Data(repeating: 0x30, count: 20_000)) == .invalidEncoding)
        #expect(code(Data("not a certificate".utf8)) == .invalidEncoding)
        #expect(try X509Certificate(derEncoded: der) == X509Certificate(derEncoded: der))
    }
}
