public import LatchkeyOAuth

extension AdminAPI {
    /// A registered OAuth client (RFC 6749 §2) as the admin API shows it and takes it.
    ///
    /// With a JWK Set the client is confidential and authenticates with `private_key_jwt`
    /// only (RFC 7523 §2.2); without one it is public (a CLI, a device) and names itself by
    /// `client_id`. `grantTypes` are what it may use at `/token` (`authorization_code`,
    /// `refresh_token`, `client_credentials`, the device code grant), `redirectURIs` what an
    /// authorization may return to (compared exactly, RFC 9700 §4.1.3), `scopes` the most it
    /// may ask for.
    public struct Client: Codable, Hashable, Sendable {
        public var id: String
        public var name: String
        public var jwks: JWKSDocument?
        public var grantTypes: [String]
        public var redirectURIs: [String]
        public var scopes: [String]
        /// The resources (RFC 8707) the client may ask tokens for, each a registered
        /// resource server's; nil: any registered one.
        public var resources: [String]?
        /// RFC 3339, UTC; absent in a registration.
        public var createdAt: String?

        public init(
            id: String, name: String? = nil, jwks: JWKSDocument? = nil, grantTypes: [String], redirectURIs: [String] = [],
            scopes: [String] = [], resources: [String]? = nil, createdAt: String? = nil
        ) {
            self.id = id
            self.name = name ?? id
            self.jwks = jwks
            self.grantTypes = grantTypes
            self.redirectURIs = redirectURIs
            self.scopes = scopes
            self.resources = resources
            self.createdAt = createdAt
        }

        /// `name` (default: the id), `jwks`, `redirectURIs` and `scopes` (default: none)
        /// may be left out of a registration, as docs/PROTOCOL.md ("Admin API") says.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? id
            jwks = try container.decodeIfPresent(JWKSDocument.self, forKey: .jwks)
            grantTypes = try container.decode([String].self, forKey: .grantTypes)
            redirectURIs = try container.decodeIfPresent([String].self, forKey: .redirectURIs) ?? []
            scopes = try container.decodeIfPresent([String].self, forKey: .scopes) ?? []
            resources = try container.decodeIfPresent([String].self, forKey: .resources)
            createdAt = try container.decodeIfPresent(String.self, forKey: .createdAt)
        }

        enum CodingKeys: String, CodingKey {
            case id, name, jwks, grantTypes, redirectURIs, scopes, resources, createdAt
        }
    }

    /// `GET /admin/clients`: the registered clients, by id (the built-in `latchkey-cli`
    /// is not listed: it is part of the provider, not of its store).
    public struct ClientList: Codable, Hashable, Sendable {
        public var clients: [Client]

        public init(clients: [Client]) {
            self.clients = clients
        }
    }
}
