extension AdminAPI {
    /// `POST /admin/resource-servers`: a resource server that may introspect tokens
    /// (RFC 7662 §2.1 asks the caller to authenticate).
    public struct ResourceServerCreation: Codable, Hashable, Sendable {
        /// A name for people (1 to 128 characters).
        public var name: String
        /// The resource's URI (RFC 8707 §2), the audience of the tokens clients ask for it:
        /// https (http only on loopback), no query or fragment, one server each. Without
        /// one, the server introspects only tokens that name no resource.
        public var resource: String?
        /// `jwt` for JWT access tokens (RFC 9068) the server checks offline with the
        /// provider's keys; `opaque` (the default) for tokens it introspects. Only with a
        /// `resource`: a JWT names its audience.
        public var accessTokenFormat: String?

        public init(name: String, resource: String? = nil, accessTokenFormat: String? = nil) {
            self.name = name
            self.resource = resource
            self.accessTokenFormat = accessTokenFormat
        }
    }

    /// Its credential, shown once: the provider keeps only a hash of the secret. The
    /// resource server sends `Authorization: Basic base64(id:secret)` to ``introspectionEndpoint``.
    public struct ResourceServerCreated: Codable, Hashable, Sendable {
        public var id: String
        public var secret: String
        public var introspectionEndpoint: String
        /// The resource as the provider keeps it (its canonical form).
        public var resource: String?
        /// `jwt` or `opaque`.
        public var accessTokenFormat: String?

        public init(id: String, secret: String, introspectionEndpoint: String, resource: String? = nil, accessTokenFormat: String? = nil) {
            self.id = id
            self.secret = secret
            self.introspectionEndpoint = introspectionEndpoint
            self.resource = resource
            self.accessTokenFormat = accessTokenFormat
        }
    }
}
