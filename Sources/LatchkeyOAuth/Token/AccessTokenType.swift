/// A `token_type` (RFC 6749 §7.1, §5.1: compared without case): `Bearer` (RFC 6750) or
/// `DPoP` (RFC 9449 §5), an open set kept as sent.
public struct AccessTokenType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let bearer = AccessTokenType(rawValue: "Bearer")
    public static let dpop = AccessTokenType(rawValue: "DPoP")

    /// The `Authorization` header value presenting `token` in this scheme (RFC 6750 §2.1,
    /// RFC 9449 §7.1).
    public func authorization(_ token: String) -> String {
        rawValue + " " + token
    }

    /// The scheme and token of an `Authorization` header value: `Bearer` or `DPoP`, the
    /// scheme compared without case (RFC 9110 §11.1); nil for another scheme or no token.
    public static func presentation(in header: String) -> (type: AccessTokenType, token: String)? {
        guard let space = header.firstIndex(of: " ") else { return nil }
        let scheme = AccessTokenType(rawValue: String(header[..<space]))
        let token = String(header[header.index(after: space)...])
        guard !token.isEmpty, scheme == .bearer || scheme == .dpop else { return nil }
        return (scheme, token)
    }

    public static func == (lhs: AccessTokenType, rhs: AccessTokenType) -> Bool {
        lhs.rawValue.lowercased() == rhs.rawValue.lowercased()
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue.lowercased())
    }
}
