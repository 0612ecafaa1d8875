#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the big-endian TPM 2.0 wire format (TPM 2.0 Library, Part 2 "Structures"): fixed
/// integers and `TPM2B_*` buffers, a 2-byte size then that many bytes. Every read is
/// bounded by what is left, so a size that claims more than the input is an error, never
/// a read past the end; ``finish(_:)`` refuses trailing bytes, since WebAuthn hands us
/// each structure whole (L3 §8.3: `certInfo` and `pubArea` without their size prefix).
struct TPMReader {
    private let bytes: Data
    private var offset: Int
    /// What is being read, for error messages ("certInfo", "pubArea").
    private let structure: String

    init(_ bytes: Data, structure: String) {
        self.bytes = bytes
        self.offset = bytes.startIndex
        self.structure = structure
    }

    private func malformed(_ field: String, _ why: String) -> WebAuthnError {
        WebAuthnError.malformedTPMStructure(reason: "\(structure): \(field) \(why)")
    }

    private mutating func take(_ count: Int, for field: String) throws(WebAuthnError) -> Data {
        guard count >= 0, bytes.endIndex - offset >= count else {
            throw malformed(field, "needs \(count) bytes, \(bytes.endIndex - offset) are left")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    private mutating func integer(_ width: Int, for field: String) throws(WebAuthnError) -> UInt64 {
        try take(width, for: field).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func uint8(_ field: String) throws(WebAuthnError) -> UInt8 {
        UInt8(try integer(1, for: field))
    }

    mutating func uint16(_ field: String) throws(WebAuthnError) -> UInt16 {
        UInt16(try integer(2, for: field))
    }

    mutating func uint32(_ field: String) throws(WebAuthnError) -> UInt32 {
        UInt32(try integer(4, for: field))
    }

    mutating func uint64(_ field: String) throws(WebAuthnError) -> UInt64 {
        try integer(8, for: field)
    }

    /// A `TPM2B_*`: its 2-byte size, then its bytes (at most `maximum`).
    mutating func sized(_ field: String, maximum: Int) throws(WebAuthnError) -> Data {
        let count = Int(try uint16("\(field) size"))
        guard count <= maximum else { throw malformed(field, "is \(count) bytes, over the \(maximum) its type allows") }
        return Data(try take(count, for: field))
    }

    /// Ends the read: nothing may follow the structure.
    func finish() throws(WebAuthnError) {
        guard offset == bytes.endIndex else {
            throw WebAuthnError.malformedTPMStructure(reason: "\(structure): \(bytes.endIndex - offset) bytes follow the structure")
        }
    }
}
