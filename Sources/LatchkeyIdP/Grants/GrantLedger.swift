import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Grant families, authorization codes and tokens (RFC 9700 §2.2.2 and §4.14; RFC 6749
/// §4.1.2 and §10.5; docs/ARCHITECTURE.md, "The token lifecycle").
///
/// Every authorization code starts a family; the code and every token issued from it,
/// or refreshed from those, belong to it. Revoking the family (a replayed code, a
/// reused refresh token, a revoked credential, a recovered account, a deleted identity,
/// a revoked refresh token) stops them all at once: every access token is checked
/// against the store, family included, on every use. Only SHA-256 hashes of codes and
/// tokens are stored.
struct GrantLedger: Sendable {
    let configuration: ProviderConfiguration
    /// The store's engine, for the steps written differently on each
    /// (``issueTokens(for:now:in:)``).
    let dialect: SQLDialect
    /// Where a sign-in's and a grant's events go, with the decision.
    let audit: AuditLog

    enum TokenKind: String {
        case access
        case refresh
    }

    /// What an authorization code was issued for.
    struct CodeGrant: Sendable {
        /// The code's SHA-256, as it is stored: hashed once, when it is read.
        var codeHash: Data
        var familyID: String
        var identityID: String
        var clientID: String
        var scope: String
        var authTime: Date
        var redirectURI: String
        var codeChallenge: String
        var nonce: String?
        /// The DPoP key the family is bound to (RFC 9449 §10 `dpop_jkt`, or the first proof).
        var dpopJKT: String?
        /// When the family ends, whatever its refresh tokens say.
        var familyExpiresAt: Date
        /// The resource its tokens are for (RFC 8707), if any.
        var resource: String?
    }

    /// Whether a family stamped `stamp` belongs to `client` as registered now: a family
    /// from before registrations were stamped, or from a device approval, has none.
    static func sameRegistration(_ stamp: String?, _ client: RegisteredClient) -> Bool {
        guard let stamp else { return true }
        return stamp == client.registration
    }

    /// What a live token stands for.
    struct TokenGrant: Sendable {
        var familyID: String
        var identityID: String
        /// The credential the family's sign-in was made with.
        var credentialID: Data
        var clientID: String
        var scope: String
        var authTime: Date
        /// When the family's absolute lifetime ends.
        var familyExpiresAt: Date
        /// The DPoP key its tokens are bound to (RFC 9449 §6), if any.
        var dpopJKT: String?
        /// The resource its tokens are for (RFC 8707), if any.
        var resource: String?
    }

    /// A client credentials token's grant (RFC 6749 §4.4): the client is its own subject.
    struct ClientTokenGrant: Sendable {
        var clientID: String
        var scope: String
        /// The DPoP key the token is bound to (RFC 9449 §6), if any.
        var dpopJKT: String?
        /// The resource it is for (RFC 8707), if any.
        var resource: String?
    }

    /// Who an access token was issued to: a person, through a grant family, or a client
    /// for itself.
    enum TokenHolder: Sendable {
        case person(TokenGrant)
        case client(ClientTokenGrant)

        var scope: String {
            switch self {
            case .person(let grant): grant.scope
            case .client(let grant): grant.scope
            }
        }

        var dpopJKT: String? {
            switch self {
            case .person(let grant): grant.dpopJKT
            case .client(let grant): grant.dpopJKT
            }
        }

        /// The resource the token is for (RFC 8707), if any.
        var resource: String? {
            switch self {
            case .person(let grant): grant.resource
            case .client(let grant): grant.resource
            }
        }

        /// The client the token was issued to.
        var clientID: String {
            switch self {
            case .person(let grant): grant.clientID
            case .client(let grant): grant.clientID
            }
        }
    }

    /// Starts a family for a verified sign-in (an authorization code's, or a device
    /// approval's, RFC 8628); returns its id. `clientRegistration` is the registration of
    /// the client the sign-in began with (nil for a device approval, whose code is
    /// deleted with its client).
    func startFamily(
        identityID: String, credentialID: Data, clientID: String, clientRegistration: String? = nil, scope: String, resource: String? = nil,
        dpopJKT: String? = nil, now: Date, in transaction: any SQLTransaction
    ) async throws -> String {
        let familyID = try ProviderContext.randomToken()
        try await transaction.execute("""
            INSERT INTO grant_families (id, identity_id, credential_id, client_id, scope, auth_time, created_at, expires_at, dpop_jkt, client_registration, resource)
            VALUES (\(familyID), \(identityID), \(credentialID), \(clientID), \(scope), \(now), \(now),
                \(now.addingTimeInterval(configuration.refreshTokenAbsoluteLifetime)), \(dpopJKT), \(clientRegistration), \(resource))
            """)
        return familyID
    }

    /// Starts a family for a verified sign-in and issues its code; returns the code.
    func issueCode(
        identityID: String, credentialID: Data, clientID: String, clientRegistration: String? = nil, scope: String, resource: String? = nil,
        redirectURI: String, codeChallenge: String, nonce: String?, dpopJKT: String? = nil, now: Date, in transaction: any SQLTransaction
    ) async throws -> String {
        let familyID = try await startFamily(
            identityID: identityID, credentialID: credentialID, clientID: clientID, clientRegistration: clientRegistration, scope: scope,
            resource: resource, dpopJKT: dpopJKT, now: now, in: transaction
        )
        let code = try ProviderContext.randomToken()
        try await transaction.execute("""
            INSERT INTO authorization_codes (code_hash, family_id, redirect_uri, code_challenge, nonce, expires_at)
            VALUES (\(try ProviderContext.hash(code)), \(familyID), \(redirectURI), \(codeChallenge), \(nonce),
                \(now.addingTimeInterval(configuration.authorizationCodeLifetime)))
            """)
        return code
    }

    /// Redeems a code once, for the client it was issued to, with the redirect URI and the
    /// PKCE verifier of its request (RFC 6749 §4.1.3, RFC 7636 §4.6); a request that fails
    /// those checks does not spend it. A code presented again after it was redeemed
    /// revokes its family, and so every token issued from it (RFC 6749 §4.1.2); that
    /// refusal is committed. A code begun for an earlier client under the same id (one
    /// since deleted: its ``RegisteredClient/registration`` differs) is unknown to this one.
    func redeemCode(
        _ code: String, client: RegisteredClient, redirectURI: String?, verifier: String?, now: Date, in transaction: any SQLTransaction
    ) async throws -> Verdict<CodeGrant> {
        switch try await checkCode(code, client: client, redirectURI: redirectURI, verifier: verifier, now: now, in: transaction) {
        case .refused(let error): return .refused(error)
        case .replayed(let grant):
            try await revokeFamily(grant.familyID, now: now, in: transaction)
            return .refused(Self.replayedCode)
        case .redeemable(let grant):
            // Spent by ``issueTokens(for:now:in:)``, in the same transaction.
            return .accepted(grant)
        }
    }

    /// What a code's row says about a redemption, without writing anything.
    enum CodeCheck {
        case refused(ProviderError)
        /// Redeemed before: its family is to be revoked.
        case replayed(CodeGrant)
        case redeemable(CodeGrant)
    }

    static let replayedCode = ProviderError.badRequest(.invalidGrant, "authorization code already used; the tokens issued for it are revoked")

    /// Reads the code's row and checks it against the request: the client and its
    /// registration, single use, the family's state, expiry, the redirect URI and PKCE.
    func checkCode(
        _ code: String, client: RegisteredClient, redirectURI: String?, verifier: String?, now: Date, in transaction: any SQLTransaction
    ) async throws -> CodeCheck {
        let hash = try ProviderContext.hash(code)
        guard let row = try await transaction.first("""
            SELECT c.family_id, f.identity_id, f.client_id, f.client_registration, f.scope, f.auth_time, c.redirect_uri, c.code_challenge, c.nonce,
                c.expires_at AS code_expires_at, c.used, f.revoked_at, f.dpop_jkt, f.expires_at AS family_expires_at, f.resource
            FROM authorization_codes c JOIN grant_families f ON f.id = c.family_id
            WHERE c.code_hash = \(hash)
            """), try row.decode("client_id", as: String.self) == client.id,
            try Self.sameRegistration(row.decode("client_registration", as: String?.self), client)
        else {
            return .refused(.badRequest(.invalidGrant, "unknown authorization code"))
        }
        let grant = CodeGrant(
            codeHash: hash, familyID: try row.decode("family_id"), identityID: try row.decode("identity_id"), clientID: try row.decode("client_id"),
            scope: try row.decode("scope"), authTime: try row.decode("auth_time"), redirectURI: try row.decode("redirect_uri"),
            codeChallenge: try row.decode("code_challenge"), nonce: try row.decode("nonce"), dpopJKT: try row.decode("dpop_jkt"),
            familyExpiresAt: try row.decode("family_expires_at"), resource: try row.decode("resource")
        )
        if try row.decode("used", as: Bool.self) {
            return .replayed(grant)
        }
        guard try row.decode("revoked_at", as: Date?.self) == nil else {
            return .refused(.badRequest(.invalidGrant, "this grant was revoked"))
        }
        guard try row.decode("code_expires_at", as: Date.self) > now else {
            return .refused(.badRequest(.invalidGrant, "authorization code expired"))
        }
        // A code from the authorization challenge endpoint was asked for with no redirect
        // URI and is redeemed without one (draft-ietf-oauth-first-party-apps-04 §6); it is
        // stored as "", which no redirect-flow code has.
        guard (redirectURI ?? "") == grant.redirectURI else {
            return .refused(.badRequest(.invalidGrant, "redirect_uri differs from the authorization request"))
        }
        guard let verifier, (try? PKCE(verifier: verifier))?.challenge == grant.codeChallenge else {
            return .refused(.badRequest(.invalidGrant, "PKCE verification failed"))
        }
        return .redeemable(grant)
    }

    /// Rotates a refresh token: the presented one is spent, and a new access and refresh
    /// token of the same family are issued by the caller. A spent token presented again
    /// revokes the family (RFC 9700 §4.14.2); that refusal is committed. A token past its
    /// idle lifetime, or a family past its absolute lifetime, is refused.
    func rotateRefreshToken(_ token: String, clientID: String, now: Date, in transaction: any SQLTransaction) async throws -> Verdict<TokenGrant> {
        let hash = try ProviderContext.hash(token)
        guard let row = try await transaction.first("""
            SELECT t.family_id, f.identity_id, f.credential_id, f.client_id, f.scope, f.auth_time, f.expires_at AS family_expires_at,
                t.expires_at AS token_expires_at, t.rotated_at, f.revoked_at, f.dpop_jkt, f.resource
            FROM tokens t JOIN grant_families f ON f.id = t.family_id
            WHERE t.hash = \(hash) AND t.kind = 'refresh'
            """), try row.decode("client_id", as: String.self) == clientID
        else {
            return .refused(.badRequest(.invalidGrant, "unknown refresh token"))
        }
        let grant = TokenGrant(
            familyID: try row.decode("family_id"), identityID: try row.decode("identity_id"), credentialID: try row.decode("credential_id"),
            clientID: try row.decode("client_id"),
            scope: try row.decode("scope"), authTime: try row.decode("auth_time"), familyExpiresAt: try row.decode("family_expires_at"),
            dpopJKT: try row.decode("dpop_jkt"), resource: try row.decode("resource")
        )
        guard try row.decode("revoked_at", as: Date?.self) == nil else {
            return .refused(.badRequest(.invalidGrant, "this grant was revoked"))
        }
        if try row.decode("rotated_at", as: Date?.self) != nil {
            try await revokeFamily(grant.familyID, now: now, in: transaction)
            return .refused(.badRequest(.invalidGrant, "refresh token already used; every token of this grant is revoked"))
        }
        guard try row.decode("token_expires_at", as: Date.self) > now, grant.familyExpiresAt > now else {
            return .refused(.badRequest(.invalidGrant, "refresh token expired; sign in again"))
        }
        try await transaction.execute("UPDATE tokens SET rotated_at = \(now) WHERE hash = \(hash)")
        return .accepted(grant)
    }

    /// Issues an access token, and a refresh token when asked, in `familyID`; returns
    /// them and the access token's expiry.
    func issueTokens(familyID: String, familyExpiresAt: Date, withRefresh: Bool, now: Date, in transaction: any SQLTransaction) async throws -> (access: String, refresh: String?, expiresAt: Date) {
        guard withRefresh else {
            let access = try ProviderContext.randomToken()
            let expiresAt = now.addingTimeInterval(configuration.accessTokenLifetime)
            try await transaction.execute("""
                INSERT INTO tokens (hash, family_id, kind, expires_at) VALUES (\(try ProviderContext.hash(access)), \(familyID), 'access', \(expiresAt))
                """)
            return (access, nil, expiresAt)
        }
        let tokens = try newTokens(familyExpiresAt: familyExpiresAt, now: now)
        // Both rows in one statement: one round trip on PostgreSQL.
        try await transaction.execute("""
            INSERT INTO tokens (hash, family_id, kind, expires_at) VALUES
                (\(try ProviderContext.hash(tokens.access)), \(familyID), 'access', \(tokens.expiresAt)),
                (\(try ProviderContext.hash(tokens.refresh)), \(familyID), 'refresh', \(tokens.refreshExpiresAt))
            """)
        return (tokens.access, tokens.refresh, tokens.expiresAt)
    }

    /// A new access token and refresh token for a family, and when each ends: the access
    /// token after its lifetime, the refresh token after its idle lifetime but never past
    /// the family's absolute end.
    func newTokens(familyExpiresAt: Date, now: Date) throws -> (access: String, refresh: String, expiresAt: Date, refreshExpiresAt: Date) {
        let (access, refresh) = try ProviderContext.randomTokenPair()
        return (
            access, refresh, now.addingTimeInterval(configuration.accessTokenLifetime),
            min(now.addingTimeInterval(configuration.refreshTokenIdleLifetime), familyExpiresAt)
        )
    }

    /// Keeps at most `maximumGrantsPerClient` live families per identity and client,
    /// revoking the oldest, so sign-ins that never refresh cannot grow the store
    /// without bound. The offset is the provider's own setting, written into the
    /// statement: SQLite plans a bound LIMIT or OFFSET anew each time its value is bound.
    func limitFamilies(identityID: String, clientID: String, now: Date, in transaction: any SQLTransaction) async throws {
        let excess = try await transaction.query("""
            SELECT id FROM grant_families
            WHERE identity_id = \(identityID) AND client_id = \(clientID) AND revoked_at IS NULL AND expires_at > \(now)
            ORDER BY created_at DESC LIMIT 100000 OFFSET \(raw: String(max(configuration.maximumGrantsPerClient, 0)))
            """)
        for row in excess {
            try await revokeFamily(try row.decode("id"), now: now, in: transaction)
        }
    }

    /// The grant behind a live access token; nil when unknown, expired or revoked.
    func accessGrant(_ token: String, now: Date, in transaction: any SQLTransaction) async throws -> TokenGrant? {
        guard let row = try await transaction.first("""
            SELECT t.family_id, f.identity_id, f.credential_id, f.client_id, f.scope, f.auth_time, f.expires_at, f.dpop_jkt, f.resource
            FROM tokens t JOIN grant_families f ON f.id = t.family_id
            WHERE t.hash = \(try ProviderContext.hash(token)) AND t.kind = 'access' AND t.expires_at > \(now) AND f.revoked_at IS NULL
            """)
        else { return nil }
        return TokenGrant(
            familyID: try row.decode("family_id"), identityID: try row.decode("identity_id"), credentialID: try row.decode("credential_id"),
            clientID: try row.decode("client_id"),
            scope: try row.decode("scope"), authTime: try row.decode("auth_time"), familyExpiresAt: try row.decode("expires_at"),
            dpopJKT: try row.decode("dpop_jkt"), resource: try row.decode("resource")
        )
    }

    /// The live client credentials token `token`, or nil.
    func clientAccessGrant(_ token: String, now: Date, in transaction: any SQLTransaction) async throws -> ClientTokenGrant? {
        guard let row = try await transaction.first("""
            SELECT client_id, scope, dpop_jkt, resource FROM client_tokens WHERE hash = \(try ProviderContext.hash(token)) AND expires_at > \(now)
            """)
        else { return nil }
        return ClientTokenGrant(
            clientID: try row.decode("client_id"), scope: try row.decode("scope"), dpopJKT: try row.decode("dpop_jkt"), resource: try row.decode("resource")
        )
    }

    /// Binds a family's tokens to a DPoP key (RFC 9449 §5): from now on its access tokens
    /// are presented with a proof of that key, and its refresh tokens redeemed with one.
    func bind(familyID: String, toDPoPKey jkt: String, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("UPDATE grant_families SET dpop_jkt = \(jkt) WHERE id = \(familyID)")
    }

    /// RFC 7009 §2.1: a refresh token takes its whole family with it; an access token
    /// only itself (a client credentials one included). Unknown tokens, and tokens of another client, are ignored.
    /// A revocation that took effect writes `token.revoked` with it.
    /// `hash` is the token's row key (``JWTAccessTokens/rowKey(of:now:)``).
    func revokeToken(hash: Data, clientID: String, now: Date, in transaction: any SQLTransaction) async throws {
        guard let row = try await transaction.first("""
            SELECT t.family_id, t.kind, f.client_id, f.identity_id FROM tokens t JOIN grant_families f ON f.id = t.family_id WHERE t.hash = \(hash)
            """)
        else {
            // A client credentials token has no family: only its own client revokes it.
            let deleted = try await transaction.query("DELETE FROM client_tokens WHERE hash = \(hash) AND client_id = \(clientID) RETURNING client_id")
            if !deleted.isEmpty {
                try await audit.record(AuditEntry(.tokenRevoked, actor: .client(clientID), client: clientID, now: now), in: transaction)
            }
            return
        }
        guard try row.decode("client_id", as: String.self) == clientID else { return }
        let kind = try row.decode("kind", as: String.self)
        if kind == TokenKind.refresh.rawValue {
            try await revokeFamily(try row.decode("family_id"), now: now, in: transaction)
        } else {
            try await transaction.execute("DELETE FROM tokens WHERE hash = \(hash)")
        }
        let identity = try row.decode("identity_id", as: String.self)
        try await audit.record(AuditEntry(.tokenRevoked, actor: .client(clientID), subject: identity, client: clientID, now: now), in: transaction)
    }

    func revokeFamily(_ familyID: String, now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("UPDATE grant_families SET revoked_at = \(now) WHERE id = \(familyID) AND revoked_at IS NULL")
        try await transaction.execute("DELETE FROM tokens WHERE family_id = \(familyID)")
    }

    /// Ends every family begun for `clientID` (a deleted client: docs/SECURITY.md, "Client
    /// keys"), its tokens with them.
    static func revokeFamilies(ofClient clientID: String, now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM tokens WHERE family_id IN (SELECT id FROM grant_families WHERE client_id = \(clientID))")
        try await transaction.execute("UPDATE grant_families SET revoked_at = \(now) WHERE client_id = \(clientID) AND revoked_at IS NULL")
    }

    /// Ends every family `identityID` began with `clientID` (a consent withdrawn), its
    /// tokens with them.
    static func revokeFamilies(ofIdentity identityID: String, client clientID: String, now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("""
            DELETE FROM tokens WHERE family_id IN (SELECT id FROM grant_families WHERE identity_id = \(identityID) AND client_id = \(clientID))
            """)
        try await transaction.execute("""
            UPDATE grant_families SET revoked_at = \(now) WHERE identity_id = \(identityID) AND client_id = \(clientID) AND revoked_at IS NULL
            """)
    }

    /// The family `familyID` while it is not revoked: what a device approval began, when
    /// the device's poll collects it (RFC 8628 §3.5).
    func liveFamily(_ familyID: String, in transaction: any SQLTransaction) async throws -> TokenGrant? {
        guard let row = try await transaction.first("""
            SELECT identity_id, credential_id, client_id, scope, auth_time, expires_at, dpop_jkt, resource FROM grant_families
            WHERE id = \(familyID) AND revoked_at IS NULL
            """)
        else { return nil }
        return TokenGrant(
            familyID: familyID, identityID: try row.decode("identity_id"), credentialID: try row.decode("credential_id"),
            clientID: try row.decode("client_id"), scope: try row.decode("scope"),
            authTime: try row.decode("auth_time"), familyExpiresAt: try row.decode("expires_at"), dpopJKT: try row.decode("dpop_jkt"),
            resource: try row.decode("resource")
        )
    }

    func revokeFamilies(ofCredential credentialID: Data, now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM tokens WHERE family_id IN (SELECT id FROM grant_families WHERE credential_id = \(credentialID))")
        try await transaction.execute("UPDATE grant_families SET revoked_at = \(now) WHERE credential_id = \(credentialID) AND revoked_at IS NULL")
    }
}
