#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

struct SignInService: EmbeddedService {
    let core: EmbeddedCore
}

extension SignInService {
    /// The work of `Embedded.authorize`, which documents it.
    func authorize(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil
    ) async throws -> AuthorizationResult {
        let flow = flow("authorize")
        return try await flow.run {
            let session = try sessions.session(issuer: issuer, clientID: clientID, redirectURI: redirectURI)
            let (request, code, _) = try await authorization(flow, session: session, scopes: scopes, credential: credential)
            return AuthorizationResult(
                code: code, state: request.state, codeVerifier: request.pkce.verifier,
                redirectURI: request.redirectURI, nonce: request.nonce, issuer: issuer
            )
        }
    }

    /// The work of `Embedded.authenticate`, which documents it.
    func authenticate(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil
    ) async throws -> Tokens {
        let flow = flow("authenticate")
        return try await flow.run {
            try await signInForTokens(
                flow, session: try sessions.session(issuer: issuer, clientID: clientID, redirectURI: redirectURI), scopes: scopes, credential: credential,
                proofOfPossession: proofOfPossession ?? configuration.proofOfPossession
            )
        }
    }

    /// A sign-in that ends in tokens, kept in the vault when the configuration says so.
    func signInForTokens(
        _ flow: FlowContext,
        session: ProviderSession,
        scopes: [String],
        credential requested: String?,
        proofOfPossession: ProofOfPossession,
        resource: String? = nil
    ) async throws -> Tokens {
        let provider = session.provider
        // The credential the caller named, if any: only that is hinted to the provider
        // (`login_hint`). A bound sign-in's own choice below is not: the provider would
        // answer a hint with sixteen IDs among decoys that this client does not need,
        // since it already knows which credential signs (docs/PERFORMANCE.md, "DPoP
        // sign-ins and the token cache").
        let named = requested
        var requested = requested
        var dpopKey: VaultEntry?
        // A bound sign-in chooses its credential first (its DPoP key signs from the first
        // request): the vault is listed, and its credentials decoded, once; the credential,
        // its DPoP key record, the login hint and the assertion's candidates all come from
        // that listing.
        var listed: [SoftwareAuthenticator.Credential]?
        if proofOfPossession == .dpop {
            let entries = try authenticator.vault.entries()
            let credentials = SoftwareAuthenticator.credentials(in: entries)
            listed = credentials
            let candidates = credentialStore.storedCredentials(decoded: credentials).filter { $0.belongs(to: provider) && ($0.state != .pending || $0.id == requested) }
            let chosen = try await choose(from: candidates, requested: requested, provider: provider, flow: flow)
            dpopKey = try await dpopKeys.dpopKey(for: chosen, among: entries)
            requested = chosen.id
        }
        let signer = try dpopKey.map(dpopKeys.dpopSigner)
        let tokenSet: TokenSet
        let signedBy: Credential
        if let challenged = try await challengeFlow(
            flow, session: session, scopes: scopes, credential: requested, hinting: named, dpop: signer, listed: listed, resource: resource
        ) {
            (tokenSet, signedBy) = challenged
        } else {
            let (request, code, redirectSigner) = try await authorization(
                flow, session: session, scopes: scopes, credential: requested, dpopJKT: signer?.thumbprint, listed: listed, resource: resource
            )
            signedBy = redirectSigner
            tokenSet = try await session.client.exchange(code: code, for: request, dpop: signer)
        }
        if signer != nil, !tokenSet.isDPoPBound {
            throw LatchkeyError.dpopNotBound(reason: "\(session.issuer.absoluteString) issued \(tokenSet.tokenType) tokens where DPoP-bound ones were asked for: it does not support DPoP (RFC 9449)"
            )
        }
        flow.emit(.tokensReceived)
        let tokens = Tokens(
            tokenSet: tokenSet, issuer: session.issuer, clientID: session.clientID, redirectURI: session.redirectURI, dpop: signer, credentialID: signedBy.id,
            resource: resource
        )
        await tokenCache.keep(tokens, scopes: scopes, credential: signedBy, flow: flow, in: dpopKey)
        return tokens
    }

    /// The sign-in over the authorization challenge endpoint when ``Configuration/signInFlow``
    /// allows it and the provider offers one; nil for the redirect flow.
    private func challengeFlow(
        _ flow: FlowContext, session: ProviderSession, scopes: [String], credential: String?, hinting named: String?, dpop: DPoPSigner?,
        listed: [SoftwareAuthenticator.Credential]?, resource: String?
    ) async throws -> (TokenSet, Credential)? {
        guard configuration.signInFlow != .redirect else { return nil }
        guard let (tokens, signedBy) = try await challengeSignIn(
            flow, session: session, scopes: scopes, credential: credential, hinting: named, dpop: dpop, listed: listed, resource: resource
        ) else {
            if configuration.signInFlow == .challenge {
                throw LatchkeyError.oauth(reason: "\(session.provider.issuer) offers no authorization challenge endpoint (draft-ietf-oauth-first-party-apps); use the redirect flow")
            }
            return nil
        }
        return (tokens, signedBy)
    }

