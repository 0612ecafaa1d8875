import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// A third-party client's metadata (RFC 7591 §2's members), from a client ID metadata
/// document (draft-ietf-oauth-client-id-metadata-document-03 §4) or a dynamic
/// registration (RFC 7591 §3.1), checked member by member: what is read is what the
/// provider uses, and everything it would not use safely is refused by name.
///
/// - `redirect_uris`: 1 to 16 absolute http(s) URIs without a fragment; an authorization
///   request must name one of them exactly (a loopback one with any port).
/// - `token_endpoint_auth_method`: `none` or `private_key_jwt` with keys. A document is
///   public, so a `client_secret` or a `client_secret_*` method in one is refused; a
///   registration asking for a secret is registered as `none` instead (RFC 7591 §3.2.1
///   lets the server replace a value, and says so in its answer): PKCE protects its codes.
/// - `grant_types`: `authorization_code` and `refresh_token` only; `response_types`:
///   `code` only.
/// - `client_name`: 1 to 128 characters without control or format characters; shown
///   beside the client's id and the host of its redirect URI, never alone. `logo_uri`,
///   `client_uri`, `tos_uri` and `policy_uri` are not read: nothing a stranger wrote is
///   shown as if the provider said it.
/// - `application_type` (registrations; OIDC Registration §2): `native` clients redirect to
///   a loopback http URI only, `web` clients (the default) to https URIs only.
struct ClientMetadata: Sendable {
    private typealias Member = ClientMetadataMember
    private typealias Method = ClientMetadataMember.AuthMethod
    private typealias Kind = ClientMetadataMember.ApplicationType

    var clientID: String?
    var clientName: String?
    var redirectURIs: [String]
    var grantTypes: [GrantType]
    var keyedBy: Keys?
    /// What a registration asked for, as registered (`web` or `native`).
    var applicationType: String?

    enum Keys: Sendable {
        case jwksURI(URL)
        case jwks(Data)
    }

