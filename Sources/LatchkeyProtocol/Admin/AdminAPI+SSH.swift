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
}
