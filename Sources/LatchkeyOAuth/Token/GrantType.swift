/// A token request's `grant_type` (RFC 6749 §4.1.3, §6; more are registered in the IANA
/// "OAuth Parameters" registry): an open set, so a provider's answer to a grant Latchkey
/// does not name is still a value it can refuse by name.
public struct GrantType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// RFC 6749 §4.1.3: an authorization code for tokens.
    public static let authorizationCode = GrantType(rawValue: "authorization_code")
    /// RFC 6749 §6: a refresh token for new tokens.
    public static let refreshToken = GrantType(rawValue: "refresh_token")
    /// RFC 6749 §4.4: a client's own tokens, for itself, on its own authentication.
    public static let clientCredentials = GrantType(rawValue: "client_credentials")
    /// RFC 8628 §3.4: a device code, once a person approved it, for their tokens.
    public static let deviceCode = GrantType(rawValue: "urn:ietf:params:oauth:grant-type:device_code")
}
