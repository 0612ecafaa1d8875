#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Writes one JSON object (RFC 8259 §4) member by member straight into bytes, for the
/// answers a server sends on every sign-in (docs/PERFORMANCE.md, "Less per request"):
/// `JSONEncoder` walks an `Encodable` through containers, boxes every value and sorts the
/// keys of every object, several microseconds an answer, where this writer appends.
///
/// The caller writes the members in the order of their keys' UTF-8 bytes, so the output
/// is exactly what `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes for
/// the same value (the tests compare the two byte for byte, hostile strings included).
/// Keys and string values alike are escaped as ``quoted(_:)`` escapes them.
public struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8]
    private var empty = true

    /// An object about to get its first member; `capacity` bytes are reserved.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// `"key":"value"`.
    public mutating func string(_ key: String, _ value: String) {
        member(key)
        Self.appendQuoted(value, to: &bytes)
    }

    /// `"key":"value"`, or nothing when `value` is nil.
    public mutating func string(_ key: String, ifPresent value: String?) {
        guard let value else { return }
        string(key, value)
    }

    /// `"key":n`.
    public mutating func integer(_ key: String, _ value: some BinaryInteger) {
        member(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `"key":n`, or nothing when `value` is nil.
    public mutating func integer(_ key: String, ifPresent value: (some BinaryInteger)?) {
        guard let value else { return }
        integer(key, value)
    }

    /// `"key":n` for a finite `value` (``appendNumber(_:to:)``).
    public mutating func number(_ key: String, _ value: Double) throws {
        // Checked before the member is begun, so a refused value leaves the object whole.
        guard value.isFinite else { throw Self.notANumber(value) }
        member(key)
        try Self.appendNumber(value, to: &bytes)
    }

    /// `"key":n`, or nothing when `value` is nil.
    public mutating func number(_ key: String, ifPresent value: Double?) throws {
        guard let value else { return }
        try number(key, value)
    }

    /// `"key":{"a":"x","b":"y"}`, the members in the order of their names' UTF-8 bytes.
    public mutating func strings(_ key: String, _ values: [String: String]) {
        member(key)
        bytes.append(UInt8(ascii: "{"))
        for (index, name) in values.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendQuoted(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            Self.appendQuoted(values[name]!, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `"key":["a","b"]`, or nothing when `values` is nil.
    public mutating func strings(_ key: String, ifPresent values: [String]?) {
        guard let values else { return }
        strings(key, values)
    }

    /// `"key":["a","b"]`.
    public mutating func strings(_ key: String, _ values: [String]) {
        member(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":<value>` where `value` is finished JSON (an object another writer made).
    public mutating func json(_ key: String, _ value: some Collection<UInt8>) {
        member(key)
        bytes.append(contentsOf: value)
    }

    /// `"key":[<value>,…]` where each value is finished JSON.
    public mutating func jsonArray(_ key: String, _ values: [[UInt8]]) {
        member(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// The object, closed.
    public consuming func finishedBytes() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The object, closed, as `Data`.
    public consuming func finished() -> Data {
        Data(finishedBytes())
    }

    private mutating func member(_ key: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `text` as a JSON string (RFC 8259 §7), escaped as `JSONEncoder` escapes it: `"` and
    /// `\` with a backslash, the control characters U+0000 to U+001F as `\b`, `\t`, `\n`,
    /// `\f`, `\r` or `\u00XX`; everything else, `/` included, as it is.
    public static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A finite `value` as a JSON number (RFC 8259 §6) that reads back as the same
    /// `Double`: a whole number below 2^53 without a fraction, as `JSONEncoder` writes it,
    /// anything else in Swift's shortest round-trip form (`0.5`, `1e-07`, `1e+20`), which
    /// is within JSON's grammar. A value that is not finite, which JSON cannot spell, throws
    /// ``CryptoError/Code/invalidParameter``.
    public static func appendNumber(_ value: Double, to bytes: inout [UInt8]) throws {
        guard value.isFinite else { throw notANumber(value) }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    private static func notANumber(_ value: Double) -> CryptoError {
        CryptoError.invalidParameter(reason: "JSON has no number for \(value)")
    }

    /// JSON's `true` or `false` (RFC 8259 §3), appended.
    public static func appendBool(_ value: Bool, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// JSON's `null` (RFC 8259 §3), appended.
    public static func appendNull(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: "null".utf8)
    }

    /// `text` as a JSON string, appended (``quoted(_:)``).
    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x00...0x1F:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
