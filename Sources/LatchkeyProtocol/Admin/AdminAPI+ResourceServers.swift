extension AdminAPI {
    /// `POST /admin/resource-servers`: a resource server that may introspect tokens
    /// (RFC 7662 §2.1 asks the caller to authenticate).
    public struct ResourceServerCreation: Codable, Hashable, Sendable {
        /// A name for people (1 to 128 characters).
        public var name: String

        public init(name: String) {
            self.name = name
        }
    }

    /// Its credential, shown once: the provider keeps only a hash of the secret. The
    /// resource server sends `Authorization: Basic base64(id:secret)` to ``introspectionEndpoint``.
    public struct ResourceServerCreated: Codable, Hashable, Sendable {
        public var id: String
        public var secret: String
        public var introspectionEndpoint: String

        public init(id: String, secret: String, introspectionEndpoint: String) {
            self.id = id
            self.secret = secret
            self.introspectionEndpoint = introspectionEndpoint
        }
    }
}
