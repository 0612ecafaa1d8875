import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn

/// The authorization challenge endpoint (draft-ietf-oauth-first-party-apps-04) with
/// passkeys (docs/PROTOCOL.md section 8): a first-party app posts its authorization
/// request, gets `insufficient_authorization` with an `auth_session` and WebAuthn request
/// options, posts the assertion with that `auth_session`, and gets an authorization code —
/// no browser, no redirect. The assertion is verified exactly as at the authenticate
/// endpoint (counter, user handle, origin, RP ID).
///
/// Nothing is stored before the assertion: the `auth_session` is sealed, like a sign-in
/// session. A first request with a DPoP proof binds the session to that key (§9.6.1): the
/// second request and the token request must prove the same key, and the code and its
/// tokens are bound to it. Every proof this endpoint accepts has its `jti` spent (RFC 9449
/// §11.1), the one that binds a session included, so no proof is accepted twice. A
/// refused request (no proof, another key, a bad assertion) spends no session, so the
/// flow stays usable for the rightful client; a completed session is spent, and
/// presenting it again is `invalid_session`.
struct AuthorizationChallenges: Sendable {
    let context: ProviderContext
    let signIns: SignIns
    let credentials: CredentialRegistry
    let grants: GrantLedger
    let dpop: @Sendable () throws -> DPoPBinding

    /// What the endpoint answers: more is needed (403), or the code (200).
    enum Answer: Sendable {
        case insufficientAuthorization(AuthorizationChallengeExchange.InsufficientAuthorization)
        case code(AuthorizationChallengeExchange.AuthorizationCode)
    }

    func answer(
        _ request: AuthorizationChallengeRequest, client: RegisteredClient, dpopProofs: [String], now: Date = ProviderClock.now
    ) async throws -> Answer {
        let url = context.url(ProtocolPath.authorizationChallenge)
        let binding = try dpop()
        let proof = try binding.proof(dpopProofs, method: HTTPMethod.post, url: url, now: now)
        guard let ticket = request.authSession else {
            guard request.webauthnResponse == nil else {
                throw ProviderError.badRequest(.invalidRequest, "webauthn_response goes with the auth_session it answers")
            }
            let answer = try await start(request, client: client, proof: proof, now: now)
            try await spend(proof, binding)
            return .insufficientAuthorization(answer)
        }
        let session = try open(ticket, client: client, now: now)
        // §9.6.1: a session bound to a key is used only with a proof of that key.
        if let jkt = session.dpopJKT {
            guard let proof else {
                throw ProviderError.badRequest(.invalidDPoPProof, "this auth_session is bound to a DPoP key: send a proof of it")
            }
            guard ConstantTime.isEqual(Data(jkt.utf8), Data(proof.thumbprint.utf8)) else {
                throw ProviderError.badRequest(.invalidDPoPProof, "the DPoP proof is made with another key than the one this auth_session is bound to")
            }
        }
        guard let text = request.webauthnResponse else {
            // Asked again: the same options, for the same session.
            try await spend(proof, binding)
            return .insufficientAuthorization(.init(authSession: ticket, webauthn: options(session)))
        }
        let response: AuthenticationResponseJSON
        do {
            response = try AuthenticationResponseJSON(json: Data(text.utf8))
        } catch {
            throw ProviderError.badRequest(.invalidRequest, "webauthn_response is not an AuthenticationResponseJSON", underlying: error)
        }
        let (credential, signCount) = try await AssertionCheck(context: context, credentials: credentials).verify(response, for: .init(
            sessionID: session.id, clientID: session.clientID, challenge: session.challenge, allowedCredentials: session.allowedCredentials,
            spentError: .badRequest(.invalidSession, "this auth_session was already used")
        ))
        let signIn = GrantLedger.VerifiedSignIn(
            sessionID: session.id, sessionExpiresAt: session.expiresAt, credential: credential, signCount: signCount, clientID: session.clientID,
            clientRegistration: session.clientRegistration, scope: session.scope, resource: session.resource, redirectURI: "", codeChallenge: session.codeChallenge, nonce: nil, dpopJKT: session.dpopJKT
        )
        // The proof is spent in the same unit as the code, so it cannot be replayed.
        var spendProof: (@Sendable (any SQLTransaction) async throws -> Void)?
        if let proof {
            spendProof = { try await binding.spend(proof, resource: false, in: $0) }
        }
        let code = try await grants.complete(
            signIn, credentials: credentials, tickets: try context.tickets, spentError: .badRequest(.invalidSession, "this auth_session was already used"), now: now,
            in: context.database, before: spendProof
        )
        return .code(.init(authorizationCode: code))
    }

