/// The provider's metadata (OpenID Connect Discovery 1.0 §3; RFC 8414 §2 for
/// `revocation_endpoint` and `code_challenge_methods_supported`; RFC 9207 §3 for
/// `authorization_response_iss_parameter_supported`; RFC 9449 §5.1 for
/// `dpop_signing_alg_values_supported`).
struct DiscoveryDocument: Encodable, Sendable {
    var issuer: String
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var jwksURI: String
    var userinfoEndpoint: String
    var revocationEndpoint: String
    /// RFC 8414 §2 (RFC 7662).
    var introspectionEndpoint: String
    var responseTypesSupported = ["code"]
    var grantTypesSupported = ["authorization_code", "refresh_token"]
    var subjectTypesSupported = ["public"]
    var idTokenSigningAlgValuesSupported = ["ES256"]
    var codeChallengeMethodsSupported = ["S256"]
    var tokenEndpointAuthMethodsSupported = ["none"]
    var authorizationResponseIssParameterSupported = true
    /// RFC 9449 §5.1.
    var dpopSigningAlgValuesSupported = DPoPBinding.algorithms
    /// The scopes this provider grants; others are dropped from requests.
    static let supportedScopes = ["openid", "profile", "email", "offline_access"]
    var scopesSupported = DiscoveryDocument.supportedScopes

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case scopesSupported = "scopes_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
    }
}
