import LatchkeyOAuth

extension AdminAPI {
    /// `PUT /admin/clients/:client/host-labels`: the labels of a host (a registered
    /// client), which say the groups whose members it knows (docs/PROTOCOL.md section 14).
    /// The answer is the labels now set; none: the host sees no one.
    public struct HostLabels: Codable, Hashable, Sendable {
        public var labels: [String]

        public init(labels: [String]) {
            self.labels = labels
        }
    }

    public static let setHostLabels = Endpoint<HostLabels, HostLabels>(HTTPMethod.put, "admin/clients/:client/host-labels")

    /// `PUT /admin/host-access/:label/:group`: the group's members may log in to every host
    /// with the label, and with `sudo`, use sudo there.
    public struct HostAccessGrant: Codable, Hashable, Sendable {
        public var sudo: Bool?

        public init(sudo: Bool? = nil) {
            self.sudo = sudo
        }
    }

    public struct HostAccess: Codable, Hashable, Sendable {
        public var label: String
        public var group: String
        public var sudo: Bool

        public init(label: String, group: String, sudo: Bool) {
            self.label = label
            self.group = group
            self.sudo = sudo
        }
    }

    public static let grantHostAccess = Endpoint<HostAccessGrant, HostAccess>(HTTPMethod.put, "admin/host-access/:label/:group")
    public static let revokeHostAccess = Endpoint<Empty, Deletion>(HTTPMethod.delete, "admin/host-access/:label/:group")
}
