extension AdminAPI {
    /// An identity as the admin API shows it.
    public struct Identity: Codable, Hashable, Sendable {
        public var id: String
        public var username: String
        public var email: String?
        public var displayName: String
        /// RFC 3339, UTC, as every time the protocol and `--json` write.
        public var createdAt: String
        /// The attestation its credentials must carry (`tpm`), when it demands one.
        public var requireAttestation: String?

        public init(id: String, username: String, email: String?, displayName: String, createdAt: String, requireAttestation: String? = nil) {
            self.id = id
            self.username = username
            self.email = email
            self.displayName = displayName
            self.createdAt = createdAt
            self.requireAttestation = requireAttestation
        }
    }

    /// `POST /admin/identities`.
    public struct IdentityCreation: Codable, Hashable, Sendable {
        public var username: String
        public var email: String?
        public var displayName: String?
        /// `tpm`: every credential registered for the identity, by any bind link, recovery
        /// or import, must carry `tpm` attestation (docs/PROTOCOL.md section 10).
        public var requireAttestation: String?

        public init(username: String, email: String? = nil, displayName: String? = nil, requireAttestation: String? = nil) {
            self.username = username
            self.email = email
            self.displayName = displayName
            self.requireAttestation = requireAttestation
        }
    }

    /// `201` to ``IdentityCreation``: the identity and a bind URL for its first device.
    public struct IdentityCreated: Codable, Hashable, Sendable {
        public var identity: Identity
        public var bindURL: String

        public init(identity: Identity, bindURL: String) {
            self.identity = identity
            self.bindURL = bindURL
        }
    }

    /// `GET /admin/identities/<id or username>`.
    public struct IdentityAnswer: Codable, Hashable, Sendable {
        public var identity: Identity

        public init(identity: Identity) {
            self.identity = identity
        }
    }

    /// `GET /admin/identities`: a page in creation order; `next` is the `after` of the
    /// next page, absent on the last.
    public struct IdentityPage: Codable, Hashable, Sendable {
        public var identities: [Identity]
        public var next: String?

        public init(identities: [Identity], next: String? = nil) {
            self.identities = identities
            self.next = next
        }
    }

    /// `DELETE /admin/identities/<id>`.
    public struct Deletion: Codable, Hashable, Sendable {
        public var deleted: Bool

        public init(deleted: Bool) {
            self.deleted = deleted
        }
    }

    /// `POST /admin/identities/<id>/bind-jobs`.
    public struct BindJobRequest: Codable, Hashable, Sendable {
        /// `bind` (default) or `recovery`.
        public var kind: String?
        /// Seconds.
        public var expiresIn: Double?
        public var postBindingRedirectURI: String?
        public var requireEmailCode: Bool?

        public init(kind: String? = nil, expiresIn: Double? = nil, postBindingRedirectURI: String? = nil, requireEmailCode: Bool? = nil) {
            self.kind = kind
            self.expiresIn = expiresIn
            self.postBindingRedirectURI = postBindingRedirectURI
            self.requireEmailCode = requireEmailCode
        }
    }

    /// `201` to ``BindJobRequest``.
    public struct BindJobCreated: Codable, Hashable, Sendable {
        public var bindURL: String

        public init(bindURL: String) {
            self.bindURL = bindURL
        }
    }
}