    /// The work of `Embedded.authenticate`, which documents it.
    func authenticate(url: URL, credential: String? = nil) async throws -> URL {
        let flow = flow("authenticateURL")
        return try await flow.run {
            let (link, conversation) = try sessions.conversation(following: url, as: .authenticate, flow: flow)
            let (redirect, _) = try await signIn(at: link.endpoint, conversation: conversation, credential: credential)
            flow.emit(.codeReceived)
            return redirect
        }
    }

    /// The work of `Embedded.refresh`, which documents it.
    func refresh(_ tokens: Tokens, scopes: [String]? = nil) async throws -> Tokens {
        let flow = flow("refresh")
        return try await flow.run {
            let client = try session(for: tokens).client
            let refreshed = try await client.refresh(tokens.tokenSet, scopes: scopes, resource: tokens.resource, dpop: tokens.dpop)
            flow.emit(.tokensReceived)
            let result = Tokens(
                tokenSet: refreshed, issuer: tokens.issuer, clientID: tokens.clientID, redirectURI: tokens.redirectURI,
                dpop: tokens.dpop, credentialID: tokens.credentialID, resource: tokens.resource
            )
            if let id = tokens.credentialID, let credential = try credentialStore.storedCredentials().first(where: { $0.id == id }) {
                await tokenCache.keep(result, scopes: scopes, credential: credential, flow: flow)
            }
            return result
        }
    }

    /// The work of `Embedded.revoke`, which documents it.
    func revoke(_ tokens: Tokens) async throws {
        let flow = flow("revoke")
        try await flow.run {
            let client = try session(for: tokens).client
            if let refreshToken = tokens.refreshToken {
                try await client.revoke(refreshToken, hint: .refreshToken)
            }
            try await client.revoke(tokens.accessToken, hint: .accessToken)
            if let id = tokens.credentialID, let credential = try credentialStore.storedCredentials().first(where: { $0.id == id }) {
                tokenCache.forget(credential: credential) { $0.accessToken == tokens.accessToken || ($0.refreshToken != nil && $0.refreshToken == tokens.refreshToken) }
            }
        }
    }

    // MARK: The flow

    /// The session the tokens were issued in.
    private func session(for tokens: Tokens) throws -> ProviderSession {
        try sessions.session(issuer: tokens.issuer, clientID: tokens.clientID, redirectURI: tokens.redirectURI)
    }

    /// Authorization request → authenticate URL → assertion → redirect → checked code.
    private func authorization(
        _ flow: FlowContext,
        session: ProviderSession,
        scopes: [String],
        credential: String?,
        dpopJKT: String? = nil,
        listed: [SoftwareAuthenticator.Credential]? = nil,
        resource: String? = nil
    ) async throws -> (AuthorizationRequest, String, Credential) {
        let client = session.client
        let request = try await client.authorizationRequest(
            scopes: scopes, resource: resource, additionalParameters: dpopJKT.map { [AuthorizationRequestParameters.Name.dpopJKT.rawValue: $0] } ?? [:]
        )
        let conversation = session.conversation(flow, transport: transport)
        flow.logger.debug("signing in", metadata: ["provider": .string(session.provider.issuer), "clientID": .string(session.clientID)])

        let started = try await conversation.settle(conversation.get(request.url))
        let authenticateURL = try conversation.url(started.decode(SignInExchange.Started.self, "authorization answer").authenticateURL, named: "authenticateURL")
        let (redirect, signedBy) = try await signIn(at: authenticateURL, conversation: conversation, credential: credential, listed: listed)
        let code = try await client.authorizationCode(from: redirect, for: request)
        flow.emit(.codeReceived)
        return (request, code, signedBy)
    }

