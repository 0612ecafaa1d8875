/// The members of OAuth client metadata (RFC 7591 §2 and §3.2.1, OIDC Registration §2's
/// `application_type`), as a dynamic registration and a client ID metadata document
/// (draft-ietf-oauth-client-id-metadata-document-03 §4) carry them: named once for every
/// side that reads or writes them.
public enum ClientMetadataMember: String, Sendable, CaseIterable {
    case clientID = "client_id"
    case clientName = "client_name"
    case redirectURIs = "redirect_uris"
    case grantTypes = "grant_types"
    case responseTypes = "response_types"
    case tokenEndpointAuthMethod = "token_endpoint_auth_method"
    case jwks
    case jwksURI = "jwks_uri"
    case applicationType = "application_type"
    case clientSecret = "client_secret"
    case clientSecretExpiresAt = "client_secret_expires_at"
    case clientIDIssuedAt = "client_id_issued_at"
    case registrationAccessToken = "registration_access_token"
    case registrationClientURI = "registration_client_uri"

    /// `token_endpoint_auth_method` values (RFC 7591 §2): Latchkey's provider takes `none`
    /// and `private_key_jwt`; the shared-secret ones are named to be refused or replaced.
    public enum AuthMethod: String, Sendable {
        case none
        case privateKeyJWT = "private_key_jwt"
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
    }

    /// `application_type` values (OIDC Registration §2).
    public enum ApplicationType: String, Sendable {
        case web
        case native
    }
}
