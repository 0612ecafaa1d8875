import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn
import LatchkeyProtocol
import LatchkeyOAuth

/// `/authorize` and the authenticate endpoint behind it (RFC 6749 §4.1, PKCE S256 as RFC
/// 7636 requires of public clients, RFC 9207's `iss`; docs/PROTOCOL.md section 3).
struct SignIns: Sendable {
    let context: ProviderContext
    let credentials: CredentialRegistry
    let grants: GrantLedger
    init(context: ProviderContext, credentials: CredentialRegistry, grants: GrantLedger) {
        self.context = context
        self.credentials = credentials
        self.grants = grants
    }

    /// The credential IDs a session for a `login_hint` carries in `allowCredentials`,
    /// always this many (``LoginHintCredentials``); an identity with more live credentials
    /// is offered its most recently used.
    static let maximumAllowedCredentials = 16

    /// Whether `redirectURI` is registered for `client`: exactly, or for a loopback
    /// redirect, with any port (RFC 8252 §7.3), whether it was registered with a port (as
    /// a dynamic registration or a metadata document names one) or without.
    static func redirectMatches(_ redirectURI: String, _ client: ProviderConfiguration.Client) -> Bool {
        if client.redirectURIs.contains(redirectURI) { return true }
        guard let stripped = LoopbackRedirect.withoutPort(redirectURI) else { return false }
        return client.redirectURIs.contains { $0 == stripped || LoopbackRedirect.withoutPort($0) == stripped }
    }

    /// The scopes granted for a requested `scope` (RFC 6749 §3.3): the supported ones
    /// asked for, in order, once each, and always `openid` (this provider always issues an
    /// ID token). Unknown scopes are dropped, not granted verbatim; the token response
    /// names what was granted.
    static func grantedScope(_ requested: String?, _ configuration: ProviderConfiguration) -> String {
        let supported = DiscoveryDocument.supportedScopes(configuration)
        var granted = [OAuthScope.openID]
        for scope in (requested ?? "").split(separator: " ").map(String.init)
        where supported.contains(scope) && !granted.contains(scope) {
            granted.append(scope)
        }
        return granted.joined(separator: " ")
    }

    /// The PKCE challenge of a request: S256 is required (RFC 7636 §4.2: BASE64URL of a
    /// SHA-256, 43 characters that decode to 32 bytes).
    static func codeChallenge(_ challenge: String?, method: String?) throws -> String {
        guard method == PKCE.challengeMethod, let challenge else {
            throw ProviderError.badRequest(.invalidRequest, "PKCE with code_challenge_method=S256 is required")
        }
        guard challenge.utf8.count == 43, (try? Base64URL.decode(challenge))?.count == 32 else {
            throw ProviderError.badRequest(.invalidRequest, "code_challenge must be the 43-character base64url SHA-256 of the verifier")
        }
        return challenge
    }

    /// Checks an authorization request and answers its session, sealed: nothing is stored
    /// until an assertion completes it.
    func start(_ parameters: AuthorizationRequestParameters, now: Date = ProviderClock.now) async throws -> String {
        guard let registered = try await ClientRegistry(context: context).client(parameters.clientID) else {
            throw ProviderError.badRequest(.invalidClient, "unknown client_id")
        }
        guard registered.allows(.authorizationCode) else {
            throw ProviderError.badRequest(.unauthorizedClient, "this client may not use the authorization code grant")
        }
        let client = registered.configuration
        guard let redirectURI = parameters.redirectURI, redirectURI.utf8.count <= 2048, Self.redirectMatches(redirectURI, client) else {
            throw ProviderError.badRequest(.invalidRequest, "redirect_uri is not registered for this client")
        }
        guard parameters.responseType == AuthorizationRequestParameters.codeResponseType else {
            throw ProviderError.badRequest(.unsupportedResponseType, "only response_type=code is supported")
        }
        let challenge = try Self.codeChallenge(parameters.codeChallenge, method: parameters.codeChallengeMethod)
        for (name, value) in [(AuthorizationRequestParameters.Name.state, parameters.state), (.nonce, parameters.nonce), (.scope, parameters.scope)]
        where (value?.utf8.count ?? 0) > 1024 {
            throw ProviderError.badRequest(.invalidRequest, "\(name.rawValue) is over 1024 bytes")
        }
        // RFC 9449 §10: a SHA-256 JWK thumbprint, 43 base64url characters.
        if let jkt = parameters.dpopJKT, jkt.utf8.count != 43 || (try? Base64URL.decode(jkt))?.count != 32 {
            throw ProviderError.badRequest(.invalidRequest, "dpop_jkt must be the base64url SHA-256 JWK thumbprint of the DPoP key")
        }
        let resource = try await ResourceServers(context: context).audience(parameters.resource, client: registered)
        let tickets = try context.tickets
        let allowed = try await allowedCredentials(loginHint: parameters.loginHint)
        let fresh = try ProviderContext.sessionIDAndChallenge()
        let session = SignInSession(
            id: fresh.id, clientID: client.id, clientRegistration: registered.registration, redirectURI: redirectURI, state: parameters.state,
            nonce: parameters.nonce, codeChallenge: challenge, dpopJKT: parameters.dpopJKT, scope: Self.grantedScope(parameters.scope, context.configuration),
            resource: resource, thirdParty: registered.thirdParty, challenge: fresh.challenge, allowedCredentials: allowed,
            expiresAt: now.addingTimeInterval(context.configuration.authenticationSessionLifetime)
        )
        return try tickets.seal(session)
    }