    /// Records an accepted proof's `jti`; a replayed one is `invalid_dpop_proof`.
    private func spend(_ proof: DPoPVerifiedProof?, _ binding: DPoPBinding) async throws {
        guard let proof else { return }
        try await context.database.transaction { transaction in
            try await binding.spend(proof, resource: false, in: transaction)
        }
    }

    /// The first request (§5.1): checked as an authorization request is, then sealed.
    private func start(
        _ request: AuthorizationChallengeRequest, client: RegisteredClient, proof: DPoPVerifiedProof?, now: Date
    ) async throws -> AuthorizationChallengeExchange.InsufficientAuthorization {
        guard client.allows(.authorizationCode) else {
            throw ProviderError.badRequest(.unauthorizedClient, "this client may not use the authorization code grant")
        }
        // draft-ietf-oauth-first-party-apps §1: for first-party clients only. A third-party
        // client (a metadata document, a dynamic registration) signs in through /authorize,
        // where the person sees who asks and consents; here it would get a code unasked.
        guard !client.thirdParty else {
            throw ProviderError.badRequest(.unauthorizedClient, "the authorization challenge endpoint is for first-party clients; use /authorize")
        }
        guard request.responseType == AuthorizationRequestParameters.codeResponseType else {
            throw ProviderError.badRequest(.unsupportedResponseType, "response_type=code is required (draft-ietf-oauth-first-party-apps §5.1)")
        }
        let challenge = try SignIns.codeChallenge(request.codeChallenge, method: request.codeChallengeMethod)
        guard (request.scope?.utf8.count ?? 0) <= 1024 else { throw ProviderError.badRequest(.invalidRequest, "scope is over 1024 bytes") }
        let resource = try await ResourceServers(context: context).audience(request.resource, client: client)
        let fresh = try ProviderContext.sessionIDAndChallenge()
        let session = ChallengeSession(
            id: fresh.id, clientID: client.id, clientRegistration: client.registration, scope: SignIns.grantedScope(request.scope, context.configuration),
            resource: resource, codeChallenge: challenge,
            dpopJKT: proof?.thumbprint, challenge: fresh.challenge,
            allowedCredentials: try await signIns.allowedCredentials(loginHint: request.loginHint),
            expiresAt: now.addingTimeInterval(context.configuration.authenticationSessionLifetime)
        )
        return .init(authSession: try context.tickets.seal(session), webauthn: options(session))
    }

    /// The session sealed in `ticket`: this client's, not expired; else `invalid_session`.
    private func open(_ ticket: String, client: RegisteredClient, now: Date) throws -> ChallengeSession {
        guard ticket.utf8.count <= 16 * 1024, let session = try? context.tickets.open(ChallengeSession.self, from: ticket),
              session.expiresAt > now, session.clientID == client.id
        else {
            throw ProviderError.badRequest(.invalidSession, "unknown, expired or foreign auth_session")
        }
        return session
    }

    private func options(_ session: ChallengeSession) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: session.challenge, rpId: context.relyingParty.id,
            allowCredentials: session.allowedCredentials.isEmpty ? nil : session.allowedCredentials.map { .init(id: $0) },
            userVerification: "preferred"
        )
    }
}
