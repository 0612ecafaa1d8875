#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// Bytes that travel as base64url without padding in WebAuthn L3 JSON (§5.1.8 and the
/// `*JSON` dictionaries). Decoding is strict: anything but canonical base64url is a
/// decoding error.
public struct Base64URLBytes: Codable, Hashable, Sendable, CustomStringConvertible {
    public var data: Data

    public init(_ data: Data) {
        self.data = data
    }

    /// The longest base64url text read for one value.
    static let maximumTextLength = 64 * 1024

    /// The bytes `text` spells in base64url without padding, at most
    /// ``maximumTextLength`` characters of it; nil for anything else.
    init?(base64URL text: String) {
        guard text.utf8.count <= Self.maximumTextLength, let data = try? Base64URL.decode(text) else { return nil }
        self.data = data
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = Base64URLBytes(base64URL: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not base64url"))
        }
        self = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Base64URL.encode(data))
    }

    public var description: String { Base64URL.encode(data) }
}

/// `{"publicKey": options}`, the envelope servers often put options in.
struct WrappedOptions<T: Decodable>: Decodable {
    var publicKey: T
}

/// Decoding helpers shared by the L3 JSON types.
enum WebAuthnJSON {
    static let maximumSize = 256 * 1024

    /// Decodes `T` from JSON, accepting it bare or wrapped in `{"publicKey": …}` as servers
    /// commonly send options (L3 §5.1.9 `parseCreationOptionsFromJSON` takes the inner object).
    static func decodeOptions<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard data.count <= maximumSize else {
            throw WebAuthnError.malformedJSON(reason: "options over \(maximumSize) bytes")
        }
        let decoder = JSONDecoder()
        if let wrapped = try? decoder.decode(WrappedOptions<T>.self, from: data) { return wrapped.publicKey }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw WebAuthnError.malformedJSON(reason: "not valid \(T.self): \(Self.describe(error))", underlying: error)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard data.count <= maximumSize else {
            throw WebAuthnError.malformedJSON(reason: "\(T.self) over \(maximumSize) bytes")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw WebAuthnError.malformedJSON(reason: "not valid \(T.self): \(Self.describe(error))", underlying: error)
        }
    }

    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Names the field a decoding error is about, never the value.
    static func describe(_ error: any Error) -> String {
        if let error = error as? CryptoError { return error.reason }
        if let error = error as? JSONMembers.Failure { return error.description }
        guard let error = error as? DecodingError else { return "malformed" }
        switch error {
        case .keyNotFound(let key, let context): return "missing \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "bad \(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        @unknown default: return "malformed"
        }
    }
}
