#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// The client data (WebAuthn §5.8.1), and its JSON serialization.
///
/// ``serialized()`` writes the bytes exactly as §5.8.1.1 prescribes (members `type`,
/// `challenge`, `origin`, `crossOrigin` in that order, the spec's string escaping), so a
/// relying party hashing them gets the same hash whatever JSON library it uses. The bytes
/// are produced once, signed, and sent as they are: never re-serialised.
public struct CollectedClientData: Hashable, Sendable {
    public static let createType = "webauthn.create"
    public static let getType = "webauthn.get"
    public static let maximumSize = 16 * 1024

    public var type: String
    /// The challenge, raw bytes (base64url in JSON).
    public var challenge: Data
    public var origin: String
    public var crossOrigin: Bool
    public var topOrigin: String?

    public init(type: String, challenge: Data, origin: String, crossOrigin: Bool = false, topOrigin: String? = nil) {
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    /// The JSON-compatible serialization of §5.8.1.1.
    public func serialized() -> Data {
        var result = "{\"type\":" + Self.quoted(type)
        result += ",\"challenge\":" + Self.quoted(Base64URL.encode(challenge))
        result += ",\"origin\":" + Self.quoted(origin)
        result += ",\"crossOrigin\":" + (crossOrigin ? "true" : "false")
        if crossOrigin, let topOrigin { result += ",\"topOrigin\":" + Self.quoted(topOrigin) }
        result += "}"
        return Data(result.utf8)
    }

    /// CCDToString (§5.8.1.2): `"` and `\` escaped, U+0000–U+001F as `\u` and four
    /// lowercase hex digits, everything else as itself.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case let s where s.value < 0x20:
                let hex = String(s.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Parses client data JSON received from a client (§7.1 step 5: "JSON-parse"), as any
    /// JSON, not only the canonical form, since clients may add members. Read by
    /// ``JSONReader``, which refuses a member named twice: a `type` or `challenge` given
    /// twice could be read one way here and another by anyone else who checks it.
    public init(json: Data) throws {
        func malformed(_ why: String) -> WebAuthnError {
            WebAuthnError.malformedClientData(reason: "clientDataJSON: \(why)")
        }
        guard json.count <= Self.maximumSize else { throw malformed("over \(Self.maximumSize) bytes") }
        guard let object = try? JSONReader.parse(json), case .object(let members) = object else {
            throw malformed("not a JSON object")
        }
        guard let type = members["type"]?.string, let challengeText = members["challenge"]?.string,
              let origin = members["origin"]?.string
        else { throw malformed("type, challenge or origin missing") }
        guard let challenge = try? Base64URL.decode(challengeText) else { throw malformed("challenge is not base64url") }
        let crossOrigin: Bool
        switch members["crossOrigin"] {
        case nil: crossOrigin = false
        case .bool(let value): crossOrigin = value
        default: throw malformed("crossOrigin is not a boolean")
        }
        let topOrigin: String?
        switch members["topOrigin"] {
        case nil: topOrigin = nil
        case .string(let value): topOrigin = value
        default: throw malformed("topOrigin is not a string")
        }
        self.init(type: type, challenge: challenge, origin: origin, crossOrigin: crossOrigin, topOrigin: topOrigin)
    }
}
