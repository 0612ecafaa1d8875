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
            ), \(statement: capSteps(identityID: grant.identityID, clientID: grant.clientID, now: now, onlyIf: nil))\(raw: event == nil ? "" : ", audited AS (")\(statement: event ?? "")\(raw: event == nil ? "" : ")")
            INSERT INTO tokens (hash, family_id, kind, expires_at) VALUES
                (\(try ProviderContext.hash(tokens.access)), \(grant.familyID), 'access', \(tokens.expiresAt)),
                (\(try ProviderContext.hash(tokens.refresh)), \(grant.familyID), 'refresh', \(tokens.refreshExpiresAt))
            """)
        return (tokens.access, tokens.refresh, tokens.expiresAt)
    }

    /// The longest authorization code the token endpoint reads: a random code is 43
    /// characters, a sealed one (``CodeTicket``) 127 for a UUID identity and the scope `openid`.
    static let maximumCodeLength = 256

    /// The code a sign-in's one-statement write issues on PostgreSQL
    /// (``complete(_:credentials:tickets:spentError:now:in:before:)``): sealed
    /// (``CodeTicket``), so that its redemption is one statement too, unless the code is
    /// bound to a DPoP key (its redemption spends a proof, in a transaction) or the ticket
    /// would be too long; a random token otherwise.
    func newCode(for signIn: VerifiedSignIn, tickets: TicketSealer) throws -> String {
        if signIn.dpopJKT == nil {
            let sealed = try tickets.seal(CodeTicket(identityID: signIn.credential.identityID, scope: signIn.scope))
            if sealed.utf8.count <= Self.maximumCodeLength { return sealed }
        }
        return try ProviderContext.randomToken()
    }

    /// What a redemption in one statement read back with the tokens it issued.
    struct Redeemed: Sendable {
        var nonce: String?
        var authTime: Date
        /// The resource the family was asked for (RFC 8707), if any.
        var resource: String?
        var tokens: (access: String, refresh: String?, expiresAt: Date)
    }

    /// A sealed bearer code's redemption on PostgreSQL (RFC 6749 §4.1.3, RFC 7636 §4.6)
    /// as one statement that commits by itself, with no read before it: one round trip
    /// where `BEGIN`, the read, the write and `COMMIT` were four (docs/PERFORMANCE.md,
    /// "PostgreSQL"). Every check the read made is a condition of the spend: the code
    /// unused and unexpired, its redirect URI and PKCE challenge (`codeChallenge`, the
    /// S256 of the request's verifier) the request's, its family live, unbound to a DPoP
    /// key, of this client as registered now, and of the identity and scope the code's
    /// ``CodeTicket`` names (which the `token.issued` event, made before the statement,
    /// records). What SERIALIZABLE guarded rests on the spend being a compare-and-set
    /// that PostgreSQL re-checks on a row a concurrent writer changed; every later step
    /// reads the row the spend returned, so a spend that finds nothing stops the rest.
    ///
    /// Nil when it found nothing, whatever the reason (a replay, a wrong verifier, a
    /// revoked family), and on SQLite, which has no data-modifying CTEs: the caller then
    /// redeems in a transaction, which refuses the code with its reason and, for a replay,
    /// revokes its family.
    func redeemInOneStatement(
        _ code: String, ticket: CodeTicket, client: RegisteredClient, redirectURI: String, codeChallenge: String, now: Date,
        in database: any ProviderDatabase
    ) async throws -> Redeemed? {
        guard database.dialect == .postgres else { return nil }
        let event = try audit.insert(AuditEntry(
            .tokenIssued, actor: .client(client.id), subject: ticket.identityID, client: client.id,
            details: AuditEvent.Details(grantType: GrantType.authorizationCode.rawValue, scope: ticket.scope), now: now
        ), after: "spent")
        // The refresh token's expiry is capped by the family's in the statement, which reads it.
        let tokens = try newTokens(familyExpiresAt: .distantFuture, now: now)
        let row = try await database.write("""
            WITH spent AS (
                UPDATE authorization_codes AS c SET used = 1
                FROM grant_families AS f
                WHERE c.code_hash = \(try ProviderContext.hash(code)) AND c.used = 0 AND c.expires_at > \(now)
                    AND c.redirect_uri = \(redirectURI) AND c.code_challenge = \(codeChallenge)
                    AND f.id = c.family_id AND f.revoked_at IS NULL AND f.dpop_jkt IS NULL
                    AND f.identity_id = \(ticket.identityID) AND f.scope = \(ticket.scope) AND f.client_id = \(client.id)
                    AND (f.client_registration IS NULL OR f.client_registration = CAST(\(client.registration) AS TEXT))
                RETURNING c.family_id, c.nonce, f.auth_time, f.expires_at AS family_expires_at, f.resource
            ), \(statement: capSteps(identityID: ticket.identityID, clientID: client.id, now: now, onlyIf: "spent"))\(raw: event == nil ? "" : ", audited AS (")\(statement: event ?? "")\(raw: event == nil ? "" : ")"), issued AS (
                INSERT INTO tokens (hash, family_id, kind, expires_at)
                SELECT issued.hash, spent.family_id, issued.kind,
                    CASE issued.kind WHEN 'refresh' THEN LEAST(issued.expires_at, spent.family_expires_at) ELSE issued.expires_at END
                FROM spent, (VALUES
                    (\(try ProviderContext.hash(tokens.access)), 'access', \(tokens.expiresAt)),
                    (\(try ProviderContext.hash(tokens.refresh)), 'refresh', \(tokens.refreshExpiresAt))
                ) AS issued (hash, kind, expires_at)
                RETURNING kind
            )
            SELECT spent.nonce, spent.auth_time, spent.resource, (SELECT count(*) FROM issued) AS issued FROM spent
            """).first
        guard let row, try row.decode("issued", as: Int64.self) == 2 else { return nil }
        return Redeemed(
            nonce: try row.decode("nonce"), authTime: try row.decode("auth_time"), resource: try row.decode("resource"),
            tokens: (tokens.access, tokens.refresh, tokens.expiresAt)
        )
    }

    /// The steps of a PostgreSQL statement that cap the identity's live grants for the
    /// client (``limitFamilies(identityID:clientID:now:in:)`` as CTEs: `excess`, `revoked`,
    /// `dropped`), run only when the step `onlyIf` returned a row, when one is named.
    private func capSteps(identityID: String, clientID: String, now: Date, onlyIf step: String?) -> SQLStatement {
        """
        excess AS (
            SELECT id FROM grant_families
            WHERE identity_id = \(identityID) AND client_id = \(clientID) AND revoked_at IS NULL AND expires_at > \(now)
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