    /// `allowCredentials` for a sign-in naming `loginHint` (OIDC Core §3.1.2.1): for any
    /// name, known or not, ``LoginHintCredentials/count`` IDs, that identity's live ones
    /// among stable decoys (``LoginHintCredentials``). No hint, or an oversized one, gives
    /// an empty list (a discoverable credential, whose assertion must name its user).
    func allowedCredentials(loginHint hint: String?) async throws -> [Data] {
        guard let hint, hint.utf8.count <= 256 else { return [] }
        let decoyKey = try context.decoyKey
        // The name as names are compared, once for the lookup and the decoys: its
        // normalisation (NFKC) costs more than a MAC.
        let name = Username.key(hint)
        let live = try await context.database.read { transaction in
            try await self.credentials.liveIDs(ofUsernameKey: name, in: transaction)
        }
        return try LoginHintCredentials.list(name: name, live: live, key: decoyKey)
    }

    /// The session sealed in `ticket`, if it is one and has not expired.
    private func openSession(_ ticket: String, now: Date) throws -> SignInSession {
        guard let session = try context.tickets.open(SignInSession.self, from: ticket), session.expiresAt > now else {
            throw ProviderError.notFound("unknown, used or expired authentication session")
        }
        return session
    }

    /// The request options (WebAuthn §5.5) for a session, and its client.
    func options(session id: String, now: Date = ProviderClock.now) async throws -> (PublicKeyCredentialRequestOptionsJSON, String) {
        let session = try openSession(id, now: now)
        let options = PublicKeyCredentialRequestOptionsJSON(
            challenge: session.challenge, rpId: context.relyingParty.id,
            allowCredentials: session.allowedCredentials.isEmpty ? nil : session.allowedCredentials.map { .init(id: $0) },
            userVerification: "preferred"
        )
        return (options, session.clientID)
    }

    /// The person declined on the sign-in page: the session is spent and the redirect
    /// carries `error=access_denied` with `state` and `iss` (RFC 6749 §4.1.2.1, RFC 9207 §2).
    func cancel(session id: String, now: Date = ProviderClock.now) async throws -> URL {
        let session = try openSession(id, now: now)
        try await context.database.transaction { transaction in
            guard try await SpentTickets.spend(session.id, until: session.expiresAt, in: transaction) else {
                throw ProviderError.notFound("unknown, used or expired authentication session")
            }
        }
        let answer = AuthorizationResponseParameters(
            state: session.state, issuer: context.issuer.absoluteString, error: .accessDenied, errorDescription: "the user declined to sign in"
        )
        guard let components = URLComponents(string: session.redirectURI), let redirect = FormEncoding.url(components, appending: answer.formItems) else {
            throw ProviderError.serverError("cannot build the redirect")
        }
        return redirect
    }

    /// What a verified assertion leads to: the client's redirect, or, for a third-party
    /// client the person has not consented to, the consent prompt.
    enum Outcome: Sendable {
        case redirect(URL)
        case consent(SignInExchange.ConsentRequired)
    }