    /// The authenticate endpoint: request options → choice of credential → assertion →
    /// the redirect URL (docs/PROTOCOL.md section 3), and the credential that signed.
    private func signIn(
        at url: URL, conversation: ProviderConversation, credential requested: String?, listed: [SoftwareAuthenticator.Credential]? = nil
    ) async throws -> (URL, Credential) {
        let flow = conversation.flow
        let provider = conversation.provider
        let challenge = try await conversation.settle(conversation.get(url)).decode(SignInExchange.Challenge.self, "request options")
        let options = challenge.publicKey
        let submit = try conversation.url(challenge.submit, named: "submit")

        let (chosen, assertion) = try await assertion(for: options, requested: requested, provider: provider, flow: flow, listed: listed)
        let answer = try await credentialStore.revocationAware(chosen) {
            try await conversation.settle(conversation.post(submit, response: assertion))
        }
        if chosen.state == .pending { _ = credentialStore.markActive(chosen, logger: flow.logger) }
        // The redirect goes to the client's redirect URI, not to the provider: the OAuth
        // client checks it against the request (or the caller does, for a URL-driven flow).
        let redirectText = try ProviderConversation.bounded(answer.decode(SignInExchange.Completed.self, "redirect").redirectURL, "redirectURL")
        guard let redirect = URL(string: redirectText), redirect.scheme != nil else {
            throw LatchkeyError.malformedResponse(reason: "the provider's redirectURL is not a URL")
        }
        return (redirect, chosen)
    }

    /// The credential that answers `options` (the one `requested`, else the caller's
    /// choice among this provider's), announced to the flow, and its assertion: the sign-in
    /// step the authenticate endpoint and the authorization challenge endpoint share.
    func assertion(
        for options: PublicKeyCredentialRequestOptionsJSON, requested: String?, provider: ProviderAddress, flow: FlowContext, listed: [SoftwareAuthenticator.Credential]? = nil
    ) async throws -> (Credential, AuthenticationResponseJSON) {
        // A pending credential may not be bound at all: it is offered only when the
        // provider's options list it (so it is bound) or the caller names it.
        let listedByProvider = !(options.allowCredentials ?? []).isEmpty
        let fitting = try authenticator.candidates(for: options, origin: provider.origin, among: listed)
        let candidates = fitting
            .map(Credential.init)
            .filter { $0.belongs(to: provider) }
            .filter { $0.state != .pending || listedByProvider || $0.id == requested }
            .sorted(by: Credential.oldestFirst)
        let chosen = try await choose(from: candidates, requested: requested, provider: provider, flow: flow)
        flow.emit(.credentialChosen(chosen.id))
        // Signed with the candidate as listed: the vault is not listed a second time.
        guard let listed = fitting.first(where: { $0.metadata.credentialID.data == chosen.credentialID }) else {
            throw LatchkeyError.noCredential(reason: "the chosen credential cannot answer this request")
        }
        let (assertion, _) = try authenticator.getAssertion(options, origin: provider.origin, using: listed)
        return (chosen, assertion)
    }

    /// Picks the credential that signs: the one asked for, the only one that fits, or the
    /// step handler's choice (`choose-credential`). Revoked ones are never picked.
    func choose(from candidates: [Credential], requested: String?, provider: ProviderAddress, flow: FlowContext) async throws -> Credential {
        let active = candidates.filter { $0.state != .revoked }
        if let requested {
            guard let match = candidates.first(where: { $0.id == requested }) else {
                throw LatchkeyError.noCredential(reason: "credential \(requested.prefix(12))… cannot sign in at \(provider.issuer); `credentials()` lists those bound there"
                )
            }
            guard match.state != .revoked else { throw Self.revoked(match) }
            return match
        }
        guard !active.isEmpty else {
            if let revoked = candidates.first { throw Self.revoked(revoked) }
            throw LatchkeyError.noCredential(reason: "no credential on this host is bound at \(provider.issuer); bind one from a bind URL first")
        }
        if active.count == 1 { return active[0] }

        var step = FlowStep(
            name: .chooseCredential,
            message: "\(active.count) credentials can sign in at \(provider.issuer); choose one",
            fields: [FlowStep.Field(name: Step.Field.Name.credential.rawValue, required: true)],
            candidates: active
        )
        flow.emit(.stepRequested(.chooseCredential))
        while true {
            let answer = try await flow.ask(step)
            flow.emit(.stepAnswered(.chooseCredential))
            if let id = answer.fields[Step.Field.Name.credential.rawValue], let match = active.first(where: { $0.id == id }) { return match }
            guard step.attempt < ProviderConversation.maximumAttempts else {
                throw LatchkeyError.invalidStepAnswer(reason: "the chosen credential is not one of those offered", step: FlowStep.Name.chooseCredential.rawValue)
            }
            step.attempt += 1
            step.previousError = "that credential is not one of those offered"
        }
    }

    private static func revoked(_ credential: Credential) -> LatchkeyError {
        LatchkeyError.credentialRevoked(reason: "credential \(credential.id.prefix(12))… was revoked by the provider; delete it and bind a new one"
        )
    }
}
