import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyProtocol

/// The SSH CA's admin endpoints (docs/PROTOCOL.md section 12): the principals an identity
/// may have certified beyond its username, and host certificates.
extension AdminRoutes {
    @Sendable func setSSHPrincipals(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.SSHPrincipals {
        let identityID = try parameter("identity", context)
        let asked = try await HTTPSupport.decode(AdminAPI.SSHPrincipals.self, from: request, expected: "a JSON object with principals")
        let grants = provider.sshPrincipals
        let identities = provider.identities
        return try await provider.context.database.transaction { transaction in
            guard let identity = try await identities.identity(identityID, in: transaction) else { throw ProviderError.notFound("no such identity") }
            try await grants.set(asked.principals, for: identity.id, in: transaction)
            let granted = try await grants.principals(of: identity, in: transaction)
            try await provider.context.audit.record(AuditEntry(
                .sshPrincipalsGranted, actor: .admin, subject: identity.id, details: AuditEvent.Details(principals: granted)
            ), in: transaction)
            return AdminAPI.SSHPrincipals(principals: granted)
        }
    }

    /// A registered client's principals; a configured client (from the provider's
    /// configuration, with no registration) is 404: its id could be registered by no one.
    @Sendable func setClientSSHPrincipals(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.SSHPrincipals {
        let clientID = try parameter("client", context)
        let asked = try await HTTPSupport.decode(AdminAPI.SSHPrincipals.self, from: request, expected: "a JSON object with principals")
        let grants = provider.sshPrincipals
        return try await provider.context.database.transaction { transaction in
            guard try await transaction.first("SELECT id FROM clients WHERE id = \(clientID)") != nil else {
                throw ProviderError.notFound("no such registered client")
            }
            try await grants.set(asked.principals, forClient: clientID, in: transaction)
            let granted = try await grants.principals(ofClient: clientID, in: transaction)
            try await provider.context.audit.record(AuditEntry(
                .sshPrincipalsGranted, actor: .admin, client: clientID, details: AuditEvent.Details(principals: granted)
            ), in: transaction)
            return AdminAPI.SSHPrincipals(principals: granted)
        }
    }

    /// A rotation step of the SSH CA (``SSHAuthorityKeyRing``); every key after it.
    @Sendable func rotateSSHAuthority(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.SSHAuthorityKeys {
        let asked = try await HTTPSupport.decode(AdminAPI.SSHAuthorityRotation.self, from: request, expected: "a JSON object, {} or {\"activate\": true}")
        let ring = provider.context.sshKeys
        try await SSHAuthority(context: provider.context).ready()
        let now = ProviderClock.now
        if asked.activate == true {
            try await ring.activate(now: now, audit: provider.context.audit)
        } else {
            _ = try await ring.stage(now: now, audit: provider.context.audit)
        }
        let published = Set(try await ring.published(now: now).map(\.name))
        return AdminAPI.SSHAuthorityKeys(keys: try await ring.keys().map { key in
            AdminAPI.SSHAuthorityKey(
                state: key.state.rawValue, publicKey: key.publicKey.openSSHLine(comment: nil), fingerprint: key.publicKey.fingerprint,
                retiredAt: key.retiredAt.map { AuditEvent.formatTime($0) }, published: published.contains(key.name)
            )
        })
    }

    @Sendable func createSSHHostCertificate(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.SSHHostCertificate {
        let asked = try await HTTPSupport.decode(AdminAPI.SSHHostCertificateRequest.self, from: request, expected: "a JSON object with publicKey and hosts")
        return try await SSHHostCertificates(context: provider.context).issue(asked)
    }
}
