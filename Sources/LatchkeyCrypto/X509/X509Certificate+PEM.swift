#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension X509Certificate {
    /// The most certificates one PEM file may hold: a bundle of TPM makers' or
    /// attestation CAs' certificates has a few dozen.
    public static let maximumPEMBundleCount = 256

    /// The certificates of a PEM bundle (RFC 7468 §5: `CERTIFICATE` blocks, one after the
    /// other, text between them ignored as RFC 7468 §2 allows), as a file given to
    /// `--ek-roots` or `--attestation-roots` holds them. Throws
    /// ``CryptoError/Code/invalidEncoding`` for a file over 1 MiB, a block that does not
    /// parse, another label, or no certificate at all.
    public static func certificates(pem: Data) throws -> [X509Certificate] {
        guard pem.count <= 1 << 20 else { throw CryptoError.invalidEncoding(reason: "a PEM certificate bundle is at most 1 MiB") }
        let text = String(decoding: pem, as: UTF8.self)
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        var certificates: [X509Certificate] = []
        var rest = text[...]
        while let start = rest.firstRange(of: "-----BEGIN ") {
            guard rest[start.lowerBound...].hasPrefix(begin) else {
                throw CryptoError.invalidEncoding(reason: "a PEM block in the bundle is not a CERTIFICATE")
            }
            guard let stop = rest[start.upperBound...].firstRange(of: end) else {
                throw CryptoError.invalidEncoding(reason: "a CERTIFICATE block in the bundle has no END line")
            }
            guard certificates.count < maximumPEMBundleCount else {
                throw CryptoError.invalidEncoding(reason: "a PEM bundle holds at most \(maximumPEMBundleCount) certificates")
            }
            let document = try PEMDocument(parsing: String(rest[start.lowerBound..<stop.upperBound]), expectedLabel: "CERTIFICATE")
            certificates.append(try X509Certificate(derEncoded: document.der))
            rest = rest[stop.upperBound...]
        }
        guard !certificates.isEmpty else { throw CryptoError.invalidEncoding(reason: "no PEM CERTIFICATE block") }
        return certificates
    }

    /// The certificate as one PEM `CERTIFICATE` block.
    public var pemEncoded: String { PEMDocument(label: "CERTIFICATE", der: derEncoded).pemString }
}
