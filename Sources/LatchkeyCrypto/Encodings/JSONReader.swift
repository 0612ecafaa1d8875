#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Glibc

/// Reads one JSON text (RFC 8259) into a ``Value`` tree, strictly, for the small objects a
/// server parses on every sign-in (docs/PERFORMANCE.md, "Less per request"): a WebAuthn
/// assertion and its client data. `JSONDecoder` reaches the same members through
/// containers, coding keys and boxed values, several times the work of the parse itself.
///
/// Stricter than RFC 8259 requires, as I-JSON (RFC 7493 §2) is: a name given twice in one
/// object is refused (two readers could otherwise take different ones), and so are text
/// that is not UTF-8 and escapes that name a lone surrogate (§2.1). Nesting is bounded by
/// ``maximumDepth``; the caller bounds the text's size. Numbers are kept as the text that
/// spelled them, checked against the grammar (§6), for the caller to read.
///
/// Vault records and DPoP claims keep their flat reader (`FlatJSONObject`), which holds a
/// record's ten members in an array: building a dictionary per object, as this reader
/// must for an object of any size, made a 10,000-key listing 25% to 50% slower.
public enum JSONReader {
    /// A JSON value; an object's members by name. Not `indirect`: arrays and
    /// dictionaries already hold their elements out of line, and a box per string or
    /// number would be an allocation each.
    public enum Value: Sendable, Hashable {
        case object([String: Value])
        case array([Value])
        case string(String)
        case number(String)
        case bool(Bool)
        case null

        /// The string, if this is one.
        public var string: String? {
            guard case .string(let text) = self else { return nil }
            return text
        }
    }

    /// The byte a two-character escape (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`;
    /// RFC 8259 §7) stands for, given the byte after the backslash; nil for `u` and for
    /// anything else. The vault's flat reader (`FlatJSONObject`) shares it.
    static func character(escapedBy escape: UInt8) -> UInt8? {
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// Objects and arrays nested deeper than this are refused: a WebAuthn response is
    /// three levels deep.
    public static let maximumDepth = 32

    /// The value `bytes` holds, with nothing but whitespace around it; throws
    /// ``CryptoError/Code/invalidEncoding`` saying where the text stopped being JSON.
    public static func parse(_ bytes: some DataProtocol) throws -> Value {
        try bytes.withContiguousBytes { buffer in
            var parser = Parser(buffer.bindMemory(to: UInt8.self))
            return try parser.document()
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        func failure(_ why: String) -> CryptoError {
            CryptoError.invalidEncoding(reason: "JSON: \(why) at byte \(offset)")
        }

        mutating func document() throws -> Value {
            let value = try self.value(depth: 0)
            skipWhitespace()
            guard offset == bytes.count else { throw failure("text after the value") }
            return value
        }

        mutating func skipWhitespace() {
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x20, 0x09, 0x0A, 0x0D: offset += 1
                default: return
                }
            }
        }

        /// The next byte after whitespace, not consumed.
        mutating func peek() throws -> UInt8 {
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unexpected end") }
            return bytes[offset]
        }

        mutating func expect(_ literal: StaticString) throws {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - offset >= count, memcmp(bytes.baseAddress! + offset, literal.utf8Start, count) == 0 else {
                throw failure("not a JSON value")
            }
            offset += count
        }

        mutating func value(depth: Int) throws -> Value {
            let first = try peek()
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "["), depth >= JSONReader.maximumDepth {
                throw failure("nested deeper than \(JSONReader.maximumDepth)")
            }
            switch first {
            case UInt8(ascii: "{"):
                return try object(depth: depth + 1)
            case UInt8(ascii: "["):
                return try array(depth: depth + 1)
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default:
                return .number(try number())
            }
        }

