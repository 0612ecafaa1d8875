extension AdminAPI {
    /// A credential as the admin API lists it.
    public struct Credential: Codable, Hashable, Sendable {
        /// Base64url.
        public var id: String
        /// The JOSE name of its algorithm (`ES256`, `EdDSA`).
        public var algorithm: String
        public var signCount: UInt32
        public var revoked: Bool
        public var createdAt: Int
        public var lastUsedAt: Int?

        public init(id: String, algorithm: String, signCount: UInt32, revoked: Bool, createdAt: Int, lastUsedAt: Int?) {
            self.id = id
            self.algorithm = algorithm
            self.signCount = signCount
            self.revoked = revoked
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
        }
    }

    /// `GET /admin/identities/<id>/credentials`.
    public struct CredentialList: Codable, Hashable, Sendable {
        public var credentials: [Credential]

        public init(credentials: [Credential]) {
            self.credentials = credentials
        }
    }

    /// `POST /admin/credentials/<id>/revoke`.
    public struct Revocation: Codable, Hashable, Sendable {
        public var revoked: Bool

        public init(revoked: Bool) {
            self.revoked = revoked
        }
    }
}
