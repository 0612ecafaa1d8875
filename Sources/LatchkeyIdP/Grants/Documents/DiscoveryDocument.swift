import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// The reference provider's metadata, as the client reads it (``ProviderMetadata``, one
/// type for both sides): what this provider supports, and its endpoints on the issuer.
enum DiscoveryDocument {
    /// The scopes this provider grants; others are dropped from requests. `ssh` only
    /// when it runs an SSH CA (docs/PROTOCOL.md section 12).
    static func supportedScopes(_ configuration: ProviderConfiguration) -> [String] {
        [OAuthScope.openID, OAuthScope.profile, OAuthScope.email, OAuthScope.offlineAccess]
            + (configuration.sshAuthority ? [SSHCertificateExchange.scope] : [])
    }

    /// The document for `context`'s issuer.
    static func metadata(_ context: ProviderContext) -> ProviderMetadata {
        var metadata = ProviderMetadata(
            issuer: context.issuer.absoluteString,
            authorizationEndpoint: context.url(ProtocolPath.authorization),
            tokenEndpoint: context.url(ProtocolPath.token),
            jwksURI: context.url(ProtocolPath.jwks)
        )
        metadata.userinfoEndpoint = context.url(ProtocolPath.userInfo)
        metadata.revocationEndpoint = context.url(ProtocolPath.revocation)
        metadata.introspectionEndpoint = context.url(ProtocolPath.introspection)
        metadata.deviceAuthorizationEndpoint = context.url(ProtocolPath.deviceAuthorization)
        metadata.authorizationChallengeEndpoint = context.url(ProtocolPath.authorizationChallenge)
        metadata.scopesSupported = supportedScopes(context.configuration)
        if context.configuration.sshAuthority {
            metadata.sshCAEndpoint = context.url(ProtocolPath.sshAuthority)
            metadata.sshCertificateEndpoint = context.url(ProtocolPath.sshCertificates)
            metadata.sshKRLEndpoint = context.url(ProtocolPath.sshRevocations)
        }
        metadata.responseTypesSupported = [AuthorizationRequestParameters.codeResponseType]
        metadata.grantTypesSupported = TokenEndpoint.grants.map(\.rawValue)
        metadata.subjectTypesSupported = ["public"]
        metadata.tokenEndpointAuthMethodsSupported = [ClientMetadataMember.AuthMethod.none.rawValue, ClientMetadataMember.AuthMethod.privateKeyJWT.rawValue]
        metadata.tokenEndpointAuthSigningAlgValuesSupported = [JWSAlgorithm.es256.name, JWSAlgorithm.edDSA.name]
        metadata.codeChallengeMethodsSupported = [PKCE.challengeMethod]
        metadata.authorizationResponseIssParameterSupported = true
        if context.configuration.clientMetadataDocuments.enabled { metadata.clientIDMetadataDocumentSupported = true }
        if context.configuration.clientRegistration.mode != .off { metadata.registrationEndpoint = context.url(ProtocolPath.registration) }
        metadata.idTokenSigningAlgValuesSupported = [JWSAlgorithm.es256.name]
        metadata.dpopSigningAlgValuesSupported = DPoPBinding.algorithms
        return metadata
    }
}
