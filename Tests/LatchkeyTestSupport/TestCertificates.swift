public import Foundation
import Testing

/// A throwaway certificate authority and a server certificate it signed, for `localhost`
/// and 127.0.0.1, made with the openssl tool: for the tests that need real TLS on loopback
/// (SMTP with STARTTLS, client ID metadata documents over https).
public enum TestCertificates {
    /// Writes the CA, the certificate and its key in `directory`.
    public static func make(in directory: URL) async throws -> (ca: URL, certificate: URL, key: URL) {
        let ca = directory.appendingPathComponent("ca.pem")
        let caKey = directory.appendingPathComponent("ca.key")
        let key = directory.appendingPathComponent("server.key")
        let request = directory.appendingPathComponent("server.csr")
        let certificate = directory.appendingPathComponent("server.pem")
        let extensions = directory.appendingPathComponent("san.ext")
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(to: extensions, atomically: true, encoding: .utf8)
        for command in [
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey.path, "-out", ca.path, "-days", "2", "-subj", "/CN=Latchkey test CA"],
            ["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key.path, "-out", request.path, "-subj", "/CN=localhost"],
            ["openssl", "x509", "-req", "-in", request.path, "-CA", ca.path, "-CAkey", caKey.path, "-CAcreateserial", "-out", certificate.path, "-days", "2", "-extfile", extensions.path],
        ] {
            let (status, output) = try await ChildProcess.tool(command)
            try #require(status == 0, "\(command.joined(separator: " ")): \(output)")
        }
        return (ca, certificate, key)
    }
}
