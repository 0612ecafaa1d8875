#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An OpenID Provider's metadata (OpenID Connect Discovery 1.0 §3; RFC 8414 §2; RFC 9207
/// §3 for `authorization_response_iss_parameter_supported`; RFC 9449 §5.1 for
/// `dpop_signing_alg_values_supported`): one type for the client that reads it and the
/// reference provider that serves it. Fetched from
/// `<issuer>/.well-known/openid-configuration`; its `issuer` must equal the configured
/// issuer exactly (Discovery §4.3), or it is refused.
public struct ProviderMetadata: Codable, Hashable, Sendable {
    public var issuer: String
    public var authorizationEndpoint: URL
    public var tokenEndpoint: URL
    public var jwksURI: URL
    public var userinfoEndpoint: URL?
    public var revocationEndpoint: URL?
    /// RFC 8414 §2 (RFC 7662).
    public var introspectionEndpoint: URL?
    /// RFC 8628 §4: where a device starts the device authorization grant.
    public var deviceAuthorizationEndpoint: URL?
    /// draft-ietf-oauth-first-party-apps-04 §8: where a first-party app asks for a code
    /// without a browser.
    public var authorizationChallengeEndpoint: URL?
    /// Latchkey's own members, for a provider that runs an SSH CA: where its CA keys
    /// (OpenSSH lines), its certificates and its key revocation list are.
    public var sshCAEndpoint: URL?
    public var sshCertificateEndpoint: URL?
    public var sshKRLEndpoint: URL?
    public var scopesSupported: [String]?
    public var responseTypesSupported: [String]?
    public var grantTypesSupported: [String]?
    public var subjectTypesSupported: [String]?
    public var tokenEndpointAuthMethodsSupported: [String]?
    /// RFC 8414 §2: the algorithms a `private_key_jwt` assertion may be signed with.
    public var tokenEndpointAuthSigningAlgValuesSupported: [String]?
    public var codeChallengeMethodsSupported: [String]?
    public var authorizationResponseIssParameterSupported: Bool?
    /// draft-ietf-oauth-client-id-metadata-document-03 §6: the provider takes an https URL
    /// as `client_id` and fetches the client's metadata from it.
    public var clientIDMetadataDocumentSupported: Bool?
    /// RFC 8414 §2 / RFC 7591 §3: where clients register themselves, when the provider allows it.
    public var registrationEndpoint: URL?
    public var idTokenSigningAlgValuesSupported: [String]?
    public var dpopSigningAlgValuesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case authorizationChallengeEndpoint = "authorization_challenge_endpoint"
        case sshCAEndpoint = "ssh_ca_endpoint"
        case sshCertificateEndpoint = "ssh_certificate_endpoint"
        case sshKRLEndpoint = "ssh_krl_endpoint"
        case scopesSupported = "scopes_supported"
        case responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case clientIDMetadataDocumentSupported = "client_id_metadata_document_supported"
        case registrationEndpoint = "registration_endpoint"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
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

    /// Parses a discovery document and checks it belongs to `issuer`: its `issuer` is the
    /// configured one (Discovery §4.3), and every endpoint is on the issuer's origin, or is
    /// https and accepted by `allowingForeign`. A document naming any other endpoint is
    /// refused whole, before anything is sent anywhere it names.
    static func parse(_ data: Data, issuer: URL, allowingForeign: @Sendable (URL) -> Bool = { _ in false }) throws -> ProviderMetadata {
        guard data.count <= 256 * 1024 else { throw OAuthError.responseTooLarge(reason: "discovery document over 256 KiB") }
        let metadata: ProviderMetadata
        do {
            metadata = try JSONDecoder().decode(ProviderMetadata.self, from: data)
        } catch {
            throw OAuthError.malformedResponse(reason: "the discovery document lacks required endpoints or is not JSON", underlying: error)
        }
        guard metadata.issuer == issuer.absoluteString else {
            throw OAuthError.discoveryIssuerMismatch(reason: "the discovery document names issuer \(metadata.issuer), not the configured \(issuer.absoluteString)"
            )
        }
        let issuerOrigin = WebOrigin(issuer)
        for (name, endpoint) in metadata.endpoints {
            try TransportPolicy.check(endpoint)
            // An endpoint that passed the policy is http(s) with a host: it has an origin.
            let origin = WebOrigin(endpoint)
            guard (origin != nil && origin == issuerOrigin) || (endpoint.scheme?.lowercased() == "https" && allowingForeign(endpoint)) else {
                throw OAuthError.endpointOutsideIssuer(reason: "the discovery document puts \(name) on \(origin?.description ?? endpoint.absoluteString), not on the issuer's origin \(issuerOrigin?.description ?? issuer.absoluteString); nothing was sent there"
                )
            }
        }
        return metadata
    }

    /// Every endpoint the document names, with its member name.
    var endpoints: [(String, URL)] {
        var all = [("authorization_endpoint", authorizationEndpoint), ("token_endpoint", tokenEndpoint), ("jwks_uri", jwksURI)]
        if let userinfoEndpoint { all.append(("userinfo_endpoint", userinfoEndpoint)) }
        if let revocationEndpoint { all.append(("revocation_endpoint", revocationEndpoint)) }
        if let deviceAuthorizationEndpoint { all.append(("device_authorization_endpoint", deviceAuthorizationEndpoint)) }
        if let authorizationChallengeEndpoint { all.append(("authorization_challenge_endpoint", authorizationChallengeEndpoint)) }
        if let sshCAEndpoint { all.append(("ssh_ca_endpoint", sshCAEndpoint)) }
        if let sshCertificateEndpoint { all.append(("ssh_certificate_endpoint", sshCertificateEndpoint)) }
        if let sshKRLEndpoint { all.append(("ssh_krl_endpoint", sshKRLEndpoint)) }
        return all
    }
}
