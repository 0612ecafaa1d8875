#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension CBOR {
    /// The encoding in CTAP2 canonical form (CTAP 2.1 §8): every head as short as it can
    /// be, definite lengths, and map keys sorted by their encoded length, then bytewise.
    public func encoded() -> Data {
        var output = [UInt8]()
        encode(into: &output)
        return Data(output)
    }

    func encode(into output: inout [UInt8]) {
        switch self {
        case .unsigned(let value): Self.appendHead(major: 0, value, to: &output)
        case .negative(let value): Self.appendHead(major: 1, value, to: &output)
        case .bytes(let value):
            Self.appendHead(major: 2, UInt64(value.count), to: &output)
            output.append(contentsOf: value)
        case .text(let value):
            Self.appendHead(major: 3, UInt64(value.utf8.count), to: &output)
            output.append(contentsOf: value.utf8)
        case .array(let items):
            Self.appendHead(major: 4, UInt64(items.count), to: &output)
            for item in items { item.encode(into: &output) }
        case .map(let entries):
            Self.appendHead(major: 5, UInt64(entries.count), to: &output)
            let sorted = entries.map { (key: $0.key.encoded(), value: $0.value) }.sorted { a, b in
                a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
            }
            for entry in sorted {
                output.append(contentsOf: entry.key)
                entry.value.encode(into: &output)
            }
        case .bool(let value): output.append(value ? 0xF5 : 0xF4)
        case .null: output.append(0xF6)
        }
    }

    /// The shortest head for `value` (RFC 8949 §4.2.1, preferred serialization).
    static func appendHead(major: UInt8, _ value: UInt64, to output: inout [UInt8]) {
        let type = major << 5
        switch value {
        case 0..<24:
            output.append(type | UInt8(value))
        case 24...0xFF:
            output.append(contentsOf: [type | 24, UInt8(value)])
        case 0x100...0xFFFF:
            output.append(contentsOf: [type | 25, UInt8(value >> 8), UInt8(value & 0xFF)])
        case 0x1_0000...0xFFFF_FFFF:
            output.append(type | 26)
            for shift in stride(from: 24, through: 0, by: -8) { output.append(UInt8(value >> UInt64(shift) & 0xFF)) }
        default:
            output.append(type | 27)
            for shift in stride(from: 56, through: 0, by: -8) { output.append(UInt8(value >> UInt64(shift) & 0xFF)) }
        }
    }
}
