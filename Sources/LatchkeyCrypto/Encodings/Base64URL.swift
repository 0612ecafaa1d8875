#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// base64url without padding (RFC 4648 §5), as JOSE (RFC 7515 §2) and WebAuthn L3's JSON
/// use it.
///
/// Hand-written rather than Foundation's: Foundation costs ~11 µs for 32 bytes against
/// ~0.15 µs here (docs/ARCHITECTURE.md, "The crypto core"), and its decoder is lenient. Decoding is strict, so each
/// value has exactly one accepted text: no padding, no white space, no characters from the
/// other alphabet, and no non-zero bits in the last symbol's unused tail.
public enum Base64URL {
    /// Encodes `bytes` without padding.
    public static func encode(_ bytes: some DataProtocol) -> String {
        Base64Codec.encode(bytes, table: Base64Codec.urlSymbols, padding: false)
    }

    /// Decodes strict base64url. Throws ``CryptoError`` with code
    /// ``CryptoError/Code/invalidEncoding`` on anything else.
    public static func decode(_ text: some StringProtocol) throws -> Data {
        try Base64Codec.decode(text, table: Base64Codec.urlValues, padded: false)
    }
}

/// The one base64 engine behind ``Base64URL`` and PEM, parameterised by alphabet.
enum Base64Codec {
    static let urlSymbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let standardSymbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlValues = reverse(urlSymbols)
    static let standardValues = reverse(standardSymbols)

    private static let invalid: UInt8 = 0xFF

    private static func reverse(_ symbols: [UInt8]) -> [UInt8] {
        var values = [UInt8](repeating: invalid, count: 256)
        for (value, symbol) in symbols.enumerated() {
            values[Int(symbol)] = UInt8(value)
        }
        return values
    }

    static func encode(_ bytes: some DataProtocol, table: [UInt8], padding: Bool) -> String {
        bytes.withContiguousBytes { input in
            var output = [UInt8]()
            output.reserveCapacity((input.count + 2) / 3 * 4)
            var index = 0
            while index + 3 <= input.count {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output.append(table[Int(chunk >> 18 & 63)])
                output.append(table[Int(chunk >> 12 & 63)])
                output.append(table[Int(chunk >> 6 & 63)])
                output.append(table[Int(chunk & 63)])
                index += 3
            }
            let remaining = input.count - index
            if remaining > 0 {
                let chunk = UInt32(input[index]) << 16 | (remaining == 2 ? UInt32(input[index + 1]) << 8 : 0)
                output.append(table[Int(chunk >> 18 & 63)])
                output.append(table[Int(chunk >> 12 & 63)])
                if remaining == 2 { output.append(table[Int(chunk >> 6 & 63)]) }
                if padding { output.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 3 - remaining)) }
            }
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// Strict decoding. With `padded`, the text must be a multiple of four symbols with
    /// `=` only at the end; without, `=` is refused. Works on the string's own UTF-8
    /// storage and writes into one preallocated buffer (base64 sits on hot paths such as
    /// listing a vault: docs/ARCHITECTURE.md, "The crypto core").
    static func decode(_ text: some StringProtocol, table: [UInt8], padded: Bool) throws -> Data {
        if let result = try text.utf8.withContiguousStorageIfAvailable({ try decode($0, table: table, padded: padded) }) {
            return result
        }
        return try Array(text.utf8).withUnsafeBufferPointer { try decode($0, table: table, padded: padded) }
    }

    static func decode(_ text: [UInt8], table: [UInt8], padded: Bool) throws -> Data {
        try text.withUnsafeBufferPointer { try decode($0, table: table, padded: padded) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8], padded: Bool) throws -> Data {
        var count = input.count
        if padded {
            guard count % 4 == 0 else { throw malformed("length is not a multiple of four") }
            var padding = 0
            while padding < 2, count > 0, input[count - 1] == UInt8(ascii: "=") {
                count -= 1
                padding += 1
            }
        }
        let remainder = count % 4
        guard remainder != 1 else { throw malformed("length leaves a lone symbol") }
        var output = [UInt8](repeating: 0, count: count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1))
        let valid = table.withUnsafeBufferPointer { values in
            output.withUnsafeMutableBufferPointer { out -> Bool in
                var index = 0
                var written = 0
                // Invalid symbols map to 0xFF, so any high bit in the OR marks one.
                var seen: UInt8 = 0
                while index + 4 <= count {
                    let a = values[Int(input[index])], b = values[Int(input[index + 1])]
                    let c = values[Int(input[index + 2])], d = values[Int(input[index + 3])]
                    seen |= a | b | c | d
                    let chunk = UInt32(a & 63) << 18 | UInt32(b & 63) << 12 | UInt32(c & 63) << 6 | UInt32(d & 63)
                    out[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: chunk)
                    index += 4
                    written += 3
                }
                if remainder >= 2 {
                    let a = values[Int(input[index])], b = values[Int(input[index + 1])]
                    let c = remainder == 3 ? values[Int(input[index + 2])] : 0
                    seen |= a | b | c
                    let chunk = UInt32(a & 63) << 18 | UInt32(b & 63) << 12 | UInt32(c & 63) << 6
                    out[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                    if remainder == 3 { out[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8) }
                    // The bits after the last whole byte must be zero (canonical form).
                    let tail = remainder == 3 ? chunk & 0xFF : chunk & 0xFFFF
                    guard tail == 0 else { return false }
                }
                return seen & 0xC0 == 0
            }
        }
        guard valid else { throw malformed("character outside the alphabet or non-zero trailing bits") }
        return Data(output)
    }

    private static func malformed(_ why: String) -> CryptoError {
        CryptoError.invalidEncoding(reason: "malformed base64: \(why)")
    }
}
