import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn

/// `/authorize` and the authenticate endpoint behind it (RFC 6749 §4.1, PKCE S256 as RFC
/// 7636 requires of public clients, RFC 9207's `iss`; docs/PROTOCOL.md section 3).
struct SignIns: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let credentials: CredentialRegistry
    let grants: GrantLedger
    /// This instance's last count of pending sessions, and when it was taken: counting
    /// on every `/authorize` would cost a table scan each.
    private let pending = PendingCount()

    init(context: ProviderContext, identities: IdentityDirectory, credentials: CredentialRegistry, grants: GrantLedger) {
        self.context = context
        self.identities = identities
        self.credentials = credentials
        self.grants = grants
    }

    /// Bounds on what unauthenticated requests can make the provider hold.
    static let maximumPending = 10_000

    /// Whether `redirectURI` is registered for `client`: exactly, or for a loopback
    /// redirect, with any port (RFC 8252 §7.3).
    static func redirectMatches(_ redirectURI: String, _ client: ProviderConfiguration.Client) -> Bool {
        if client.redirectURIs.contains(redirectURI) { return true }
        guard var components = URLComponents(string: redirectURI), components.scheme == "http",
              ["127.0.0.1", "[::1]", "::1"].contains(components.host ?? "")
        else { return false }
        components.port = nil
        return components.string.map(client.redirectURIs.contains) ?? false
    }

    /// The scopes granted for a requested `scope` (RFC 6749 §3.3): the supported ones
    /// asked for, in order, once each, and always `openid` (this provider always issues an
    /// ID token). Unknown scopes are dropped, not granted verbatim; the token response
    /// names what was granted.
    static func grantedScope(_ requested: String?) -> String {
        var granted = ["openid"]
        for scope in (requested ?? "").split(separator: " ").map(String.init)
        where DiscoveryDocument.supportedScopes.contains(scope) && !granted.contains(scope) {
            granted.append(scope)
        }
        return granted.joined(separator: " ")
    }

    /// Checks an authorization request and stores its session; returns the session id.
    func start(_ parameters: [String: String], now: Date = Date()) async throws -> String {
        guard let client = context.client(parameters["client_id"]) else {
            throw ProviderError.badRequest("invalid_client", "unknown client_id")
        }
        guard let redirectURI = parameters["redirect_uri"], redirectURI.utf8.count <= 2048, Self.redirectMatches(redirectURI, client) else {
            throw ProviderError.badRequest("invalid_request", "redirect_uri is not registered for this client")
        }
        guard parameters["response_type"] == "code" else {
            throw ProviderError.badRequest("unsupported_response_type", "only response_type=code is supported")
        }
        guard parameters["code_challenge_method"] == "S256", let challenge = parameters["code_challenge"] else {
            throw ProviderError.badRequest("invalid_request", "PKCE with code_challenge_method=S256 is required")
        }
        // RFC 7636 §4.2: BASE64URL(SHA-256(verifier)), 43 characters that decode to 32 bytes.
        guard challenge.utf8.count == 43, (try? Base64URL.decode(challenge))?.count == 32 else {
            throw ProviderError.badRequest("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the verifier")
        }
        for name in ["state", "nonce", "scope"] where (parameters[name]?.utf8.count ?? 0) > 1024 {
            throw ProviderError.badRequest("invalid_request", "\(name) is over 1024 bytes")
        }
        try await checkCapacity(now: now)
        let decoyKey = try context.decoyKey
        let id = try ProviderContext.randomToken()
        let hint = parameters["login_hint"]
        try await context.database.transaction { transaction in
            var allowed: [Data] = []
            if let hint, hint.utf8.count <= 256 {
                if let identity = try await self.identities.named(hint, in: transaction) {
                    allowed = try await self.credentials.liveIDs(of: identity.id, in: transaction)
                }
                // An unknown name (or one without credentials) gets a stable decoy
                // credential ID, keyed on the name as names are compared, so the options
                // tell neither whether it exists nor how it is spelled.
                if allowed.isEmpty {
                    allowed = [try HMAC.authenticationCode(for: Data("login_hint:\(Username.key(hint))".utf8), using: decoyKey)]
                }
            }
            let session = SignInSession(
                clientID: client.id, redirectURI: redirectURI, state: parameters["state"], nonce: parameters["nonce"],
                codeChallenge: challenge, scope: Self.grantedScope(parameters["scope"]), challenge: try SecureRandom.bytes(count: 32),
                allowedCredentials: allowed, expiresAt: now.addingTimeInterval(self.context.configuration.authenticationSessionLifetime)
            )
            try await transaction.execute("""
                INSERT INTO sign_in_sessions (id_hash, \(raw: SignInSession.columns))
                VALUES (\(try ProviderContext.hash(id)), \(session.clientID), \(session.redirectURI), \(session.state), \(session.nonce),
                    \(session.codeChallenge), \(session.scope), \(session.challenge), \(session.allowedColumn), \(session.expiresAt))
                """)
        }
        pending.added()
        return id
    }

    /// Refuses new sign-ins while the pending ones are at their cap (counted at most once
    /// a second per instance; housekeeping drops expired ones).
    private func checkCapacity(now: Date) async throws {
        if let count = pending.count(now: now) {
            guard count < Self.maximumPending else {
                throw ProviderError(status: 503, error: "temporarily_unavailable", description: "too many sign-ins in progress")
            }
            return
        }
        let count = try await context.database.transaction { transaction in
            try await transaction.first("SELECT count(*) FROM sign_in_sessions WHERE expires_at > \(now)")?.int(0) ?? 0
        }
        pending.set(Int(count), now: now)
        guard count < Self.maximumPending else {
            throw ProviderError(status: 503, error: "temporarily_unavailable", description: "too many sign-ins in progress")
        }
    }

    private func session(_ id: String, now: Date, in transaction: any SQLTransaction) async throws -> SignInSession {
        guard let session = try await transaction.first("""
            SELECT \(raw: SignInSession.columns) FROM sign_in_sessions WHERE id_hash = \(try ProviderContext.hash(id)) AND expires_at > \(now)
            """).map(SignInSession.init(row:))
        else {
            throw ProviderError.notFound("unknown, used or expired authentication session")
        }
        return session
    }

    /// The request options (WebAuthn §5.5) for a session, and its client.
    func options(session id: String, now: Date = Date()) async throws -> (PublicKeyCredentialRequestOptionsJSON, String) {
        let session = try await context.database.transaction { try await self.session(id, now: now, in: $0) }
        let options = PublicKeyCredentialRequestOptionsJSON(
            challenge: session.challenge, rpId: context.relyingParty.id,
            allowCredentials: session.allowedCredentials.isEmpty ? nil : session.allowedCredentials.map { .init(id: $0) },
            userVerification: "preferred"
        )
        return (options, session.clientID)
    }

    /// Verifies the assertion and answers the redirect carrying code, state and iss (RFC
    /// 9207). The signature is checked outside any transaction; the session is then spent
    /// and the counter recorded only if both are still as they were read.
    func complete(session id: String, response: AuthenticationResponseJSON, now: Date = Date()) async throws -> URL {
        let idHash = try ProviderContext.hash(id)
        let (session, credential) = try await context.database.transaction { transaction in
            let session = try await self.session(id, now: now, in: transaction)
            return (session, try await self.credentials.signer(response.rawId.data, in: transaction))
        }
        let signCount = try context.verify(response, by: credential, challenge: session.challenge, allowed: session.allowedCredentials)
        let code = try await context.database.transaction { transaction in
            guard try await transaction.first("DELETE FROM sign_in_sessions WHERE id_hash = \(idHash) RETURNING id_hash") != nil else {
                throw ProviderError.notFound("unknown, used or expired authentication session")
            }
            try await self.credentials.recordUse(credential, signCount: signCount, now: now, in: transaction)
            return try await self.grants.issueCode(
                identityID: credential.identityID, credentialID: credential.record.id, clientID: session.clientID, scope: session.scope,
                redirectURI: session.redirectURI, codeChallenge: session.codeChallenge, nonce: session.nonce, now: now, in: transaction
            )
        }
        var components = URLComponents(string: session.redirectURI)
        var items = components?.queryItems ?? []
        items.append(URLQueryItem(name: "code", value: code))
        if let state = session.state { items.append(URLQueryItem(name: "state", value: state)) }
        items.append(URLQueryItem(name: "iss", value: context.issuer.absoluteString))
        components?.queryItems = items
        // URLComponents leaves '+' as it is; a client reading the query as form encoding
        // (WHATWG URL §5.1) would take it for a space.
        let query = components?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        components?.percentEncodedQuery = query
        guard let redirect = components?.url else { throw ProviderError(status: 500, error: "server_error", description: "cannot build the redirect") }
        return redirect
    }
}