    /// Why metadata was refused, as the error says it.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
        /// The member refused, where one is (RFC 7591 §3.2.2 names redirect URIs apart).
        var member: ClientMetadataMember?
        init(_ description: String, member: ClientMetadataMember? = nil) {
            self.description = description
            self.member = member
        }
    }

    /// A document fetched from `url`, whose `client_id` must be `url` exactly (§4.1: no
    /// normalisation).
    init(document data: Data, fetchedFrom url: String) throws {
        let members = try Self.members(data)
        guard let clientID = members[Member.clientID.rawValue]?.stringValue, clientID == url else {
            throw Refusal("the document's client_id is not the URL it was fetched from")
        }
        try self.init(members, registration: false)
        self.clientID = clientID
    }

    /// A dynamic registration's request (RFC 7591 §3.1): no `client_id` (the provider
    /// makes one), no `jwks_uri` (keys come inline, as `jwks`).
    init(registration data: Data) throws {
        let members = try Self.members(data)
        guard members[Member.clientID.rawValue] == nil else { throw Refusal("the provider assigns client_id") }
        guard members[Member.jwksURI.rawValue] == nil else { throw Refusal("send the keys as jwks, not jwks_uri") }
        try self.init(members, registration: true)
        let type = try members[Member.applicationType.rawValue].map { value -> String in
            guard let text = value.stringValue, Kind(rawValue: text) != nil else { throw Refusal("application_type must be web or native") }
            return text
        } ?? Kind.web.rawValue
        for uri in redirectURIs {
            let components = URLComponents(string: uri)
            if type == Kind.native.rawValue {
                guard let components, LoopbackRedirect.isLoopback(components) else {
                    throw Refusal("a native client redirects to a loopback http URI (RFC 8252 §7.3)", member: .redirectURIs)
                }
            } else {
                guard components?.scheme?.lowercased() == WebScheme.https, !(components?.host.map(LoopbackHost.contains) ?? true) else {
                    throw Refusal("a web client redirects to https URIs off loopback; a native one to loopback (application_type native)", member: .redirectURIs)
                }
            }
        }
        applicationType = type
    }

    private static func members(_ data: Data) throws -> [String: JSONValue] {
        guard let value = try? JSONValue(json: data, maximumSize: data.count), let members = value.objectValue else {
            throw Refusal("the metadata is not a JSON object")
        }
        return members
    }

    private init(_ members: [String: JSONValue], registration: Bool) throws {
        if let name = members[Member.clientName.rawValue] {
            guard let text = name.stringValue?.trimmingCharacters(in: .whitespaces), (1...128).contains(text.count),
                  !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
            else { throw Refusal("client_name must be 1 to 128 characters without control or format characters") }
            clientName = text
        }
        guard let redirects = members[Member.redirectURIs.rawValue]?.arrayValue, (1...16).contains(redirects.count) else {
            throw Refusal("redirect_uris must list 1 to 16 redirect URIs", member: .redirectURIs)
        }
        redirectURIs = try redirects.map { value in
            guard let text = value.stringValue, ClientRegistry.isRedirectURI(text) else {
                throw Refusal("each redirect URI must be an absolute http(s) URI without a fragment", member: .redirectURIs)
            }
            return text
        }
        if !registration {
            guard members[Member.clientSecret.rawValue] == nil, members[Member.clientSecretExpiresAt.rawValue] == nil else {
                throw Refusal("a metadata document is public: it must not carry a client secret")
            }
        }
        let grants = try members[Member.grantTypes.rawValue].map { value -> [String] in
            guard let names = value.arrayValue?.compactMap(\.stringValue), names.count == value.arrayValue?.count else {
                throw Refusal("grant_types must be a list of grant type names")
            }
            return names
        } ?? [GrantType.authorizationCode.rawValue]
        let allowed = [GrantType.authorizationCode, .refreshToken]
        guard !grants.isEmpty, grants.allSatisfy({ name in allowed.contains { $0.rawValue == name } }) else {
            throw Refusal("grant_types may name authorization_code and refresh_token only")
        }
        grantTypes = allowed.filter { grants.contains($0.rawValue) }
        if let types = members[Member.responseTypes.rawValue] {
            guard types.arrayValue?.map(\.stringValue) == [AuthorizationRequestParameters.codeResponseType] else {
                throw Refusal("response_types may name code only")
            }
        }
        let method = members[Member.tokenEndpointAuthMethod.rawValue].map { $0.stringValue.flatMap(Method.init(rawValue:)) }
            ?? (registration ? Method.clientSecretBasic : Method.none)
        switch method {
        case .none?:
            guard members[Member.jwks.rawValue] == nil, members[Member.jwksURI.rawValue] == nil else {
                throw Refusal("keys without token_endpoint_auth_method private_key_jwt")
            }
        case .privateKeyJWT?:
            if let uri = members[Member.jwksURI.rawValue]?.stringValue, members[Member.jwks.rawValue] == nil, let url = URL(string: uri),
               url.scheme == WebScheme.https || url.scheme == WebScheme.http {
                keyedBy = .jwksURI(url)
            } else if let jwks = members[Member.jwks.rawValue], members[Member.jwksURI.rawValue] == nil, case .object = jwks {
                keyedBy = .jwks(try jwks.json())
            } else {
                throw Refusal("private_key_jwt needs jwks_uri (an https URL) or jwks, one of them")
            }
        case .clientSecretBasic? where registration, .clientSecretPost? where registration:
            // Registered as a public client (`none`), which the answer says.
            guard members[Member.jwks.rawValue] == nil, members[Member.jwksURI.rawValue] == nil else {
                throw Refusal("keys without token_endpoint_auth_method private_key_jwt")
            }
        default:
            throw Refusal("token_endpoint_auth_method must be none or private_key_jwt (no shared secret)")
        }
    }

    /// `jwks` as it is kept: 1 to 8 P-256 or Ed25519 keys that parse, their public members
    /// only (a pasted private key leaves nothing secret behind); nil for anything else.
    static func publicKeySet(_ jwks: Data) -> Data? {
        guard let set = try? JSONDecoder().decode(JWKSDocument.self, from: jwks), (1...ClientRegistry.maximumKeys).contains(set.keys.count),
              set.keys.allSatisfy({ ($0.kty == "EC" || $0.kty == "OKP") && (try? VerifyingKey(jwk: $0)) != nil }),
              let publicOnly = try? TokenEndpoint.encode(JWKSDocument(keys: set.keys.map {
                  JSONWebKey(kty: $0.kty, crv: $0.crv, x: $0.x, y: $0.y, kid: $0.kid, alg: $0.alg, use: $0.use)
              })),
              (try? JWKSet(json: publicOnly)) != nil
        else { return nil }
        return publicOnly
    }

    /// The method the client was registered with.
    var tokenEndpointAuthMethod: String { (keyedBy == nil ? Method.none : Method.privateKeyJWT).rawValue }
}
