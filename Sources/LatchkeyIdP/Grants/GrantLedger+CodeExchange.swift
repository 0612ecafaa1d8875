import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

extension GrantLedger {
    /// The end of a code's redemption (RFC 6749 §4.1.3), after
    /// ``redeemCode(_:client:redirectURI:verifier:now:in:)`` accepted it, in the same
    /// transaction: the code is spent, the identity's grants for the client capped
    /// (``limitFamilies(identityID:clientID:now:in:)``), and an access and a refresh token
    /// issued in the code's family, and the grant's `token.issued` event written.
    ///
    /// On PostgreSQL the three steps are one statement of data-modifying CTEs, which
    /// takes the token's transaction from six round trips to four (docs/PERFORMANCE.md,
    /// "PostgreSQL"); on SQLite, which has none, three statements, which cost no round
    /// trip. The transaction is the one the code was read in, so the steps rest on that
    /// read as before.
    func issueTokens(
        for grant: CodeGrant, now: Date, in transaction: any SQLTransaction
    ) async throws -> (access: String, refresh: String?, expiresAt: Date) {
        let codeHash = grant.codeHash
        let event = try audit.insert(AuditEntry(
            .tokenIssued, actor: .client(grant.clientID), subject: grant.identityID, client: grant.clientID,
            details: AuditEvent.Details(grantType: GrantType.authorizationCode.rawValue, scope: grant.scope), now: now
        ))
        guard dialect == .postgres else {
            try await transaction.execute("UPDATE authorization_codes SET used = 1 WHERE code_hash = \(codeHash)")
            try await limitFamilies(identityID: grant.identityID, clientID: grant.clientID, now: now, in: transaction)
            let tokens = try await issueTokens(familyID: grant.familyID, familyExpiresAt: grant.familyExpiresAt, withRefresh: true, now: now, in: transaction)
            if let event { try await transaction.execute(event) }
            return tokens
        }
        let tokens = try newTokens(familyExpiresAt: grant.familyExpiresAt, now: now)
        // Every part of a statement sees the same snapshot, so `excess` counts the grants
        // as they were when the transaction read the code, as the separate statements did.
        try await transaction.execute("""
            WITH spent AS (
                UPDATE authorization_codes SET used = 1 WHERE code_hash = \(codeHash)
            ), \(statement: capSteps(grant, now: now, onlyIf: nil))\(raw: event == nil ? "" : ", audited AS (")\(statement: event ?? "")\(raw: event == nil ? "" : ")")
            INSERT INTO tokens (hash, family_id, kind, expires_at) VALUES
                (\(try ProviderContext.hash(tokens.access)), \(grant.familyID), 'access', \(tokens.expiresAt)),
                (\(try ProviderContext.hash(tokens.refresh)), \(grant.familyID), 'refresh', \(tokens.refreshExpiresAt))
            """)
        return (tokens.access, tokens.refresh, tokens.expiresAt)
    }

    /// A bearer code's redemption on PostgreSQL as one statement that commits by itself
    /// (docs/PERFORMANCE.md, "PostgreSQL"), after ``checkCode(_:client:redirectURI:verifier:now:in:)``
    /// passed on a read outside any transaction: two round trips where `BEGIN`, the read,
    /// the write and `COMMIT` were four. What the transaction's SERIALIZABLE guarded now
    /// rests on compare-and-set conditions PostgreSQL re-checks on a row a concurrent
    /// writer changed: the code is spent only while unused, unexpired and of a live family,
    /// and every later step reads the row that spend returned, so a spend that finds
    /// nothing stops the rest. Nil when it found nothing (the code was redeemed, or its
    /// family revoked, between the read and the write), and on SQLite, which has no
    /// data-modifying CTEs: the caller then redeems in a transaction, which refuses the
    /// code and, for a replay, revokes its family.
    func issueTokensInOneStatement(
        for grant: CodeGrant, now: Date, in database: any ProviderDatabase
    ) async throws -> (access: String, refresh: String?, expiresAt: Date)? {
        guard database.dialect == .postgres else { return nil }
        let event = try audit.insert(AuditEntry(
            .tokenIssued, actor: .client(grant.clientID), subject: grant.identityID, client: grant.clientID,
            details: AuditEvent.Details(grantType: GrantType.authorizationCode.rawValue, scope: grant.scope), now: now
        ), after: "spent")
        let tokens = try newTokens(familyExpiresAt: grant.familyExpiresAt, now: now)
        let rows = try await database.write("""
            WITH spent AS (
                UPDATE authorization_codes SET used = 1
                WHERE code_hash = \(grant.codeHash) AND used = 0 AND expires_at > \(now)
                    AND family_id IN (SELECT id FROM grant_families WHERE id = \(grant.familyID) AND revoked_at IS NULL)
                RETURNING family_id
            ), \(statement: capSteps(grant, now: now, onlyIf: "spent"))\(raw: event == nil ? "" : ", audited AS (")\(statement: event ?? "")\(raw: event == nil ? "" : ")")
            INSERT INTO tokens (hash, family_id, kind, expires_at)
            SELECT issued.hash, spent.family_id, issued.kind, issued.expires_at
            FROM spent, (VALUES
                (\(try ProviderContext.hash(tokens.access)), 'access', \(tokens.expiresAt)),
                (\(try ProviderContext.hash(tokens.refresh)), 'refresh', \(tokens.refreshExpiresAt))
            ) AS issued (hash, kind, expires_at)
            RETURNING kind
            """)
        return rows.count == 2 ? (tokens.access, tokens.refresh, tokens.expiresAt) : nil
    }

    /// The steps of a PostgreSQL statement that cap the identity's live grants for the
    /// client (``limitFamilies(identityID:clientID:now:in:)`` as CTEs: `excess`, `revoked`,
    /// `dropped`), run only when the step `onlyIf` returned a row, when one is named.
    private func capSteps(_ grant: CodeGrant, now: Date, onlyIf step: String?) -> SQLStatement {
        """
        excess AS (
            SELECT id FROM grant_families
            WHERE identity_id = \(grant.identityID) AND client_id = \(grant.clientID) AND revoked_at IS NULL AND expires_at > \(now)
                \(raw: step.map { "AND EXISTS (SELECT 1 FROM \($0))" } ?? "")
            ORDER BY created_at DESC LIMIT 100000 OFFSET \(raw: String(max(configuration.maximumGrantsPerClient, 0)))
        ), revoked AS (
            UPDATE grant_families SET revoked_at = \(now) WHERE id IN (SELECT id FROM excess) AND revoked_at IS NULL
        ), dropped AS (
            DELETE FROM tokens WHERE family_id IN (SELECT id FROM excess)
        )
        """
    }
}
