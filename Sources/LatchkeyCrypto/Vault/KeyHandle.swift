#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stable name of a key in a ``KeyVault``: 32 lowercase hexadecimal characters (128
/// random bits), also the record's file name, so a handle can never name a path outside
/// the vault.
public struct KeyHandle: Hashable, Sendable, Codable, CustomStringConvertible, RawRepresentable {
    public let rawValue: String

    /// A handle from text; nil unless it is 32 lowercase hexadecimal characters.
    public init?(rawValue: String) {
        guard rawValue.utf8.count == 32,
              rawValue.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        self.rawValue = rawValue
    }

    /// A new random handle.
    static func random() throws -> KeyHandle {
        let bytes = try SecureRandom.bytes(count: 16)
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return KeyHandle(unchecked: String(decoding: text, as: UTF8.self))
    }

    private init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let handle = KeyHandle(rawValue: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a key handle"))
        }
        self = handle
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
