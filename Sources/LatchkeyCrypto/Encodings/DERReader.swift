#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Just enough DER (ITU-T X.690 §8, §10) for the small structures Latchkey reads itself,
/// strict about canonical form: ECDSA signatures and TPM key blobs ("TSS2 PRIVATE KEY").
/// Certificates are OpenSSL's to read (``X509Certificate``).
struct DERReader {
    /// What is read, for messages; a signature's faults are
    /// ``CryptoError/Code/invalidSignatureEncoding``, anything else's
    /// ``CryptoError/Code/invalidEncoding``.
    enum Subject: String {
        case signature = "signature"
        case tpmKeyBlob = "TPM key blob"
        case tpmStoredCertificate = "certificate stored in the TPM"
    }

    private var bytes: ArraySlice<UInt8>
    private let subject: Subject

    init(_ bytes: [UInt8], subject: Subject = .signature) {
        self.bytes = bytes[...]
        self.subject = subject
    }

    init(_ bytes: ArraySlice<UInt8>, subject: Subject = .signature) {
        self.bytes = bytes
        self.subject = subject
    }

    var isAtEnd: Bool { bytes.isEmpty }

    /// The tag of the next element, if any.
    var nextTag: UInt8? { bytes.first }

    func malformed(_ why: String) -> CryptoError {
        let reason = "malformed DER \(subject.rawValue): \(why)"
        return subject == .signature ? CryptoError.invalidSignatureEncoding(reason: reason) : CryptoError.invalidEncoding(reason: reason)
    }

    /// Reads one element with `tag` and returns its contents. Lengths up to 65,535 bytes
    /// (two length octets), in the minimal form DER requires.
    mutating func element(tag: UInt8) throws -> ArraySlice<UInt8> {
        guard let first = bytes.first, first == tag else { throw malformed("unexpected tag") }
        bytes = bytes.dropFirst()
        guard let lengthByte = bytes.first else { throw malformed("truncated length") }
        bytes = bytes.dropFirst()
        var length = 0
        switch lengthByte {
        case 0..<0x80:
            length = Int(lengthByte)
        case 0x81:
            guard let next = bytes.first, next >= 0x80 else { throw malformed("non-minimal length") }
            bytes = bytes.dropFirst()
            length = Int(next)
        case 0x82:
            guard bytes.count >= 2, bytes[bytes.startIndex] != 0 else { throw malformed("non-minimal or truncated length") }
            length = Int(bytes[bytes.startIndex]) << 8 | Int(bytes[bytes.startIndex + 1])
            bytes = bytes.dropFirst(2)
        default:
            throw malformed("oversized length")
        }
        guard bytes.count >= length else { throw malformed("truncated contents") }
        let contents = bytes.prefix(length)
        bytes = bytes.dropFirst(length)
        return contents
    }

    /// Reads a non-negative INTEGER in minimal form, returned without its sign byte.
    mutating func unsignedInteger(maximumByteCount: Int) throws -> ArraySlice<UInt8> {
        var value = try element(tag: 0x02)
        guard let first = value.first else { throw malformed("empty integer") }
        guard first & 0x80 == 0 else { throw malformed("negative integer") }
        if first == 0, value.count > 1 {
            guard value[value.startIndex + 1] & 0x80 != 0 else { throw malformed("non-minimal integer") }
            value = value.dropFirst()
        }
        guard value.count <= maximumByteCount else { throw malformed("integer too large") }
        return value
    }

    /// Encodes a big-endian unsigned integer as a minimal DER INTEGER.
    static func encodeUnsignedInteger(_ magnitude: some Collection<UInt8>) -> Data {
        var digits = Array(magnitude.drop(while: { $0 == 0 }))
        if digits.isEmpty { digits = [0] }
        if digits[0] & 0x80 != 0 { digits.insert(0, at: 0) }
        return Data([0x02, UInt8(digits.count)] + digits)
    }
}
