import Foundation
import Hummingbird
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// `POST /authorize-challenge` (draft-ietf-oauth-first-party-apps-04 §4.1, §5): JSON out,
/// `Cache-Control: no-store`; `403` for `insufficient_authorization` (§5.2.2.1), `200` with
/// the code (docs/PROTOCOL.md section 8).
enum AuthorizationChallengeRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.post(RouterPath(ProtocolPath.authorizationChallenge)) { request, context in
            let form = try await HTTPSupport.form(request)
            // §4.1: a client that authenticates at /token authenticates here too.
            let client = try await provider.clientAuthenticator.authenticate(
                ClientAuthenticationParameters(form: form), endpoint: provider.context.url(ProtocolPath.authorizationChallenge)
            )
            let answer = try await provider.challenges.answer(
                AuthorizationChallengeRequest(form: form), client: client, dpopProofs: HTTPSupport.dpopProofs(request)
            )
            switch answer {
            case .insufficientAuthorization(let challenge):
                return try TokenRoutes.withNonce(HTTPSupport.json(data: challenge.encodedJSON, status: .forbidden), provider)
            case .code(let code):
                provider.context.metrics.signedIn()
                context.logger.info("authorization challenge completed", metadata: ["client": .string(client.id)])
                return try TokenRoutes.withNonce(HTTPSupport.json(data: code.encodedJSON), provider)
            }
        }
    }
}
