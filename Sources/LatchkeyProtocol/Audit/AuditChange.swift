/// The `change` detail of the fleet's audit events (`posix.changed`, `group.changed`,
/// `host.access.changed`; docs/PROTOCOL.md, "Audit log"): what an admin did. An open set,
/// as event types are: a reader keeps a value it does not know.
public struct AuditChange: RawRepresentable, Hashable, Sendable, Codable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `posix.changed`: an account given or changed.
    public static let set = AuditChange(rawValue: "set")
    /// `posix.changed`: an account taken away.
    public static let unset = AuditChange(rawValue: "unset")
    /// `posix.changed`: an identity with an account renamed.
    public static let renamed = AuditChange(rawValue: "renamed")
    /// `group.changed`.
    public static let created = AuditChange(rawValue: "created")
    public static let deleted = AuditChange(rawValue: "deleted")
    public static let memberAdded = AuditChange(rawValue: "member.added")
    public static let memberRemoved = AuditChange(rawValue: "member.removed")
    /// `host.access.changed`: a host's labels set; a group's login on a label granted or revoked.
    public static let labelsSet = AuditChange(rawValue: "labels.set")
    public static let granted = AuditChange(rawValue: "granted")
    public static let revoked = AuditChange(rawValue: "revoked")
}
