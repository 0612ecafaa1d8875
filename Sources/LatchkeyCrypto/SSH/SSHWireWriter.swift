#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Writes the SSH wire encoding (RFC 4251 §5): big-endian integers, length-prefixed
/// strings and `mpint`s, the one encoding OpenSSH's keys, signatures, certificates
/// (`PROTOCOL.certkeys`), revocation lists (`PROTOCOL.krl`) and agent messages
/// (RFC 9987) are made of.
public struct SSHWireWriter: Sendable {
    /// What has been written.
    public private(set) var bytes = Data()

    public init() {}

    public mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func boolean(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    public mutating func uint32(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func uint64(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `string`: its length in four bytes, then the bytes.
    public mutating func string(_ value: some DataProtocol) {
        uint32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    /// A `string` holding UTF-8 text.
    public mutating func string(_ value: String) {
        string(Data(value.utf8))
    }

    /// Bytes already encoded, as they are.
    public mutating func append(_ encoded: some DataProtocol) {
        bytes.append(contentsOf: encoded)
    }

    /// A `string` holding what `body` writes (a nested structure, as a certificate's
    /// options or a signature's `r` and `s`).
    public mutating func nested(_ body: (inout SSHWireWriter) -> Void) {
        var inner = SSHWireWriter()
        body(&inner)
        string(inner.bytes)
    }

    /// An `mpint` holding the non-negative integer whose big-endian magnitude is
    /// `magnitude`: leading zero bytes dropped, one zero byte put back where the top bit
    /// would otherwise make it negative, and zero as the empty string (RFC 4251 §5).
    public mutating func mpint(unsigned magnitude: some DataProtocol) {
        let trimmed = Data(magnitude).drop { $0 == 0 }
        if let first = trimmed.first, first & 0x80 != 0 {
            string(Data([0]) + trimmed)
        } else {
            string(trimmed)
        }
    }
}
