#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
        guard reader.isAtEnd else { throw reader.malformed("bytes after the signature") }
        var contents = DERReader(sequence)
        let r = try contents.unsignedInteger(maximumByteCount: Self.scalarByteCount)
        let s = try contents.unsignedInteger(maximumByteCount: Self.scalarByteCount)
        guard contents.isAtEnd else { throw contents.malformed("more than two integers") }
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
