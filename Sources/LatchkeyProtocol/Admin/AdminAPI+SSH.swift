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
}
