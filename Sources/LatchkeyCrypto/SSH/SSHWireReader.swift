#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Reads the SSH wire encoding (RFC 4251 §5) from bytes a stranger sent: every length is
/// checked against what is left and against a bound the caller names, so a forged length
/// can neither read past the end nor make the reader allocate what the input does not
/// hold. Each failure is a ``CryptoError`` with code ``CryptoError/Code/invalidEncoding``
/// naming what was malformed.
public struct SSHWireReader: Sendable {
    private let bytes: Data
    private var offset: Int
    /// What is being read, for error messages ("SSH certificate").
    private let subject: String

    public init(_ bytes: Data, subject: String = "SSH data") {
        self.bytes = Data(bytes)
        self.offset = 0
        self.subject = subject
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// How many bytes are left.
    public var remaining: Int { bytes.count - offset }

    /// Throws unless every byte has been read: no structure carries trailing bytes.
    public func expectEnd() throws {
        guard isAtEnd else { throw malformed("\(remaining) bytes after the end") }
    }

    public func malformed(_ reason: String) -> CryptoError {
        CryptoError.invalidEncoding(reason: "\(subject): \(reason)")
    }

    private mutating func take(_ count: Int, _ what: String) throws -> Data {
        guard count >= 0, count <= remaining else { throw malformed("truncated \(what)") }
        let start = bytes.startIndex + offset
        offset += count
        return bytes[start..<start + count]
    }

    public mutating func byte() throws -> UInt8 {
        try take(1, "byte").first ?? 0
    }

    /// A `boolean`: 0 or 1 (RFC 4251 §5 allows any non-zero; OpenSSH writes 1, and a
    /// strict reader refuses what it would not write).
    public mutating func boolean() throws -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw malformed("a boolean other than 0 or 1")
        }
    }

    public mutating func uint32() throws -> UInt32 {
        try take(4, "uint32").reduce(0) { $0 << 8 | UInt32($1) }
    }

    public mutating func uint64() throws -> UInt64 {
        try take(8, "uint64").reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A `string` of at most `maximumLength` bytes.
    public mutating func string(maximumLength: Int, _ what: String = "string") throws -> Data {
        let length = try uint32()
        guard length <= maximumLength else { throw malformed("\(what) of \(length) bytes, more than \(maximumLength)") }
        return Data(try take(Int(length), what))
    }

    /// A `string` holding UTF-8 text of at most `maximumLength` bytes.
    public mutating func text(maximumLength: Int, _ what: String = "text") throws -> String {
        let data = try string(maximumLength: maximumLength, what)
        guard let text = String(data: data, encoding: .utf8) else { throw malformed("\(what) is not UTF-8") }
        return text
    }

    /// A reader over a nested `string` of at most `maximumLength` bytes.
    public mutating func nested(maximumLength: Int, _ what: String) throws -> SSHWireReader {
        SSHWireReader(try string(maximumLength: maximumLength, what), subject: "\(subject), \(what)")
    }

    /// An `mpint` that must be non-negative and at most `maximumByteCount` bytes of
    /// magnitude, in its one minimal encoding; its big-endian magnitude.
    public mutating func unsignedMPInt(maximumByteCount: Int, _ what: String = "mpint") throws -> Data {
        let raw = try string(maximumLength: maximumByteCount + 1, what)
        guard let first = raw.first else { return Data() }
        if first & 0x80 != 0 { throw malformed("negative \(what)") }
        if first == 0 {
            guard raw.count > 1, raw[raw.startIndex + 1] & 0x80 != 0 else { throw malformed("\(what) with a superfluous leading zero") }
            return Data(raw.dropFirst())
        }
        guard raw.count <= maximumByteCount else { throw malformed("\(what) longer than \(maximumByteCount) bytes") }
        return raw
    }
}