        mutating func object(depth: Int) throws -> Value {
            offset += 1
            var members: [String: Value] = [:]
            if try peek() == UInt8(ascii: "}") {
                offset += 1
                return .object(members)
            }
            while true {
                guard try peek() == UInt8(ascii: "\"") else { throw failure("a member name must be a string") }
                let name = try string()
                guard try peek() == UInt8(ascii: ":") else { throw failure("':' expected after a member name") }
                offset += 1
                let member = try value(depth: depth)
                guard members.updateValue(member, forKey: name) == nil else { throw failure("a member named twice") }
                switch try peek() {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "}"):
                    offset += 1
                    return .object(members)
                default: throw failure("',' or '}' expected")
                }
            }
        }

        mutating func array(depth: Int) throws -> Value {
            offset += 1
            var elements: [Value] = []
            if try peek() == UInt8(ascii: "]") {
                offset += 1
                return .array(elements)
            }
            while true {
                elements.append(try value(depth: depth))
                switch try peek() {
                case UInt8(ascii: ","): offset += 1
                case UInt8(ascii: "]"):
                    offset += 1
                    return .array(elements)
                default: throw failure("',' or ']' expected")
                }
            }
        }

        /// A string (§7), its opening quote at `offset`.
        mutating func string() throws -> String {
            offset += 1
            let start = offset
            // The common case, no escapes: the bytes as they are, checked as UTF-8 once.
            while offset < bytes.count {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    let text = try utf8(start..<offset)
                    offset += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                offset += 1
            }
            var unescaped = Array(bytes[start..<offset])
            while offset < bytes.count {
                let byte = bytes[offset]
                switch byte {
                case UInt8(ascii: "\""):
                    offset += 1
                    guard let text = String(validating: unescaped, as: UTF8.self) else { throw failure("a string that is not UTF-8") }
                    return text
                case UInt8(ascii: "\\"):
                    offset += 1
                    guard offset < bytes.count else { break }
                    let escape = bytes[offset]
                    offset += 1
                    if let byte = JSONReader.character(escapedBy: escape) {
                        unescaped.append(byte)
                    } else if escape == UInt8(ascii: "u") {
                        let scalar = try escapedScalar()
                        unescaped.append(contentsOf: String(Character(scalar)).utf8)
                    } else {
                        throw failure("an unknown escape")
                    }
                default:
                    guard byte >= 0x20 else { throw failure("a control character in a string") }
                    unescaped.append(byte)
                    offset += 1
                }
            }
            throw failure("a string without its closing quote")
        }

        /// `\uXXXX`, or two of them for a surrogate pair; a lone surrogate is refused.
        mutating func escapedScalar() throws -> Unicode.Scalar {
            let first = try hexQuad()
            if (0xD800...0xDBFF).contains(first) {
                guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                    throw failure("a lone surrogate")
                }
                offset += 2
                let second = try hexQuad()
                guard (0xDC00...0xDFFF).contains(second) else { throw failure("a lone surrogate") }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(first) else { throw failure("a lone surrogate") }
            return scalar
        }

        mutating func hexQuad() throws -> UInt32 {
            guard bytes.count - offset >= 4 else { throw failure("a short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[offset]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw failure("a \\u escape that is not hexadecimal")
                }
                value = value << 4 | UInt32(digit)
                offset += 1
            }
            return value
        }

        /// A number (§6): `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() throws -> String {
            let start = offset
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < bytes.count, Self.isDigit(bytes[offset]) else { throw failure("not a JSON value") }
            if bytes[offset] == UInt8(ascii: "0") {
                offset += 1
            } else {
                digits()
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                offset += 1
                guard offset < bytes.count, Self.isDigit(bytes[offset]) else { throw failure("a fraction without digits") }
                digits()
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
                guard offset < bytes.count, Self.isDigit(bytes[offset]) else { throw failure("an exponent without digits") }
                digits()
            }
            return try utf8(start..<offset)
        }

        mutating func digits() {
            while offset < bytes.count, Self.isDigit(bytes[offset]) { offset += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }

        func utf8(_ range: Range<Int>) throws -> String {
            guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
                throw failure("a string that is not UTF-8")
            }
            return text
        }
    }
}
