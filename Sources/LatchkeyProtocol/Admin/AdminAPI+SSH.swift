import LatchkeyOAuth

extension AdminAPI {
    /// `PUT /admin/identities/:identity/ssh-principals`: the principals an identity's SSH
    /// certificates may name beyond its username (docs/PROTOCOL.md section 12); the answer
    /// is every principal it may have certified now, its username first.
    public struct SSHPrincipals: Codable, Hashable, Sendable {
        public var principals: [String]

        public init(principals: [String]) {
            self.principals = principals
        }
    }

    public static let setSSHPrincipals = Endpoint<SSHPrincipals, SSHPrincipals>(HTTPMethod.put, "admin/identities/:identity/ssh-principals")
    /// `PUT /admin/clients/:client/ssh-principals`: the principals a registered client's
    /// own certificates (client credentials tokens) may name; none until an admin grants
    /// some. The answer is the list now granted.
    public static let setClientSSHPrincipals = Endpoint<SSHPrincipals, SSHPrincipals>(HTTPMethod.put, "admin/clients/:client/ssh-principals")
}

extension AdminAPI {
    /// `POST /admin/ssh/host-certificates`: a host certificate for a host's key, so that
    /// clients trusting the CA (`@cert-authority` in `known_hosts`) need trust no host key
    /// on first use (docs/PROTOCOL.md section 12).
    public struct SSHHostCertificateRequest: Codable, Hashable, Sendable {
        /// The host's public key, a `.pub` line (`/etc/ssh/ssh_host_ed25519_key.pub`).
        public var publicKey: String
        /// The names clients reach the host by; each a principal of the certificate.
        public var hosts: [String]
        /// Seconds it should last; absent: 30 days. At most 365 days.
        public var lifetime: Int?

        public init(publicKey: String, hosts: [String], lifetime: Int? = nil) {
            self.publicKey = publicKey
            self.hosts = hosts
            self.lifetime = lifetime
        }
    }

    /// The host certificate, as a `-cert.pub` line for `HostCertificate`.
    public struct SSHHostCertificate: Codable, Hashable, Sendable {
        public var certificate: String
        public var serial: String
        public var validBefore: String

        public init(certificate: String, serial: String, validBefore: String) {
            self.certificate = certificate
            self.serial = serial
            self.validBefore = validBefore
        }
    }

    public static let createSSHHostCertificate = Endpoint<SSHHostCertificateRequest, SSHHostCertificate>(HTTPMethod.post, "admin/ssh/host-certificates")

    /// `POST /admin/ssh/ca/rotation`: without `activate`, begin a rotation (a next key,
    /// published beside the current one); with `activate: true`, finish it (the next key
    /// signs, the old one is retired). Docs/PROTOCOL.md section 12, "Rotating the CA".
    public struct SSHAuthorityRotation: Codable, Hashable, Sendable {
        public var activate: Bool?

        public init(activate: Bool? = nil) {
            self.activate = activate
        }
    }

    /// One of the SSH CA's keys.
    public struct SSHAuthorityKey: Codable, Hashable, Sendable {
        /// `current` (signs), `next` (waits to) or `previous` (retired).
        public var state: String
        /// The OpenSSH public key line.
        public var publicKey: String
        public var fingerprint: String
        /// When a previous key was retired (RFC 3339).
        public var retiredAt: String?
        /// Whether `GET /v1/ssh/ca` lists it now.
        public var published: Bool

        public init(state: String, publicKey: String, fingerprint: String, retiredAt: String?, published: Bool) {
            self.state = state
            self.publicKey = publicKey
            self.fingerprint = fingerprint
            self.retiredAt = retiredAt
            self.published = published
        }
    }

    /// The SSH CA's keys after a rotation step, the one that signs first.
    public struct SSHAuthorityKeys: Codable, Hashable, Sendable {
        public var keys: [SSHAuthorityKey]

        public init(keys: [SSHAuthorityKey]) {
            self.keys = keys
        }
    }

    public static let rotateSSHAuthority = Endpoint<SSHAuthorityRotation, SSHAuthorityKeys>(HTTPMethod.post, "admin/ssh/ca/rotation")
}
