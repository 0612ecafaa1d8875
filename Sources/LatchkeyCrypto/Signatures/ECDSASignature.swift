public import Foundation

/// A P-256 ECDSA signature, convertible between the two encodings in use:
/// ASN.1 DER `ECDSA-Sig-Value` (RFC 3279 §2.2.3; what OpenSSL and WebAuthn use) and the
/// fixed 64-byte `r ‖ s` of JOSE (RFC 7518 §3.4) and IEEE P1363.
///
/// Both parsers are strict: DER must be the one canonical encoding (minimal lengths, no
/// superfluous leading zero, non-negative integers, no trailing bytes), and the raw form
/// must be exactly 64 bytes. Whether r and s are in range is for verification to decide.
public struct ECDSASignature: Hashable, Sendable {
    /// The scalar width of P-256 in bytes.
    static let scalarByteCount = 32

    /// `r ‖ s`, each 32 bytes big-endian.
    public let rawRepresentation: Data

    /// From the JOSE/P1363 form: exactly 64 bytes.
    public init(rawRepresentation raw: some DataProtocol) throws {
        guard raw.count == 2 * Self.scalarByteCount else {
            throw CryptoError.invalidSignatureEncoding(reason: "a raw P-256 signature is 64 bytes, not \(raw.count)")
        }
        rawRepresentation = Data(raw)
    }

    /// From strict DER.
    public init(derRepresentation der: some DataProtocol) throws {
        var reader = DERReader(Array(der))
        let sequence = try reader.element(tag: 0x30)
        guard reader.isAtEnd else { throw DERReader.malformed("bytes after the signature") }
        var contents = DERReader(sequence)
        let r = try contents.unsignedInteger(maximumByteCount: Self.scalarByteCount)
        let s = try contents.unsignedInteger(maximumByteCount: Self.scalarByteCount)
        guard contents.isAtEnd else { throw DERReader.malformed("more than two integers") }
        rawRepresentation = Data(repeating: 0, count: Self.scalarByteCount - r.count) + r
            + Data(repeating: 0, count: Self.scalarByteCount - s.count) + s
    }

    /// The canonical DER encoding.
    public var derRepresentation: Data {
        let half = Self.scalarByteCount
        let r = DERReader.encodeUnsignedInteger(rawRepresentation.prefix(half))
        let s = DERReader.encodeUnsignedInteger(rawRepresentation.suffix(half))
        // r and s are at most 33 bytes each, so every length here fits the short form.
        return Data([0x30, UInt8(r.count + s.count)]) + r + s
    }
}

/// Just enough DER (ITU-T X.690 §8, §10) for ECDSA signatures, strict about canonical form.
struct DERReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { bytes.isEmpty }

    static func malformed(_ why: String) -> CryptoError {
        CryptoError.invalidSignatureEncoding(reason: "malformed DER signature: \(why)")
    }

    /// Reads one element with `tag` and returns its contents.
    mutating func element(tag: UInt8) throws -> ArraySlice<UInt8> {
        guard let first = bytes.first, first == tag else { throw Self.malformed("unexpected tag") }
        bytes = bytes.dropFirst()
        guard let lengthByte = bytes.first else { throw Self.malformed("truncated length") }
        bytes = bytes.dropFirst()
        var length = 0
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            // Long form: only one length byte makes sense here, and DER requires it
            // for lengths of 128 and more only.
            guard lengthByte == 0x81, let next = bytes.first, next >= 0x80 else {
                throw Self.malformed("non-minimal or oversized length")
            }
            bytes = bytes.dropFirst()
            length = Int(next)
        }
        guard bytes.count >= length else { throw Self.malformed("truncated contents") }
        let contents = bytes.prefix(length)
        bytes = bytes.dropFirst(length)
        return contents
    }

    /// Reads a non-negative INTEGER in minimal form, returned without its sign byte.
    mutating func unsignedInteger(maximumByteCount: Int) throws -> ArraySlice<UInt8> {
        var value = try element(tag: 0x02)
        guard let first = value.first else { throw Self.malformed("empty integer") }
        guard first & 0x80 == 0 else { throw Self.malformed("negative integer") }
        if first == 0, value.count > 1 {
            guard value[value.startIndex + 1] & 0x80 != 0 else { throw Self.malformed("non-minimal integer") }
            value = value.dropFirst()
        }
        guard value.count <= maximumByteCount else { throw Self.malformed("integer too large") }
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
