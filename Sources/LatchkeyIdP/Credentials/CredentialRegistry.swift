import Foundation
import LatchkeyWebAuthn
import LatchkeyProtocol

/// Credentials and their signature counters (WebAuthn §6.1.1, §7.2 step 21).
struct CredentialRegistry: Sendable {
    let grants: GrantLedger

    func credential(_ id: Data, in transaction: any SQLTransaction) async throws -> StoredCredential? {
        try await transaction.first("SELECT \(raw: StoredCredential.columns) FROM credentials WHERE id = \(id)").map(StoredCredential.init(row:))
    }

    func credentials(of identityID: String, in transaction: any SQLTransaction) async throws -> [StoredCredential] {
        try await transaction.query("SELECT \(raw: StoredCredential.columns) FROM credentials WHERE identity_id = \(identityID) ORDER BY created_at")
            .map(StoredCredential.init(row:))
    }

    /// IDs of the live credentials of the identity whose name compares as `key`
    /// (``Username/key(_:)`` of a name as typed), most recently used first and at most
    /// ``LoginHintCredentials/count``, in one statement: the real part of a sign-in's
    /// `allowCredentials`.
    func liveIDs(ofUsernameKey key: String, in transaction: any SQLTransaction) async throws -> [Data] {
        try await transaction.query("""
            SELECT c.id FROM credentials c JOIN identities i ON i.id = c.identity_id
            WHERE i.username_key = \(key) AND c.revoked_at IS NULL
            ORDER BY COALESCE(c.last_used_at, c.created_at) DESC, c.created_at DESC
            LIMIT \(Int64(LoginHintCredentials.count))
            """).map { try $0.decode("id", as: Data.self) }
    }

    /// The credential `id` that is to sign for the session `session`, checked in one
    /// statement with the session (``SpentTickets``): a replayed session is refused with
    /// `spentError` before any signature work, then an unknown or revoked credential.
    func signer(_ id: Data, session: String, spentError: ProviderError, in transaction: any SQLTransaction) async throws -> StoredCredential {
        let spentHash = try ProviderContext.hash(session)
        let row = try await transaction.first("""
            SELECT \(raw: StoredCredential.columns), EXISTS (SELECT 1 FROM spent_tickets WHERE id_hash = \(spentHash)) AS session_spent
            FROM (SELECT 1 AS probe) AS probe LEFT JOIN credentials ON credentials.id = \(id)
            """)
        guard let row, try !row.decode("session_spent", as: Bool.self) else { throw spentError }
        guard try row.decode("id", as: Data?.self) != nil else {
            throw ProviderError.badRequest(.invalidCredential, "unknown credential")
        }
        return try Self.live(try StoredCredential(row: row))
    }

    /// Stores a newly verified credential; a credential ID already registered (to anyone)
    /// is refused (WebAuthn §7.1 step 26).
    func register(
        _ record: RelyingParty.RegisteredCredential, identityID: String, from origin: StoredCredential.Origin = .client, now: Date = ProviderClock.now,
        in transaction: any SQLTransaction
    ) async throws {
        if try await transaction.first("SELECT 1 FROM credentials WHERE id = \(record.id)") != nil {
            throw ProviderError.badRequest(.invalidRegistration, "credential already registered")
        }
        do {
            try await transaction.execute("""
                INSERT INTO credentials (id, identity_id, public_key, sign_count, backup_eligible, backup_state, user_verified,
                    attestation_format, aaguid, transports, created_at, registered_from)
                VALUES (\(record.id), \(identityID), \(record.publicKey.encoded), \(record.signCount), \(record.backupEligible),
                    \(record.backupState), \(record.userVerified), \(record.attestationFormat), \(record.aaguid),
                    \(record.transports.joined(separator: ",")), \(now), \(origin.rawValue))
                """)
        } catch let error as StoreError where error.code == .duplicate {
            throw ProviderError.badRequest(.invalidRegistration, "credential already registered", underlying: error)
        }
    }

