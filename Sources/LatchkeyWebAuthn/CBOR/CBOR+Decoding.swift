#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension CBOR {
    /// Limits on what the decoder accepts. Every bound stops a hostile input from costing
    /// memory or stack out of proportion to its size.
    public struct DecodingLimits: Sendable {
        /// Largest input, in bytes.
        public var maximumSize = 64 * 1024
        /// Deepest nesting of arrays and maps.
        public var maximumDepth = 8
        /// Most items in one array or map.
        public var maximumItems = 256

        public init() {}
    }

    /// Decodes exactly one item; trailing bytes are an error.
    public static func decode(_ data: Data, limits: DecodingLimits = .init()) throws -> CBOR {
        let (item, consumed) = try decodePrefix(data, limits: limits)
        guard consumed == data.count else {
            throw WebAuthnError.malformedCBOR(reason: "\(data.count - consumed) bytes after the CBOR item")
        }
        return item
    }

    /// Decodes one item from the start of `data` and says how many bytes it took (for
    /// structures that are followed by more data, such as a COSE key in authenticator data).
    public static func decodePrefix(_ data: Data, limits: DecodingLimits = .init()) throws -> (CBOR, Int) {
        guard data.count <= limits.maximumSize else {
            throw WebAuthnError.malformedCBOR(reason: "CBOR input of \(data.count) bytes exceeds \(limits.maximumSize)")
        }
        return try data.withUnsafeBytes { raw in
            var reader = CBORReader(bytes: raw.bindMemory(to: UInt8.self), limits: limits)
            let item = try reader.item(depth: 0)
            return (item, reader.index)
        }
    }
}

/// The strict decoder behind ``CBOR/decode(_:limits:)``.
private struct CBORReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: CBOR.DecodingLimits
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: CBOR.DecodingLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    func malformed(_ why: String) -> WebAuthnError {
        WebAuthnError.malformedCBOR(reason: "malformed CBOR at byte \(index): \(why)")
    }

    mutating func byte() throws -> UInt8 {
        guard index < bytes.count else { throw malformed("truncated") }
        defer { index += 1 }
        return bytes[index]
    }

    /// Reads an argument, refusing non-shortest forms and indefinite lengths.
    mutating func argument(_ info: UInt8) throws -> UInt64 {
        switch info {
        case 0..<24:
            return UInt64(info)
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            var value: UInt64 = 0
            for _ in 0..<width { value = value << 8 | UInt64(try byte()) }
            let minimum: UInt64 = switch width {
            case 1: 24
            case 2: 0x100
            case 4: 0x1_0000
            default: 0x1_0000_0000
            }
            guard value >= minimum else { throw malformed("non-minimal length or value encoding") }
            return value
        case 31:
            throw malformed("indefinite length")
        default:
            throw malformed("reserved additional information \(info)")
        }
    }

    mutating func slice(_ count: UInt64) throws -> UnsafeBufferPointer<UInt8> {
        guard count <= UInt64(bytes.count - index) else { throw malformed("truncated string") }
        defer { index += Int(count) }
        return UnsafeBufferPointer(rebasing: bytes[index..<index + Int(count)])
    }

    mutating func item(depth: Int) throws -> CBOR {
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1F
        switch major {
        case 0:
            return .unsigned(try argument(info))
        case 1:
            return .negative(try argument(info))
        case 2:
            return .bytes(Data(try slice(argument(info))))
        case 3:
            guard let text = String(validating: try slice(argument(info)), as: UTF8.self) else {
                throw malformed("text string is not UTF-8")
            }
            return .text(text)
        case 4, 5:
            guard depth < limits.maximumDepth else { throw malformed("nested deeper than \(limits.maximumDepth)") }
            let count = try argument(info)
            guard count <= UInt64(limits.maximumItems) else { throw malformed("container of \(count) items") }
            if major == 4 {
                var items: [CBOR] = []
                for _ in 0..<count { items.append(try item(depth: depth + 1)) }
                return .array(items)
            }
            var entries: [CBOR.Entry] = []
            for _ in 0..<count {
                let key = try item(depth: depth + 1)
                switch key {
                case .unsigned, .negative, .text: break
                default: throw malformed("map key is not an integer or text")
                }
                guard !entries.contains(where: { $0.key == key }) else { throw malformed("duplicate map key") }
                entries.append(CBOR.Entry(key, try item(depth: depth + 1)))
            }
            return .map(entries)
        case 6:
            throw malformed("tags are not accepted")
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            default: throw malformed("floating point or simple value \(info) not accepted")
            }
        }
    }
}
