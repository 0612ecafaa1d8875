#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A device's sign-in waiting for approval, as the provider describes it to the person
/// about to approve (``Embedded/approveDevice(issuer:userCode:decision:credential:confirm:)``).
/// Show all of it: a person may be approving a code someone else started (device-code
/// phishing, docs/SECURITY.md), and the client, the scopes and where and when the request
/// came from are how they can tell. Every text is the provider's, to display as untrusted.
public struct DeviceApprovalRequest: Sendable, Hashable {
    public let userCode: String
    public let clientID: String
    public let clientName: String
    public let scopes: [String]
    public let requestedAt: Date?
    /// The network address the device asked from, as the provider saw it.
    public let requestedFrom: String
    public let expiresAt: Date?
    /// For a sign-in to a computer through `pam_latchkey` (docs/PROTOCOL.md section 13):
    /// the account, the service and where the connection comes from. The computer is the
    /// client (``clientName``): only an enrolled host can ask this.
    public let hostLogin: HostLogin?

    /// What a host asks a person to approve.
    public struct HostLogin: Sendable, Hashable {
        /// The account on the host (`root`, `ada`).
        public let user: String
        /// The PAM service (`sshd`, `sudo`, `login`).
        public let service: String
        /// The remote address the service named, if any (sshd does).
        public let remoteHost: String?
    }
}

/// What a person decided about a device's sign-in.
public enum DeviceDecision: String, Sendable, Hashable {
    case approve, deny
}
