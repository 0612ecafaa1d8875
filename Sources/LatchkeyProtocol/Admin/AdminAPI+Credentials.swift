extension AdminAPI {
    /// A credential as the admin API lists it.
    public struct Credential: Codable, Hashable, Sendable {
        /// Base64url.
        public var id: String
        /// The JOSE name of its algorithm (`ES256`, `EdDSA`).
        public var algorithm: String
        public var signCount: UInt32
        public var revoked: Bool
        /// RFC 3339, UTC.
        public var createdAt: String
        public var lastUsedAt: String?
        /// The transports its registration named (WebAuthn L3 §5.2.1.1
        /// `getTransports()`): `internal` for a platform passkey, `usb`, `hybrid`, …
        public var transports: [String]?
        /// The BE and BS flags (L3 §6.1): whether it may be, and is, backed up or synced
        /// (a synced passkey in a password manager), as registered.
        public var backupEligible: Bool?
        public var backedUp: Bool?
        /// `client` for one registered by a client of the JSON API (a Latchkey device key),
        /// `browser` for a passkey made on the registration page: how a person tells their
        /// CLI and browser credentials apart (docs/PROTOCOL.md section 9).
        public var registeredFrom: String?
        /// `tpm` when its registration carried `tpm` attestation that chained to a root the
        /// provider trusts (its key was made in a TPM), `none` otherwise.
        public var attestation: String?
        /// The authenticator model's AAGUID, as a lower-case UUID: Latchkey's TPM AAGUID
        /// (`56f86778-a17a-44f9-b56c-648ed551da5f`) with `tpm` attestation, all zeros when
        /// nothing vouches for a model (docs/PROTOCOL.md section 10).
        public var aaguid: String?

        public init(
            id: String, algorithm: String, signCount: UInt32, revoked: Bool, createdAt: String, lastUsedAt: String?,
            transports: [String]? = nil, backupEligible: Bool? = nil, backedUp: Bool? = nil, registeredFrom: String? = nil,
            attestation: String? = nil, aaguid: String? = nil
        ) {
            self.id = id
            self.algorithm = algorithm
            self.signCount = signCount
            self.revoked = revoked
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
            self.transports = transports
            self.backupEligible = backupEligible
            self.backedUp = backedUp
            self.registeredFrom = registeredFrom
            self.attestation = attestation
            self.aaguid = aaguid
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
