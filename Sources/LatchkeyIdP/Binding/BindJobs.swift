import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn
import LatchkeyProtocol
import LatchkeyOAuth

/// Binding a credential from a bind URL (docs/PROTOCOL.md section 2), with the policy
/// steps a job may ask for first (section 4): accept the terms, then a code e-mailed to
/// the identity. Registration is verified outside any transaction; the job is then spent
/// only if it is still as it was read (same challenge, unused).
struct BindJobs: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let credentials: CredentialRegistry
    let outbox: Outbox

    /// What a bind URL answers: the creation options, or first a step to complete.
    enum Answer: Sendable {
        case options(PublicKeyCredentialCreationOptionsJSON)
        case verifyCode(message: String)
        case acceptTerms(message: String)
    }

    private var configuration: ProviderConfiguration { context.configuration }

    /// A bind job and its URL, `<issuer>/v1/bind/<job>?token=<token>`.
    func create(
        identityID: String, kind: BindJob.Kind = .bind, lifetime: TimeInterval? = nil, postBindingRedirectURI: String? = nil,
        requireEmailCode: Bool = false, now: Date = ProviderClock.now, in transaction: any SQLTransaction
    ) async throws -> URL {
        guard try await identities.identity(identityID, in: transaction) != nil else { throw ProviderError.notFound("no such identity") }
        if let postBindingRedirectURI {
            guard postBindingRedirectURI.utf8.count <= 2048, let url = URL(string: postBindingRedirectURI), url.scheme != nil else {
                throw ProviderError.badRequest(.invalidRequest, "postBindingRedirectURI must be an absolute URL of at most 2048 bytes")
            }
        }
        let token = try ProviderContext.randomToken()
        let id = try ProviderContext.randomToken()
        let lifetime = min(max(lifetime ?? configuration.bindJobLifetime, 1), 30 * 86400)
        try await transaction.execute("""
            INSERT INTO bind_jobs (id, token_hash, identity_id, kind, expires_at, post_binding_redirect_uri, require_email_code)
            VALUES (\(id), \(try ProviderContext.hash(token)), \(identityID), \(kind.rawValue), \(now.addingTimeInterval(lifetime)),
                \(postBindingRedirectURI), \(requireEmailCode || configuration.requireEmailCodeForBinding))
            """)
        guard let url = URL(string: context.url("v1/bind/\(id)", token: token)) else {
            throw ProviderError.serverError("cannot build the bind URL")
        }
        return url
    }

    private func liveJob(_ id: String, token: String, now: Date, in transaction: any SQLTransaction) async throws -> BindJob {
        guard let job = try await transaction.first("SELECT \(raw: BindJob.columns) FROM bind_jobs WHERE id = \(id)").map(BindJob.init(row:)),
              ConstantTime.isEqual(job.tokenHash, try ProviderContext.hash(token))
        else {
            throw ProviderError.notFound("unknown bind job or wrong token")
        }
        guard !job.used else { throw ProviderError.badRequest(.invalidGrant, "this bind job was already used") }
        guard job.expiresAt > now else { throw ProviderError.badRequest(.invalidGrant, "this bind job has expired") }
        return job
    }

    /// Whose job this is, for the registration page, changing nothing (no challenge, no
    /// mail): the same checks as every other use of the job.
    func describe(job id: String, token: String, now: Date = ProviderClock.now) async throws -> (job: BindJob, identity: Identity) {
        try await context.database.transaction { transaction in
            let job = try await self.liveJob(id, token: token, now: now, in: transaction)
            guard let identity = try await self.identities.identity(job.identityID, in: transaction) else { throw ProviderError.notFound("identity gone") }
            return (job, identity)
        }
    }

    func options(job id: String, token: String, now: Date = ProviderClock.now) async throws -> Answer {
        try await context.database.transaction { transaction in
            try await self.answer(try await self.liveJob(id, token: token, now: now, in: transaction), now: now, in: transaction)
        }
    }

    /// The job's next step, or its creation options with a fresh challenge.
    private func answer(_ job: BindJob, now: Date, in transaction: any SQLTransaction) async throws -> Answer {
        guard let identity = try await identities.identity(job.identityID, in: transaction) else { throw ProviderError.notFound("identity gone") }
        if let terms = configuration.termsOfService, !job.termsAccepted {
            return .acceptTerms(message: terms)
        }
        if job.requireEmailCode, !job.codeVerified {
            // One code per job; fetching the job again does not mint a new one.
            if job.emailCodeHash == nil {
                let (code, hash) = try ProviderContext.newCode()
                try await transaction.execute("UPDATE bind_jobs SET email_code_hash = \(hash) WHERE id = \(job.id)")
                try await outbox.append(
                    to: identity.email ?? identity.username, subject: "Your Latchkey verification code",
                    body: "Enter \(code) to add a passkey to \(identity.username).", code: code, now: now, in: transaction
                )
            }
            return .verifyCode(message: "Enter the code sent to \(ProviderContext.masked(identity.email ?? identity.username))")
        }
        let challenge = try SecureRandom.bytes(count: 32)
        try await transaction.execute("UPDATE bind_jobs SET challenge = \(challenge) WHERE id = \(job.id)")
        // A recovery replaces the old credentials, so a device that still holds one may
        // recover too: they are not excluded.
        let existing = job.kind == .recovery ? [] : try await credentials.credentials(of: identity.id, in: transaction).map(\.record.id)
        return .options(context.creationOptions(for: identity, challenge: challenge, excluding: existing))
    }

    /// Checks an e-mailed code in constant time; too many wrong codes kill the job. A
    /// wrong code is counted even though the answer is an error.
    func verifyCode(job id: String, token: String, code: String, now: Date = ProviderClock.now) async throws -> Answer {
        let maximum = configuration.maximumCodeAttempts
        return try await context.database.transaction { transaction -> Verdict<Answer> in
            let job = try await self.liveJob(id, token: token, now: now, in: transaction)
            guard let expected = job.emailCodeHash else { return .accepted(try await self.answer(job, now: now, in: transaction)) }
            guard job.failedCodeAttempts < maximum else {
                return .refused(.badRequest(.invalidGrant, "too many wrong codes; ask for a new bind link"))
            }
            guard ConstantTime.isEqual(try ProviderContext.hash(code.trimmingCharacters(in: .whitespaces)), expected) else {
                try await transaction.execute("UPDATE bind_jobs SET failed_code_attempts = failed_code_attempts + 1 WHERE id = \(id)")
                let left = maximum - job.failedCodeAttempts - 1
                return .refused(.badRequest(.invalidCode, left > 0 ? "wrong code, \(left) attempts left" : "wrong code; this bind link is no longer usable"))
            }
            try await transaction.execute("UPDATE bind_jobs SET code_verified = 1 WHERE id = \(id)")
            var verified = job
            verified.codeVerified = true
            return .accepted(try await self.answer(verified, now: now, in: transaction))
        }.get()
    }

    /// Records that the user accepted the terms of service.
    func acceptTerms(job id: String, token: String, accepted: Bool, now: Date = ProviderClock.now) async throws -> Answer {
        guard accepted else { throw ProviderError.badRequest(.accessDenied, "the terms were not accepted") }
        return try await context.database.transaction { transaction in
            var job = try await self.liveJob(id, token: token, now: now, in: transaction)
            try await transaction.execute("UPDATE bind_jobs SET terms_accepted = 1 WHERE id = \(id)")
            job.termsAccepted = true
            return try await self.answer(job, now: now, in: transaction)
        }
    }

    /// Verifies the registration (WebAuthn §7.1) and binds the credential; a recovery
    /// job revokes the identity's other credentials and their tokens.
    func complete(
        job id: String, token: String, response: RegistrationResponseJSON, from origin: StoredCredential.Origin = .client, now: Date = ProviderClock.now
    ) async throws -> (StoredCredential, String?) {
        let (job, identity) = try await context.database.transaction { transaction in
            let job = try await self.liveJob(id, token: token, now: now, in: transaction)
            return (job, try await self.identities.identity(job.identityID, in: transaction))
        }
        guard configuration.termsOfService == nil || job.termsAccepted else {
            throw ProviderError.badRequest(.invalidRequest, "accept the terms first")
        }
        guard !job.requireEmailCode || job.codeVerified else {
            throw ProviderError.badRequest(.invalidRequest, "verify the e-mailed code first")
        }
        guard let challenge = job.challenge else {
            throw ProviderError.badRequest(.invalidRequest, "fetch the bind job before submitting")
        }
        let record = try await context.verifyRegistration(response, challenge: challenge, for: identity)
        var credential = StoredCredential(identityID: job.identityID, record: record, createdAt: now)
        credential.registeredFrom = origin
        try await context.database.transaction { transaction in
            // Spent only if still unused and still holding the challenge that was signed.
            guard try await transaction.first("""
                UPDATE bind_jobs SET used = 1 WHERE id = \(id) AND used = 0 AND challenge = \(challenge) AND expires_at > \(now) RETURNING id
                """) != nil else {
                throw ProviderError.badRequest(.invalidGrant, "this bind job was already used or has changed")
            }
            try await self.credentials.register(record, identityID: job.identityID, from: origin, now: now, in: transaction)
            if job.kind == .recovery {
                try await self.credentials.revokeAll(of: job.identityID, keeping: record.id, now: now, in: transaction)
            }
            // A recovery's new credential is its completion; any other bind registers one.
            try await self.context.audit.record(AuditEntry(
                job.kind == .recovery ? .recoveryCompleted : .credentialRegistered, actor: .identity(job.identityID), subject: job.identityID,
                details: AuditEvent.Details(credential: Base64URL.encode(record.id)), now: now
            ), in: transaction)
        }
        return (credential, job.postBindingRedirectURI)
    }
}

extension ProviderContext {
    /// Creation options for a new credential of `identity` (WebAuthn §5.4), excluding the
    /// credentials listed. When attestation is demanded of it, conveyance is `direct`
    /// (§5.4.7), so an authenticator that can attest does.
    func creationOptions(for identity: Identity, challenge: Data, excluding existing: [Data]) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: relyingParty.id, name: configuration.displayName),
            user: .init(id: Data(identity.id.utf8), name: identity.username, displayName: identity.displayName),
            challenge: challenge,
            pubKeyCredParams: [.init(alg: -7), .init(alg: -8)],
            excludeCredentials: existing.isEmpty ? nil : existing.map { .init(id: $0) },
            authenticatorSelection: .init(residentKey: "preferred", userVerification: "preferred"),
            attestation: (requiredAttestation(for: identity) == nil ? AttestationConveyancePreference.none : .direct).rawValue
        )
    }
}