    /// Verifies the assertion and answers the redirect carrying code, state and iss (RFC
    /// 9207). The signature is checked outside any transaction; the session is then spent
    /// and the counter recorded only if both are still as they were read. A third-party
    /// client's sign-in issues its code only under a consent (``Consents``): a remembered
    /// one that covers it (written down as `consent.remembered` with the sign-in), or the
    /// person's answer to the prompt this returns instead.
    func complete(session id: String, response: AuthenticationResponseJSON, now: Date = ProviderClock.now) async throws -> Outcome {
        let session = try openSession(id, now: now)
        let (credential, signCount) = try await AssertionCheck(context: context, credentials: credentials).verify(response, for: .init(
            sessionID: session.id, clientID: session.clientID, challenge: session.challenge, allowedCredentials: session.allowedCredentials,
            spentError: .notFound("unknown, used or expired authentication session")
        ))
        let signIn = GrantLedger.VerifiedSignIn(
            sessionID: session.id, sessionExpiresAt: session.expiresAt, credential: credential, signCount: signCount, clientID: session.clientID,
            clientRegistration: session.clientRegistration, scope: session.scope, resource: session.resource, redirectURI: session.redirectURI, codeChallenge: session.codeChallenge, nonce: session.nonce, dpopJKT: session.dpopJKT
        )
        var before: (@Sendable (any SQLTransaction) async throws -> Void)?
        if session.thirdParty {
            // The consent is looked up in the sign-in's own transaction (no read of its
            // own); one that does not cover the request rolls it back for the prompt.
            let consents = Consents(context: context, grants: grants)
            let identityID = credential.identityID
            let context = context
            before = { transaction in
                guard try await consents.covers(identityID: identityID, clientID: session.clientID, resource: session.resource, scope: session.scope, in: transaction) else {
                    throw ConsentNeeded()
                }
                try await context.audit.record(AuditEntry(
                    .consentRemembered, actor: .identity(identityID), subject: identityID, client: session.clientID,
                    details: AuditEvent.Details(scope: session.scope, resource: session.resource), now: now
                ), in: transaction)
            }
        }
        let code: String
        do {
            code = try await grants.complete(
                signIn, credentials: credentials, tickets: try context.tickets, spentError: .notFound("unknown, used or expired authentication session"), now: now,
                in: context.database, before: before
            )
        } catch is ConsentNeeded {
            return .consent(try await prompt(id, session: session, signIn: signIn, now: now))
        }
        let answer = AuthorizationResponseParameters(code: code, state: session.state, issuer: context.issuer.absoluteString)
        guard let components = URLComponents(string: session.redirectURI), let redirect = FormEncoding.url(components, appending: answer.formItems) else {
            throw ProviderError.serverError("cannot build the redirect")
        }
        return .redirect(redirect)
    }

    /// The consent prompt for a verified sign-in: the session is spent and the counter
    /// recorded now (the passkey was used), and everything the code needs travels sealed
    /// in a ``ConsentTicket`` bound to this session.
    private func prompt(
        _ ticket: String, session: SignInSession, signIn: GrantLedger.VerifiedSignIn, now: Date
    ) async throws -> SignInExchange.ConsentRequired {
        try await context.database.transaction { transaction in
            guard try await SpentTickets.spend(session.id, until: session.expiresAt, in: transaction) else {
                throw ProviderError.notFound("unknown, used or expired authentication session")
            }
            try await self.credentials.recordUse(signIn.credential, signCount: signIn.signCount, now: now, in: transaction)
        }
        let consent = ConsentTicket(
            id: try ProviderContext.randomToken(), sessionBinding: try ProviderContext.hash(ticket), identityID: signIn.credential.identityID,
            credentialID: signIn.credential.record.id, clientID: session.clientID, scope: session.scope, resource: session.resource,
            redirectURI: session.redirectURI, state: session.state, nonce: session.nonce, codeChallenge: session.codeChallenge,
            dpopJKT: session.dpopJKT, expiresAt: now.addingTimeInterval(ConsentTicket.lifetime)
        )
        let client = try await ClientRegistry(context: context).client(session.clientID)
        return SignInExchange.ConsentRequired(consent: .init(
            clientName: client?.name ?? session.clientID, clientID: session.clientID,
            redirectHost: URLComponents(string: session.redirectURI)?.host ?? "?", resource: session.resource,
            scopes: session.scope.split(separator: " ").map(String.init), ticket: try context.tickets.seal(consent),
            submit: context.url("\(ProtocolPath.authenticate)/\(ticket)/consent").absoluteString
        ))
    }
}

/// Thrown inside a third-party sign-in's transaction when no remembered consent covers it:
/// the transaction rolls back and the person is asked (``SignIns/complete(session:response:now:)``).
private struct ConsentNeeded: Error {}
