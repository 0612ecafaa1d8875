#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A sign-in to this host that a person must approve from a device holding their passkey
/// (`pam_latchkey`; docs/guides/pam.md; docs/PROTOCOL.md
/// section 13): the PAM items the host reports to the provider, which shows them to the
/// approver (``DeviceApprovalRequest/hostLogin``).
public struct HostLoginRequest: Sendable, Hashable {
    /// `PAM_SERVICE`: `sshd`, `sudo`, `login`.
    public var service: String
    /// `PAM_USER`: the account on this host.
    public var user: String
    /// `PAM_RHOST`: where the connection comes from, when the service says.
    public var remoteHost: String?
    /// `PAM_TTY`.
    public var tty: String?

    public init(service: String, user: String, remoteHost: String? = nil, tty: String? = nil) {
        self.service = service
        self.user = user
        self.remoteHost = remoteHost
        self.tty = tty
    }
}

/// Who approved a ``HostLoginRequest`` (``Embedded/approveHostLogin(issuer:clientID:request:events:)``):
/// the identity the provider vouches for in a validated ID token, and its username from
/// `/userinfo`. Whether that identity may use the account is the caller's decision
/// (`latchkey pam helper` maps it by its configuration).
public struct HostLoginApproval: Sendable, Hashable {
    /// The ID token's `sub`.
    public let subject: String
    /// `preferred_username` at `/userinfo` for that subject.
    public let username: String
    /// When the person approved (`auth_time`).
    public let approvedAt: Date
}
