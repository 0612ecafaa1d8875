/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): its scheme and its
/// parameters, as a protected resource sends them on a 401 (RFC 6750 §3; RFC 9449 §7.1
/// for `DPoP`; RFC 9728 §5.1 for `resource_metadata`).
///
/// The header is a stranger's text: it is read only up to ``maximumLength`` bytes and
/// ``maximumParameters`` parameters, a challenge that names one parameter twice is
/// dropped (§11.2 allows each name once), and nothing in it is ever executed or followed
/// without the checks of ``ProtectedResourceMetadata``.
public struct AuthenticationChallenge: Hashable, Sendable {
    /// The scheme, lower-cased (schemes compare case-insensitively, §11.1).
    public let scheme: String
    /// The parameters by lower-cased name, values unquoted.
    public let parameters: [String: String]
    /// A token68 credential in place of parameters (§11.2), rarely used in challenges.
    public let token68: String?

    /// The parameters this client reads: RFC 6750 §3's and RFC 9728 §5.1's.
    public enum Parameter: String, CaseIterable, Sendable {
        case realm, scope, error
        case errorDescription = "error_description"
        case errorURI = "error_uri"
        case resourceMetadata = "resource_metadata"
    }

    /// The longest header read, in bytes.
    public static let maximumLength = 8 * 1024
    /// The most parameters read in one header, all challenges together.
    public static let maximumParameters = 32

    /// RFC 9728 §5.1: where the resource's metadata is.
    public var resourceMetadata: String? { parameters[Parameter.resourceMetadata.rawValue] }
    /// RFC 6750 §3: `invalid_token`, `insufficient_scope`, …
    public var error: String? { parameters[Parameter.error.rawValue] }
    /// RFC 6750 §3: the scopes the resource asks for, space-separated.
    public var scope: String? { parameters[Parameter.scope.rawValue] }

    public init(scheme: String, parameters: [String: String] = [:], token68: String? = nil) {
        self.scheme = scheme.lowercased()
        self.parameters = parameters
        self.token68 = token68
    }

    /// Whether `response` refuses the token it was sent with: a 401 whose challenge says
    /// `invalid_token` (RFC 6750 §3.1), so kept tokens should be replaced, not sent again.
    public static func refusesToken(_ response: TransportResponse) -> Bool {
        guard response.status == 401, let header = response.headers["www-authenticate"] else { return false }
        return parse(header).contains { $0.error == OAuthErrorCode.invalidToken.rawValue }
    }

    /// Every challenge in `header`, in order; empty for text over ``maximumLength`` bytes
    /// or that is not a challenge list. A malformed challenge ends the reading: what came
    /// before it is kept.
    public static func parse(_ header: String) -> [AuthenticationChallenge] {
        guard header.utf8.count <= maximumLength else { return [] }
        var reader = Reader(bytes: Array(header.utf8))
        var challenges: [AuthenticationChallenge] = []
        var parameterCount = 0
        while true {
            reader.skipListSeparators()
            guard !reader.atEnd, let scheme = reader.token() else { break }
            var parameters: [String: String] = [:]
            var token68: String?
            var valid = true
            reader.skipSpaces()
            // Parameters (or one token68) until the next scheme: a token not followed by "=".
            while !reader.atEnd, valid {
                let mark = reader.position
                reader.skipListSeparators()
                let comma = reader.bytes[mark..<reader.position].contains(UInt8(ascii: ","))
                guard let name = reader.token() else { valid = reader.atEnd || reader.peek == UInt8(ascii: ","); break }
                reader.skipSpaces()
                if !comma, parameters.isEmpty, token68 == nil, reader.atEnd || reader.peek == UInt8(ascii: ",") {
                    // token68 without padding, right after the scheme.
                    token68 = name
                    break
                }
                guard reader.peek == UInt8(ascii: "=") else {
                    // A new challenge starts here.
                    reader.position = mark
                    break
                }
                // token68: the token, then only "=" padding, then the end or a comma.
                let afterName = reader.position
                var padding = 0
                while reader.peek == UInt8(ascii: "=") { reader.position += 1; padding += 1 }
                reader.skipSpaces()
                if parameters.isEmpty, token68 == nil, reader.atEnd || reader.peek == UInt8(ascii: ",") {
                    token68 = name + String(repeating: "=", count: padding)
                    break
                }
                reader.position = afterName + 1
                reader.skipSpaces()
                guard let value = reader.quotedString() ?? reader.token() else { valid = false; break }
                let key = name.lowercased()
                parameterCount += 1
                guard parameters[key] == nil, parameterCount <= maximumParameters else { valid = false; break }
                parameters[key] = value
                reader.skipSpaces()
                guard reader.atEnd || reader.peek == UInt8(ascii: ",") else { valid = false; break }
            }
            guard valid else { break }
            challenges.append(AuthenticationChallenge(scheme: scheme, parameters: parameters, token68: token68))
        }
        return challenges
    }

    /// A cursor over the header's bytes with RFC 9110 §5.6's pieces.
    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        var atEnd: Bool { position >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[position] }

        /// RFC 9110 §5.6.2 tchar.
        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
            default: Array("!#$%&'*+-.^_`|~/".utf8).contains(byte)
            }
        }

        mutating func skipSpaces() {
            while let byte = peek, byte == 0x20 || byte == 0x09 { position += 1 }
        }

        mutating func skipListSeparators() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") { position += 1 }
        }

        mutating func token() -> String? {
            let start = position
            while let byte = peek, Self.isTokenCharacter(byte) { position += 1 }
            return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
        }

        /// RFC 9110 §5.6.4: a quoted string with backslash escapes; nil (and the cursor
        /// left where it was) when there is none, or when it is unterminated or holds a
        /// control character.
        mutating func quotedString() -> String? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            let start = position
            position += 1
            var value: [UInt8] = []
            while let byte = peek {
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else { position = start; return nil }
                    value.append(escaped)
                    position += 1
                case 0x09, 0x20...0x7E, 0x80...0xFF:
                    value.append(byte)
                default:
                    position = start
                    return nil
                }
            }
            position = start
            return nil
        }
    }
}
