import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Consent to third-party clients (clients known by a metadata document): after the
/// passkey, the person sees who is asking (the client's name, with the host its redirect
/// returns to), for which resource and scopes, and decides; the decision is remembered
/// per identity, client and resource, covers later requests within its scopes, and an
/// admin can withdraw it (docs/PROTOCOL.md, "Consent for third-party clients"). Every
/// decision, and every sign-in a remembered one covers, is an audit event written with it.
struct Consents: Sendable {
    let context: ProviderContext
    let grants: GrantLedger

    /// Whether `identityID` consented to `clientID` for `resource` and every scope of `scope`.
    func covers(identityID: String, clientID: String, resource: String?, scope: String, in transaction: any SQLTransaction) async throws -> Bool {
        guard let granted = try await transaction.first("""
            SELECT scope FROM consents WHERE identity_id = \(identityID) AND client_id = \(clientID) AND resource = \(resource ?? "")
            """)?.decode("scope", as: String.self)
        else { return false }
        let have = Set(granted.split(separator: " "))
        return scope.split(separator: " ").allSatisfy(have.contains)
    }

    /// The person's decision on `ticket`, for the sign-in session `session`: the code (or
    /// `access_denied`) in the client's redirect. The ticket is spent either way, so a
    /// decision replayed, or made twice, is refused; a credential revoked since the
    /// passkey was used issues nothing.
    func decide(session: String, decision: SignInExchange.ConsentDecision, now: Date = ProviderClock.now) async throws -> URL {
        guard decision.ticket.utf8.count <= 4096, let ticket = try context.tickets.open(ConsentTicket.self, from: decision.ticket), ticket.expiresAt > now,
              ConstantTime.isEqual(ticket.sessionBinding, try ProviderContext.hash(session))
        else {
            throw ProviderError.notFound("unknown, used or expired consent request; sign in again")
        }
        let details = AuditEvent.Details(credential: Base64URL.encode(ticket.credentialID), scope: ticket.scope, resource: ticket.resource)
        let code = try await context.database.transaction { transaction -> String? in
            guard try await SpentTickets.spend(ticket.id, until: ticket.expiresAt, in: transaction) else {
                throw ProviderError.notFound("unknown, used or expired consent request; sign in again")
            }
            guard decision.decision == .approve else {
                try await context.audit.record(AuditEntry(
                    .consentDenied, actor: .identity(ticket.identityID), subject: ticket.identityID, client: ticket.clientID, details: details, now: now
                ), in: transaction)
                return nil
            }
            guard try await transaction.first("SELECT id FROM credentials WHERE id = \(ticket.credentialID) AND revoked_at IS NULL") != nil else {
                throw ProviderError.badRequest(.credentialRevoked, "the credential was revoked; sign in again")
            }
            try await transaction.execute("""
                INSERT INTO consents (identity_id, client_id, resource, scope, granted_at)
                VALUES (\(ticket.identityID), \(ticket.clientID), \(ticket.resource ?? ""), \(ticket.scope), \(now))
                ON CONFLICT (identity_id, client_id, resource) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at
                """)
            try await context.audit.record(AuditEntry(
                .consentGranted, actor: .identity(ticket.identityID), subject: ticket.identityID, client: ticket.clientID, details: details, now: now
            ), in: transaction)
            let code = try await grants.issueCode(
                identityID: ticket.identityID, credentialID: ticket.credentialID, clientID: ticket.clientID, scope: ticket.scope,
                resource: ticket.resource, redirectURI: ticket.redirectURI, codeChallenge: ticket.codeChallenge, nonce: ticket.nonce,
                dpopJKT: ticket.dpopJKT, now: now, in: transaction
            )
            try await context.audit.record(AuditEntry(
                .signInSucceeded, actor: .identity(ticket.identityID), subject: ticket.identityID, client: ticket.clientID,
                details: AuditEvent.Details(credential: details.credential, scope: ticket.scope), now: now
            ), in: transaction)
            return code
        }
        let answer = code.map { AuthorizationResponseParameters(code: $0, state: ticket.state, issuer: context.issuer.absoluteString) }
            ?? AuthorizationResponseParameters(
                state: ticket.state, issuer: context.issuer.absoluteString, error: .accessDenied, errorDescription: "the user declined to allow this application"
            )
        guard let components = URLComponents(string: ticket.redirectURI), let redirect = FormEncoding.url(components, appending: answer.formItems) else {
            throw ProviderError.serverError("cannot build the redirect")
        }
        return redirect
    }

    /// Withdraws `identityID`'s consents to `clientID` (every resource) and ends the
    /// client's grants for the identity; false when there was none.
    func revoke(identityID: String, clientID: String, now: Date = ProviderClock.now) async throws -> Bool {
        try await context.database.transaction { transaction in
            let removed = try await transaction.query("""
                DELETE FROM consents WHERE identity_id = \(identityID) AND client_id = \(clientID) RETURNING resource
                """)
            guard !removed.isEmpty else { return false }
            try await GrantLedger.revokeFamilies(ofIdentity: identityID, client: clientID, now: now, in: transaction)
            try await context.audit.record(AuditEntry(.consentRevoked, actor: .admin, subject: identityID, client: clientID, now: now), in: transaction)
            return true
        }
    }
}
