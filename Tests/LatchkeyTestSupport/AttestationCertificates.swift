public import Foundation
public import LatchkeyCrypto

/// Certificates for attestation tests, made by the `openssl` command in a directory: a
/// root CA, a second root that issued nothing here, and an AIK-style certificate from the
/// first (WebAuthn L3 §8.3.1: version 3, empty subject, a critical subjectAlternativeName
/// with the TPM's manufacturer, model and firmware version, EKU 2.23.133.8.3,
/// basicConstraints CA false, authority and subject key identifiers), with the AIK's
/// private key. `extraExtensions` adds lines to the AIK's extension section, and
/// `aikExtensions` replaces it, for certificates that break one rule.
public struct AttestationCertificates: Sendable {
    public let root: X509Certificate
    public let otherRoot: X509Certificate
    public let aik: X509Certificate
    public let aikKey: SigningKey

    public static let aikSection = """
        basicConstraints = CA:FALSE
        extendedKeyUsage = 2.23.133.8.3
        subjectAltName = critical, dirName:tpm
        authorityKeyIdentifier = keyid
        subjectKeyIdentifier = hash
        """

    public static func make(in directory: URL, aikExtensions: String = aikSection, subject: String = "/") async throws -> AttestationCertificates {
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        // In a dirName section OpenSSL drops a name's text up to its first dot (so a field
        // can repeat), hence the "1.", "2.", "3." before each OID.
        try """
            [aik]
            \(aikExtensions)
            [tpm]
            1.2.23.133.2.1 = id:53574D00
            2.2.23.133.2.2 = swtpm
            3.2.23.133.2.3 = id:20191023
            """.write(toFile: path("aik.cnf"), atomically: true, encoding: .utf8)
        func root(_ name: String) -> [String] {
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("\(name).key"),
             "-out", path("\(name).pem"), "-days", "2", "-subj", "/CN=Latchkey test attestation CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]
        }
        let commands: [[String]] = [
            root("root"), root("other"),
            ["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("aik.key"), "-out", path("aik.csr"), "-subj", subject],
            ["openssl", "x509", "-req", "-in", path("aik.csr"), "-CA", path("root.pem"), "-CAkey", path("root.key"), "-CAcreateserial", "-days", "2",
             "-extfile", path("aik.cnf"), "-extensions", "aik", "-outform", "DER", "-out", path("aik.der")],
            ["openssl", "x509", "-in", path("root.pem"), "-outform", "DER", "-out", path("root.der")],
            ["openssl", "x509", "-in", path("other.pem"), "-outform", "DER", "-out", path("other.der")],
            ["openssl", "pkcs8", "-topk8", "-nocrypt", "-in", path("aik.key"), "-outform", "DER", "-out", path("aik.p8")],
        ]
        // One shell for all of them: these tests need dozens, and one process start is
        // cheaper than seven.
        let script = "set -e\n" + commands.map { $0.map(Self.quoted).joined(separator: " ") }.joined(separator: "\n")
        let (status, output) = try await ChildProcess.tool(["sh", "-c", script])
        guard status == 0 else { throw TestSupportError("making attestation certificates failed: \(output)") }
        let read = { (name: String) throws -> Data in try Data(contentsOf: directory.appendingPathComponent(name)) }
        return AttestationCertificates(
            root: try X509Certificate(derEncoded: try read("root.der")), otherRoot: try X509Certificate(derEncoded: try read("other.der")),
            aik: try X509Certificate(derEncoded: try read("aik.der")), aikKey: try SigningKey(pkcs8DER: try read("aik.p8"))
        )
    }

    /// `text` as one word for `sh`.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
