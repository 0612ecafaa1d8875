#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A strict parser for the one JSON shape vault records have: a single object whose
/// values are strings or numbers (RFC 8259 grammar for those; no nesting, no duplicate
/// names). Listing a vault parses thousands of records, and Foundation's JSON decoders
/// cost ~10 µs a record, most of a 10,000-key listing's budget; this costs ~1 µs.
/// Anything outside the shape is an error, never a guess. DPoP proof claims have the same
/// shape (LatchkeyOAuth's `DPoPProofVerifier`), hence `package`.
package struct FlatJSONObject {
    enum Value: Equatable {
        case string(String)
        case number(Double)
    }

    struct Member {
        var name: String
        var value: Value
    }

    /// Name-value pairs in file order. A record has ten, so a linear search beats hashing.
    private(set) var members: [Member] = []

    struct Malformed: Error {}

    package init(parsing data: Data) throws {
        members = try data.withUnsafeBytes { raw in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            return try parser.object()
        }
    }

    package func string(_ name: String) -> String? {
        if case .string(let value)? = members.first(where: { $0.name == name })?.value { return value }
        return nil
    }

    package func number(_ name: String) -> Double? {
        if case .number(let value)? = members.first(where: { $0.name == name })?.value { return value }
        return nil
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
            index += 1
        }

        mutating func object() throws -> [Member] {
            var members: [Member] = []
            members.reserveCapacity(12)
            try expect(UInt8(ascii: "{"))
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    let name = try string()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                    guard !members.contains(where: { $0.name == name }) else { throw Malformed() }
                    members.append(Member(name: name, value: try value()))
                    skipWhitespace()
                    guard index < bytes.count else { throw Malformed() }
                    let separator = bytes[index]
                    index += 1
                    if separator == UInt8(ascii: "}") { break }
                    guard separator == UInt8(ascii: ",") else { throw Malformed() }
                }
            }
            skipWhitespace()
            guard index == bytes.count else { throw Malformed() }
            return members
        }

        mutating func value() throws -> Value {
            guard index < bytes.count else { throw Malformed() }
            return bytes[index] == UInt8(ascii: "\"") ? .string(try string()) : .number(try number())
        }

        mutating func string() throws -> String {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed() }
            index += 1
            let start = index
            // Fast path: no escapes, which is every string the vault writes.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
                index += 1
            }
            guard index < bytes.count else { throw Malformed() }
            if bytes[index] == UInt8(ascii: "\"") {
                defer { index += 1 }
                return text(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            }
            var scalars = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return scalars.withUnsafeBufferPointer { text($0) }
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw Malformed() }
                    let escape = bytes[index]
                    index += 1
                    if let byte = JSONReader.character(escapedBy: escape) {
                        scalars.append(byte)
                    } else if escape == UInt8(ascii: "u") {
                        guard index + 4 <= bytes.count,
                              let code = UInt32(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + 4]), as: UTF8.self), radix: 16),
                              let scalar = Unicode.Scalar(code)
                        else { throw Malformed() }
                        index += 4
                        scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                    } else {
                        throw Malformed()
                    }
                default:
                    guard byte >= 0x20 else { throw Malformed() }
                    scalars.append(byte)
                }
            }
            throw Malformed()
        }

        mutating func number() throws -> Double {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) || [0x2D, 0x2B, 0x2E, 0x65, 0x45].contains(bytes[index]) {
                index += 1
            }
            guard index > start, index - start <= 32,
                  let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)),
                  value.isFinite
            else { throw Malformed() }
            return value
        }

        /// Decodes UTF-8, repairing invalid sequences with U+FFFD. That cannot smuggle
        /// anything past the vault: a repaired value no longer matches the record's MAC,
        /// which the writer computed over valid text.
        func text(_ buffer: UnsafeBufferPointer<UInt8>) -> String {
            String(decoding: buffer, as: UTF8.self)
        }
    }
}
