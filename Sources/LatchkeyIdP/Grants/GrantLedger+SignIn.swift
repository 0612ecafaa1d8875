import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn

extension GrantLedger {
    /// A sign-in whose assertion verified (WebAuthn L3 §7.2), ready to be written: the
    /// session it spends, the counter it records and the code request it answers.
    struct VerifiedSignIn: Sendable {
        var sessionID: String
        var sessionExpiresAt: Date
        var credential: StoredCredential
        var signCount: UInt32
        var clientID: String
        var clientRegistration: String?
        var scope: String
        /// The resource its tokens are for (RFC 8707), if any.
        var resource: String? = nil
        /// "" for a first-party code (draft-ietf-oauth-first-party-apps §6).
        var redirectURI: String
        var codeChallenge: String
        var nonce: String?
        var dpopJKT: String?
    }

    /// Writes a verified sign-in: the session is spent (once: a replayed assertion finds
    /// it spent and gets `spentError`), the credential's counter recorded only if it is
    /// still the one the assertion was checked against and the credential not revoked
    /// meanwhile (`invalid_assertion` otherwise), a grant family started and its
    /// authorization code issued. Returns the code. Nothing of it is written when the
    /// session was spent; when the counter moved, PostgreSQL keeps the session spent
    /// (SQLite rolls it back), which only means the client starts a new sign-in, as
    /// the refusal tells it to.
    ///
    /// The sign-in's `signin.succeeded` event is written with it, in the same unit.
    /// `tickets` seal the code the one-statement write issues (``newCode(for:tickets:)``).
    ///
    /// On PostgreSQL the four steps are one statement (``sqlStatement(_:code:familyID:event:now:)``)
    /// that commits by itself: one round trip where a transaction took six (docs/PERFORMANCE.md,
    /// "PostgreSQL"). SQLite has no data-modifying CTEs; there the steps are four
    /// statements of one transaction, which cost no round trip. `before` (a DPoP proof
    /// to spend in the same unit) needs a transaction on both engines.
    func complete(
        _ signIn: VerifiedSignIn, credentials: CredentialRegistry, tickets: TicketSealer, spentError: ProviderError, now: Date,
        in database: any ProviderDatabase,
        before: (@Sendable (any SQLTransaction) async throws -> Void)? = nil
    ) async throws -> String {
        let event = AuditEntry(
            .signInSucceeded, actor: .identity(signIn.credential.identityID), subject: signIn.credential.identityID, client: signIn.clientID,
            details: AuditEvent.Details(credential: Base64URL.encode(signIn.credential.record.id), scope: signIn.scope), now: now
        )
        guard database.dialect == .postgres, before == nil else {
            return try await database.transaction { transaction in
                guard try await SpentTickets.spend(signIn.sessionID, until: signIn.sessionExpiresAt, in: transaction) else { throw spentError }
                try await before?(transaction)
                try await credentials.recordUse(signIn.credential, signCount: signIn.signCount, now: now, in: transaction)
                let code = try await self.issueCode(
                    identityID: signIn.credential.identityID, credentialID: signIn.credential.record.id, clientID: signIn.clientID,
                    clientRegistration: signIn.clientRegistration, scope: signIn.scope, resource: signIn.resource,
                    redirectURI: signIn.redirectURI, codeChallenge: signIn.codeChallenge, nonce: signIn.nonce,
                    dpopJKT: signIn.dpopJKT, now: now, in: transaction
                )
                try await self.audit.record(event, in: transaction)
                return code
            }
        }
        let code = try newCode(for: signIn, tickets: tickets)
        let familyID = try ProviderContext.randomToken()
        let row = try await database.write(try sqlStatement(signIn, code: code, familyID: familyID, event: try audit.insert(event, after: "issued"), now: now)).first
        // The same refusals, in the same order, as the transaction's steps.
        guard let row, try row.decode("spent", as: Int64.self) == 1 else { throw spentError }
        guard try row.decode("issued", as: Int64.self) == 1 else { throw CredentialRegistry.usedMeanwhile }
        return code
    }

    /// The sign-in as one PostgreSQL statement of data-modifying CTEs, each step reading
    /// the rows the one before returned, so a step that finds nothing stops the rest. Every
    /// check holds at READ COMMITTED: the session's spend is a unique key (a concurrent
    /// spend waits, then does nothing), and the counter's update a compare-and-set that
    /// PostgreSQL re-checks on the row a concurrent writer changed.
    private func sqlStatement(_ signIn: VerifiedSignIn, code: String, familyID: String, event: SQLStatement?, now: Date) throws -> SQLStatement {
        """
        WITH spent AS (
            INSERT INTO spent_tickets (id_hash, expires_at) VALUES (\(try ProviderContext.hash(signIn.sessionID)), \(signIn.sessionExpiresAt))
            ON CONFLICT (id_hash) DO NOTHING RETURNING id_hash
        ), counted AS (
            UPDATE credentials SET sign_count = \(signIn.signCount), last_used_at = \(now)
            WHERE id = \(signIn.credential.record.id) AND sign_count = \(signIn.credential.record.signCount) AND revoked_at IS NULL
                AND EXISTS (SELECT 1 FROM spent)
            RETURNING id
        ), family AS (
            INSERT INTO grant_families (id, identity_id, credential_id, client_id, scope, auth_time, created_at, expires_at, dpop_jkt, client_registration, resource)
            SELECT \(familyID), \(signIn.credential.identityID), id, \(signIn.clientID), \(signIn.scope), \(now), \(now),
                \(now.addingTimeInterval(configuration.refreshTokenAbsoluteLifetime)), CAST(\(signIn.dpopJKT) AS TEXT),
                CAST(\(signIn.clientRegistration) AS TEXT), CAST(\(signIn.resource) AS TEXT)
            FROM counted
            RETURNING id
        ), issued AS (
            INSERT INTO authorization_codes (code_hash, family_id, redirect_uri, code_challenge, nonce, expires_at)
            SELECT \(try ProviderContext.hash(code)), id, \(signIn.redirectURI), \(signIn.codeChallenge), CAST(\(signIn.nonce) AS TEXT),
                \(now.addingTimeInterval(configuration.authorizationCodeLifetime))
            FROM family
            RETURNING code_hash
        )\(raw: event == nil ? "" : ", audited AS (")\(statement: event ?? "")\(raw: event == nil ? "" : " RETURNING id)")
        SELECT (SELECT count(*) FROM spent) AS spent, (SELECT count(*) FROM issued) AS issued
        """
    }
}
