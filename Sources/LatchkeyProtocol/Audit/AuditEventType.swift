/// The type of an ``AuditEvent``: what the provider decided (docs/PROTOCOL.md, "Audit
/// log"). Open-ended, as event types are added with features (`ssh.*`, `pam.*`); a reader
/// that meets an unknown type shows it by name.
public struct AuditEventType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The admin API made an identity.
    public static let identityCreated = AuditEventType(rawValue: "identity.created")
    /// An identity was deleted, its credentials and grants with it.
    public static let identityDeleted = AuditEventType(rawValue: "identity.deleted")
    /// A credential was registered to an identity (a bind link, sign-up, recovery, an
    /// import).
    public static let credentialRegistered = AuditEventType(rawValue: "credential.registered")
    /// A credential was deleted by its holder.
    public static let credentialDeleted = AuditEventType(rawValue: "credential.deleted")
    /// An admin revoked a credential.
    public static let credentialRevoked = AuditEventType(rawValue: "credential.revoked")
    /// A sign-in's assertion verified and its authorization code was issued.
    public static let signInSucceeded = AuditEventType(rawValue: "signin.succeeded")
    /// A sign-in's assertion was refused.
    public static let signInFailed = AuditEventType(rawValue: "signin.failed")
    /// The token endpoint issued tokens (details: the grant type).
    public static let tokenIssued = AuditEventType(rawValue: "token.issued")
    /// A refresh token was exchanged for new tokens.
    public static let tokenRefreshed = AuditEventType(rawValue: "token.refreshed")
    /// A token was revoked (RFC 7009), and its grant family with it.
    public static let tokenRevoked = AuditEventType(rawValue: "token.revoked")
    /// A device's sign-in (RFC 8628) was approved with a passkey.
    public static let deviceApproved = AuditEventType(rawValue: "device.approved")
    /// A device's sign-in was denied by the person asked.
    public static let deviceDenied = AuditEventType(rawValue: "device.denied")
    /// The admin API registered a client.
    public static let clientCreated = AuditEventType(rawValue: "client.created")
    /// The admin API deleted a client, ending its grants.
    public static let clientDeleted = AuditEventType(rawValue: "client.deleted")
    /// An exporter approved a device transfer.
    public static let transferApproved = AuditEventType(rawValue: "transfer.approved")
    /// Self-registration finished with a first credential.
    public static let signUpCompleted = AuditEventType(rawValue: "signup.completed")
    /// Recovery by e-mail finished with a new credential.
    public static let recoveryCompleted = AuditEventType(rawValue: "recovery.completed")
    /// The attestation CA certified a TPM key.
    public static let attestationCertified = AuditEventType(rawValue: "attestation.certified")
    /// A wrong admin token was presented: one event per address and window, however
    /// many tries the window saw.
    public static let adminTokenRefused = AuditEventType(rawValue: "admin.token.refused")
    /// An address reached a rate limit: one event per address, limit and window, the
    /// requests refused in it are not stored one by one.
    public static let rateLimitEngaged = AuditEventType(rawValue: "ratelimit.engaged")
    /// Retention removed the events up to a checkpoint (details: `through`).
    public static let auditPruned = AuditEventType(rawValue: "audit.pruned")
    /// The SSH CA signed a certificate (details: `serial`, `fingerprint`, `principals`,
    /// `validAfter`, `validBefore`, `credential`).
    public static let sshCertificateIssued = AuditEventType(rawValue: "ssh.certificate.issued")
    /// A person approved, or denied, a sign-in to a host through `pam_latchkey` (section
    /// 13; details: `service`, `username` (the host account), `remoteHost`; the host is
    /// the event's client).
    public static let pamApproved = AuditEventType(rawValue: "pam.approved")
    public static let pamDenied = AuditEventType(rawValue: "pam.denied")
    /// An admin set the SSH principals an identity or a client may have certified
    /// (details: `principals`, the full list after the change).
    public static let sshPrincipalsGranted = AuditEventType(rawValue: "ssh.principals.granted")
    /// An admin began a rotation of the SSH CA: a next key is published beside the
    /// current one (details: `fingerprint` of the next key).
    public static let sshAuthorityStaged = AuditEventType(rawValue: "ssh.ca.staged")
    /// An admin finished it: the next key signs from now on, the old one is retired
    /// (details: `fingerprint` of the key that now signs).
    public static let sshAuthorityActivated = AuditEventType(rawValue: "ssh.ca.activated")

    /// An admin renamed an identity (details: `username`, the new name).
    public static let identityRenamed = AuditEventType(rawValue: "identity.renamed")
    /// An admin gave an identity a POSIX account, changed it, took it away, or renamed an
    /// identity that has one (details: `change`, `uid`, `username`).
    public static let posixChanged = AuditEventType(rawValue: "posix.changed")
    /// An admin created or deleted a POSIX group, or changed its members (details:
    /// `change`, `group`, `gid`; the member is the subject).
    public static let groupChanged = AuditEventType(rawValue: "group.changed")
    /// An admin set a host's labels (the host is the client), or granted or revoked a
    /// group's login (and `sudo`) on a label's hosts (details: `change`, `labels`,
    /// `group`, `gid`, `sudo`).
    public static let hostAccessChanged = AuditEventType(rawValue: "host.access.changed")

    /// A person consented to a third-party client (a client ID metadata document) after
    /// signing in (details: `scope`, `resource`, `credential`); `consent.remembered`: a
    /// sign-in that an earlier consent covered; `consent.denied`: the person declined;
    /// `consent.revoked`: an admin withdrew a consent, and the client's grants for the
    /// identity with it.
    public static let consentGranted = AuditEventType(rawValue: "consent.granted")
    public static let consentRemembered = AuditEventType(rawValue: "consent.remembered")
    public static let consentDenied = AuditEventType(rawValue: "consent.denied")
    public static let consentRevoked = AuditEventType(rawValue: "consent.revoked")

    /// Every type this version of the provider writes.
    public static let known: Set<AuditEventType> = [
        .identityCreated, .identityDeleted, .credentialRegistered, .credentialDeleted, .credentialRevoked, .signInSucceeded, .signInFailed,
        .tokenIssued, .tokenRefreshed, .tokenRevoked, .deviceApproved, .deviceDenied, .clientCreated, .clientDeleted, .transferApproved,
        .signUpCompleted, .recoveryCompleted, .attestationCertified, .adminTokenRefused, .rateLimitEngaged, .auditPruned,
        .sshCertificateIssued, .sshPrincipalsGranted, .pamApproved, .pamDenied, .sshAuthorityStaged, .sshAuthorityActivated,
        .identityRenamed, .posixChanged, .groupChanged, .hostAccessChanged, .consentGranted, .consentRemembered, .consentDenied,
        .consentRevoked,
    ]
}
