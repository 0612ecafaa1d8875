#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// Any JSON value, for claims and provider documents whose members Latchkey does not all
/// model.
public enum JSONValue: Codable, Hashable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Strings first: they are most members, and each failed attempt costs a thrown
        // error. The decoder is strict, so the order changes no result.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Parses a JSON object, bounded in size and in nesting (``JSONReader``, which also
    /// refuses a name given twice, as RFC 7519 §4 lets a JWT parser do, and is several
    /// times cheaper than `JSONDecoder` on the ID token every sign-in reads).
    static func object(from data: Data, maximumSize: Int = 1 << 20, what: String) throws -> [String: JSONValue] {
        guard data.count <= maximumSize else {
            throw OAuthError.responseTooLarge(reason: "\(what) over \(maximumSize) bytes")
        }
        guard let read = try? JSONReader.parse(data), case .object(let members)? = JSONValue(read) else {
            throw OAuthError.malformedResponse(reason: "\(what) is not a JSON object")
        }
        return members
    }
}
