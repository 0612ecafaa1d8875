#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A CBOR data item (RFC 8949), limited to what WebAuthn uses: integers, byte and text
/// strings, arrays, maps, booleans and null. No floats, tags or indefinite lengths: the
/// decoder refuses them (WebAuthn §6.5.5 and CTAP2's canonical form need none).
public indirect enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    /// A negative integer −1 − n, holding n.
    case negative(UInt64)
    case bytes(Data)
    case text(String)
    case array([CBOR])
    /// Map entries in the order they were read or given; encoding sorts them canonically.
    case map([Entry])
    case bool(Bool)
    case null

    /// One map entry.
    public struct Entry: Hashable, Sendable {
        public var key: CBOR
        public var value: CBOR
        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// An integer item.
    public static func integer(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// The value as an `Int`, when it is an integer that fits.
    public var intValue: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): value <= UInt64(Int.max) ? -1 - Int(value) : nil
        default: nil
        }
    }

    public var bytesValue: Data? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var mapEntries: [Entry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    /// The value under `key` in a map (nil for other items or a missing key).
    public subscript(key: CBOR) -> CBOR? {
        mapEntries?.first(where: { $0.key == key })?.value
    }

    public subscript(key: String) -> CBOR? { self[.text(key)] }
    public subscript(key: Int) -> CBOR? { self[.integer(key)] }
}
