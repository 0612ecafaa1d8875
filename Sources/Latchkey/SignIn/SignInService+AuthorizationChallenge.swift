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

/// Signing in over the authorization challenge endpoint (draft-ietf-oauth-first-party-apps-04
/// with Latchkey's WebAuthn profile, docs/PROTOCOL.md section 8): the authorization request
/// posted, the provider's request options signed, the code redeemed at `/token` without a
/// redirect URI. With DPoP every request carries a proof of the credential's DPoP key, which
/// binds the session, the code and the tokens (§9.5.1, §9.6.1).
extension SignInService {
    /// Tokens from the challenge endpoint, and the credential that signed; nil when the
    /// provider's discovery names no such endpoint. `requested` signs; the user name of
    /// `named` (the credential the caller asked for, when it did) goes with the first
    /// request as `login_hint` (OIDC Core §3.1.2.1).
    func challengeSignIn(
        _ flow: FlowContext, session: ProviderSession, scopes: [String], credential requested: String?, hinting named: String?, dpop: DPoPSigner?,
        listed: [SoftwareAuthenticator.Credential]? = nil, resource: String? = nil
    ) async throws -> (TokenSet, Credential)? {
        let client = session.client
        let provider = session.provider
        guard let endpoint = try await client.metadata().authorizationChallengeEndpoint else { return nil }
        let pkce = try PKCE.generate()
        let hint = try named.flatMap { id in
            try (listed ?? SoftwareAuthenticator.credentials(in: authenticator.vault.entries())).lazy.map(Credential.init).first { $0.id == id }?.user.name
        }
        let first = AuthorizationChallengeRequest(
            clientID: client.configuration.clientID, scope: scopes.joined(separator: " "), codeChallenge: pkce.challenge,
            codeChallengeMethod: PKCE.challengeMethod, loginHint: hint, resource: resource
        )
        let asked = try await postChallenge(endpoint, first, dpop: dpop)
        guard asked.status == 403, let challenge = try? JSONDecoder().decode(AuthorizationChallengeExchange.InsufficientAuthorization.self, from: asked.body),
              challenge.error == OAuthErrorCode.insufficientAuthorization.rawValue, challenge.authSession.utf8.count <= 16 * 1024
        else {
            throw Self.challengeError(asked, what: "the authorization challenge endpoint")
        }
        let (chosen, assertion) = try await assertion(for: challenge.webauthn, requested: requested, provider: provider, flow: flow, listed: listed)
        let second = AuthorizationChallengeRequest(
            clientID: client.configuration.clientID, authSession: challenge.authSession,
            webauthnResponse: String(decoding: try assertion.json(), as: UTF8.self)
        )
        let answered = try await credentialStore.revocationAware(chosen) {
            let reply = try await postChallenge(endpoint, second, dpop: dpop)
            guard reply.status == 200, let code = try? JSONDecoder().decode(AuthorizationChallengeExchange.AuthorizationCode.self, from: reply.body) else {
                throw Self.challengeError(reply, what: "the assertion")
            }
            return code
        }
        if chosen.state == .pending { _ = credentialStore.markActive(chosen, logger: flow.logger) }
        flow.emit(.codeReceived)
        let tokens = try await client.exchange(code: answered.authorizationCode, codeVerifier: pkce.verifier, redirectURI: nil, nonce: nil, resource: resource, dpop: dpop)
        return (tokens, chosen)
    }

    /// One form POST to the challenge endpoint (only https, or http to loopback; nothing
    /// over 64 KiB back), with a fresh DPoP proof (and the nonce dance) when bound.
    private func postChallenge(_ endpoint: URL, _ request: AuthorizationChallengeRequest, dpop: DPoPSigner?) async throws -> TransportResponse {
        let make: @Sendable (DPoPSigner?) throws -> TransportRequest = { signer in
            var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
            if let signer { headers.merge(try signer.headers(method: HTTPMethod.post, url: endpoint)) { $1 } }
            return TransportRequest(method: HTTPMethod.post, url: endpoint, headers: headers, body: FormEncoding.encode(request.formItems))
        }
        try TransportPolicy.check(endpoint)
        let response = if let dpop { try await dpop.send(through: transport) { try make($0) } } else { try await transport.send(try make(nil)) }
        guard response.body.count <= 64 * 1024 else { throw LatchkeyError.malformedResponse(reason: "the authorization challenge endpoint answered over 64 KiB") }
        return response
    }

    /// A refusal of the challenge endpoint as a typed error, the provider's words kept.
    private static func challengeError(_ response: TransportResponse, what: String) -> LatchkeyError {
        let answer = try? JSONDecoder().decode(ErrorResponse.self, from: response.body)
        return ProviderConversation.providerError(status: response.status, answer: answer)
    }
}
