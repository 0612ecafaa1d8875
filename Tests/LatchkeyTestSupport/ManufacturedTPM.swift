public import Foundation
public import LatchkeyCrypto

/// The swtpm `.ci/run` manufactures (`.ci/swtpm.sh`: swtpm_setup with endorsement key
/// certificates from a private swtpm-localca, which stands for a TPM maker's CA), reached
/// in this process as ``TPM/system()`` through `TPM2OPENSSL_TCTI`, and that maker's CA
/// certificates, in the PEM file `LATCHKEY_TEST_EK_ROOTS` names.
public enum ManufacturedTPM {
    /// Whether both variables are set.
    public static var configured: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment[TPM.locationVariable] ?? "").isEmpty && !(environment["LATCHKEY_TEST_EK_ROOTS"] ?? "").isEmpty
    }

    /// The maker's CA certificates (root and issuing CA).
    public static func endorsementRoots() throws -> [X509Certificate] {
        guard let path = ProcessInfo.processInfo.environment["LATCHKEY_TEST_EK_ROOTS"], !path.isEmpty else {
            throw TestSupportError("LATCHKEY_TEST_EK_ROOTS is not set")
        }
        return try X509Certificate.certificates(pem: try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A self-signed certificate of a fresh RSA 2048 key: an EK certificate of no TPM here,
    /// from no maker.
    public static func unrelatedRSACertificate(in directory: URL) async throws -> X509Certificate {
        let path = directory.appendingPathComponent("other-ek.der").path
        let (status, output) = try await ChildProcess.tool([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory.appendingPathComponent("other-ek.key").path,
            "-subj", "/CN=another TPM", "-days", "2", "-outform", "DER", "-out", path,
        ])
        guard status == 0 else { throw TestSupportError("openssl could not make an RSA certificate: \(output)") }
        return try X509Certificate(derEncoded: try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
