public import Foundation

/// An OpenID Provider's metadata (OpenID Connect Discovery 1.0 §3; RFC 8414 §2), the
/// members Latchkey uses. Fetched from `<issuer>/.well-known/openid-configuration`; its
/// `issuer` must equal the configured issuer exactly (Discovery §4.3), or it is refused.
public struct ProviderMetadata: Codable, Hashable, Sendable {
    public var issuer: String
    public var authorizationEndpoint: URL
    public var tokenEndpoint: URL
    public var jwksURI: URL
    public var userinfoEndpoint: URL?
    public var revocationEndpoint: URL?
    public var codeChallengeMethodsSupported: [String]?
    public var authorizationResponseIssParameterSupported: Bool?
    public var idTokenSigningAlgValuesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
    }

    public init(issuer: String, authorizationEndpoint: URL, tokenEndpoint: URL, jwksURI: URL) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
    }

    /// The discovery document URL for `issuer` (Discovery §4.1).
    public static func discoveryURL(for issuer: URL) -> URL {
        var text = issuer.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/.well-known/openid-configuration") ?? issuer
    }

    /// Parses a discovery document and checks it belongs to `issuer`.
    static func parse(_ data: Data, issuer: URL) throws -> ProviderMetadata {
        guard data.count <= 256 * 1024 else { throw OAuthError(code: .responseTooLarge, reason: "discovery document over 256 KiB") }
        let metadata: ProviderMetadata
        do {
            metadata = try JSONDecoder().decode(ProviderMetadata.self, from: data)
        } catch {
            throw OAuthError(code: .malformedResponse, reason: "the discovery document lacks required endpoints or is not JSON")
        }
        guard metadata.issuer == issuer.absoluteString else {
            throw OAuthError(
                code: .discoveryIssuerMismatch,
                reason: "the discovery document names issuer \(metadata.issuer), not the configured \(issuer.absoluteString)"
            )
        }
        for endpoint in [metadata.authorizationEndpoint, metadata.tokenEndpoint, metadata.jwksURI] + [metadata.userinfoEndpoint, metadata.revocationEndpoint].compactMap({ $0 }) {
            try TransportPolicy.check(endpoint)
        }
        return metadata
    }
}