    /// A credential that may sign, read for verifying an assertion outside any
    /// transaction (signature checks do not hold the store).
    func signer(_ id: Data, in transaction: any SQLTransaction) async throws -> StoredCredential {
        guard let credential = try await credential(id, in: transaction) else {
            throw ProviderError.badRequest(.invalidCredential, "unknown credential")
        }
        return try Self.live(credential)
    }

    private static func live(_ credential: StoredCredential) throws -> StoredCredential {
        guard !credential.revoked else {
            throw ProviderError.badRequest(.credentialRevoked, "this credential was revoked; bind a new one")
        }
        return credential
    }

    /// Records a verified assertion's counter, only if the credential is still as it was
    /// read (same counter, not revoked): a second assertion verified against the same
    /// counter at the same time, on this instance or another, is refused as a replay.
    func recordUse(_ credential: StoredCredential, signCount: UInt32, now: Date = ProviderClock.now, in transaction: any SQLTransaction) async throws {
        let updated = try await transaction.first("""
            UPDATE credentials SET sign_count = \(signCount), last_used_at = \(now)
            WHERE id = \(credential.record.id) AND sign_count = \(credential.record.signCount) AND revoked_at IS NULL
            RETURNING id
            """)
        guard updated != nil else { throw Self.usedMeanwhile }
    }

    /// A counter that moved, or a revocation, between an assertion's check and its write.
    static let usedMeanwhile = ProviderError.badRequest(.invalidAssertion, "the credential was used or revoked meanwhile; sign in again")

    /// Revokes a credential and every token issued through it, at once.
    func revoke(_ id: Data, now: Date = ProviderClock.now, in transaction: any SQLTransaction) async throws -> Bool {
        guard try await transaction.first("UPDATE credentials SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING id") != nil else {
            return try await transaction.first("SELECT 1 FROM credentials WHERE id = \(id)") != nil
        }
        try await grants.revokeFamilies(ofCredential: id, now: now, in: transaction)
        return true
    }

    /// Revokes every credential of an identity but `keeping` (account recovery).
    func revokeAll(of identityID: String, keeping: Data, now: Date = ProviderClock.now, in transaction: any SQLTransaction) async throws {
        let revoked = try await transaction.query("""
            UPDATE credentials SET revoked_at = \(now) WHERE identity_id = \(identityID) AND id <> \(keeping) AND revoked_at IS NULL RETURNING id
            """)
        for row in revoked {
            try await grants.revokeFamilies(ofCredential: try row.decode("id"), now: now, in: transaction)
        }
    }
}

/// Verifies an assertion (WebAuthn §7.2) against a credential read from the store; the
/// caller records the new counter with ``CredentialRegistry/recordUse(_:signCount:now:in:)``.
extension ProviderContext {
    func verify(_ response: AuthenticationResponseJSON, by credential: StoredCredential, challenge: Data, allowed: [Data]) throws -> UInt32 {
        // WebAuthn L3 §7.2 step 6: a user handle, when given, must be the credential's
        // owner's (the bind options' `user.id`, the identity id); when no credentials were
        // listed, the user was not identified beforehand, so the handle is required.
        let owner = Data(credential.identityID.utf8)
        if let handle = response.response.userHandle?.data {
            guard handle == owner else {
                throw ProviderError.badRequest(.invalidAssertion, "the assertion's userHandle names another user than the credential's")
            }
        } else if allowed.isEmpty {
            throw ProviderError.badRequest(.invalidAssertion, "userHandle is required when the options listed no credentials")
        }
        do {
            return try relyingParty.verifyAuthentication(response, challenge: challenge, credential: credential.record, allowedCredentialIDs: allowed).signCount
        } catch let error as WebAuthnError {
            throw ProviderError.badRequest(.invalidAssertion, error.reason, underlying: error)
        }
    }
}
