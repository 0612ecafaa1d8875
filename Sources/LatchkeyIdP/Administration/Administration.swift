import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

/// What the admin API does (docs/PROTOCOL.md, "Admin API"), each in one transaction.
struct Administration: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let credentials: CredentialRegistry
    let bindJobs: BindJobs
    let outbox: Outbox

    /// A new identity and a bind URL for its first credential.
    func createIdentity(
        username: String, email: String?, displayName: String?, requiredAttestation: AttestationRequirement? = nil, now: Date = ProviderClock.now
    ) async throws -> (Identity, URL) {
        try await context.database.transaction { transaction in
            let identity = try await self.identities.create(
                username: username, email: email, displayName: displayName, requiredAttestation: requiredAttestation, now: now, in: transaction
            )
            let url = try await self.bindJobs.create(identityID: identity.id, now: now, in: transaction)
            try await self.context.audit.record(
                AuditEntry(.identityCreated, actor: .admin, subject: identity.id, details: AuditEvent.Details(username: identity.username), now: now),
                in: transaction
            )
            return (identity, url)
        }
    }

    func identities(after cursor: String?, limit: Int) async throws -> [Identity] {
        try await context.database.transaction { try await self.identities.list(after: cursor, limit: limit, in: $0) }
    }

    /// The identity with this id, or called this name (as names are compared).
    func find(_ idOrName: String) async throws -> Identity? {
        guard idOrName.utf8.count <= 256 else { return nil }
        return try await context.database.transaction { transaction in
            if let identity = try await self.identities.identity(idOrName, in: transaction) { return identity }
            return try await self.identities.named(idOrName, in: transaction)
        }
    }

    /// Renames an identity (``IdentityDirectory/rename(_:to:in:)``); a POSIX account
    /// keeps its `uid` and home, and hosts see the new name.
    func renameIdentity(_ idOrName: String, to username: String, now: Date = ProviderClock.now) async throws -> (Identity, uid: Int64?) {
        try await context.database.transaction { transaction in
            guard let identity = try await self.identities.resolve(idOrName, in: transaction) else { throw ProviderError.notFound("no such identity") }
            let account = try await transaction.first("SELECT uid FROM posix_accounts WHERE identity_id = \(identity.id)")
            let uid = try account?.decode("uid", as: Int64.self)
            let renamed = try await self.identities.rename(identity, to: username, in: transaction)
            if uid != nil {
                try POSIXAccounts.checkName(renamed.username, reserved: self.identities.reserved)
                try await POSIXAccounts.checkNoGroup(named: renamed.username, in: transaction)
                try await HostDirectoryVersion.bump(in: transaction)
            }
            try await self.context.audit.record(AuditEntry(
                .identityRenamed, actor: .admin, subject: identity.id, details: AuditEvent.Details(username: renamed.username), now: now
            ), in: transaction)
            if let uid {
                try await self.context.audit.record(AuditEntry(
                    .posixChanged, actor: .admin, subject: identity.id,
                    details: AuditEvent.Details(username: renamed.username, change: AuditChange.renamed.rawValue, uid: uid), now: now
                ), in: transaction)
            }
            return (renamed, uid)
        }
    }

    /// Deletes an identity, its credentials and its tokens; false when there was none.
    func deleteIdentity(_ id: String, now: Date = ProviderClock.now) async throws -> Bool {
        try await context.database.transaction { transaction in
            guard try await self.identities.delete(id, in: transaction) else { return false }
            try await self.context.audit.record(AuditEntry(.identityDeleted, actor: .admin, subject: id, now: now), in: transaction)
            return true
        }
    }

    func credentials(of identityID: String) async throws -> [StoredCredential] {
        try await context.database.transaction { transaction in
            guard try await self.identities.identity(identityID, in: transaction) != nil else { throw ProviderError.notFound("no such identity") }
            return try await self.credentials.credentials(of: identityID, in: transaction)
        }
    }

    /// Revokes a credential and every token issued through it.
    func revokeCredential(_ id: Data, now: Date = ProviderClock.now) async throws {
        let found = try await context.database.transaction { transaction in
            guard let credential = try await self.credentials.credential(id, in: transaction),
                  try await self.credentials.revoke(id, now: now, in: transaction)
            else { return false }
            try await self.context.audit.record(AuditEntry(
                .credentialRevoked, actor: .admin, subject: credential.identityID,
                details: AuditEvent.Details(credential: Base64URL.encode(id)), now: now
            ), in: transaction)
            return true
        }
        guard found else { throw ProviderError.notFound("no such credential") }
    }

    /// A bind job for an existing identity: a new device, or a recovery.
    func createBindJob(identityID: String, kind: BindJob.Kind, lifetime: TimeInterval?, postBindingRedirectURI: String?, requireEmailCode: Bool) async throws -> URL {
        try await context.database.transaction { transaction in
            try await self.bindJobs.create(
                identityID: identityID, kind: kind, lifetime: lifetime, postBindingRedirectURI: postBindingRedirectURI,
                requireEmailCode: requireEmailCode, in: transaction
            )
        }
    }

    func outboxMessages() async throws -> [Outbox.Message] {
        try await context.database.transaction { try await self.outbox.messages(in: $0) }
    }
}
