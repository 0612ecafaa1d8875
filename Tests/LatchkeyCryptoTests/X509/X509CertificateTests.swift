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
    struct Made {
        let ca: X509Certificate
        let otherCA: X509Certificate
        let aik: X509Certificate
        let aikKey: VerifyingKey
    }

    static func make(in directory: URL) async throws -> Made {
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        // In a dirName section OpenSSL drops a name's text up to its first dot (so a field
        // can repeat), hence the "1.", "2.", "3." before each OID.
        try """
            [aik]
            basicConstraints = CA:FALSE
            extendedKeyUsage = 2.23.133.8.3
            subjectAltName = critical, dirName:tpm
            authorityKeyIdentifier = keyid
            subjectKeyIdentifier = hash
            [tpm]
            1.2.23.133.2.1 = id:53574D00
            2.2.23.133.2.2 = swtpm
            3.2.23.133.2.3 = id:20191023
            """.write(toFile: path("aik.cnf"), atomically: true, encoding: .utf8)
        let commands: [[String]] = [
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key"), "-out", path("ca.pem"),
             "-days", "2", "-subj", "/CN=Latchkey test attestation CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("other.key"), "-out", path("other.pem"),
             "-days", "2", "-subj", "/CN=Latchkey test attestation CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
            ["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("aik.key"), "-out", path("aik.csr"), "-subj", "/"],
            ["openssl", "x509", "-req", "-in", path("aik.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial", "-days", "2",
             "-extfile", path("aik.cnf"), "-extensions", "aik", "-outform", "DER", "-out", path("aik.der")],
            ["openssl", "x509", "-in", path("ca.pem"), "-outform", "DER", "-out", path("ca.der")],
            ["openssl", "x509", "-in", path("other.pem"), "-outform", "DER", "-out", path("other.der")],
            ["openssl", "pkey", "-in", path("aik.key"), "-pubout", "-outform", "DER", "-out", path("aik.spki")],
        ]
        for command in commands {
            let (status, output) = try await ChildProcess.tool(command)
            try #require(status == 0, "\(command.joined(separator: " ")): \(output)")
        }
        let read = { (name: String) throws -> Data in try Data(contentsOf: directory.appendingPathComponent(name)) }
        return Made(
            ca: try X509Certificate(derEncoded: try read("ca.der")), otherCA: try X509Certificate(derEncoded: try read("other.der")),
            aik: try X509Certificate(derEncoded: try read("aik.der")), aikKey: try VerifyingKey(spkiDER: try read("aik.spki"))
        )
    }

    @Test("an AIK-style certificate reads back: v3, empty subject, critical SAN with the TPM's attributes, EKU, not a CA, AKI = the CA's SKI, its key; it chains to its CA only, and only while valid")
    func aikCertificate() async throws {
        let directory = try TemporaryDirectory()
        let made = try await Self.make(in: directory.url)
        let aik = made.aik
        #expect(aik.version == 3)
        #expect(aik.subjectIsEmpty)
        #expect(!made.ca.subjectIsEmpty)
        #expect(aik.extendedKeyUsages == ["2.23.133.8.3"])
        #expect(made.ca.extendedKeyUsages == nil)
        #expect(aik.basicConstraints == (present: true, isCA: false))
        #expect(made.ca.basicConstraints == (present: true, isCA: true))
        let san = try #require(aik.subjectAlternativeName)
        #expect(san.critical)
        #expect(san.directoryNameAttributes.map(\.oid) == ["2.23.133.2.1", "2.23.133.2.2", "2.23.133.2.3"])
        #expect(san.directoryNameAttributes.map(\.value) == ["id:53574D00", "swtpm", "id:20191023"])
        #expect(aik.authorityKeyIdentifier != nil && aik.authorityKeyIdentifier == made.ca.subjectKeyIdentifier)
        #expect(try aik.publicKey == made.aikKey)

        #expect(aik.chains(to: [made.ca]))
        #expect(!aik.chains(to: [made.otherCA]), "an AIK certificate from another CA")
        #expect(!aik.chains(to: []))
        #expect(!aik.chains(to: [made.ca], at: Date().addingTimeInterval(3 * 86_400)), "expired")
        #expect(!aik.chains(to: [made.ca], at: Date().addingTimeInterval(-86_400)), "not yet valid")
    }

    @Test("hostile DER: empty, truncated anywhere, a trailing byte, oversized, or not a certificate is invalidEncoding")
    func hostile() async throws {
        let directory = try TemporaryDirectory()
        let der = try await Self.make(in: directory.url).aik.derEncoded
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
