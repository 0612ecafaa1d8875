import Foundation
import Hummingbird
import Logging
import LatchkeyProtocol
import LatchkeyWebAuthn
import LatchkeyOAuth

/// `/authorize` (RFC 6749 §4.1.1, PKCE S256 required) and the authenticate endpoint:
/// request options out, an assertion in, a redirect with code, state and iss back
/// (docs/PROTOCOL.md section 3). A browser gets the sign-in page instead of JSON
/// (section 9), which posts to the same endpoint.
enum AuthorizationRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.get(RouterPath(ProtocolPath.authorization)) { request, context in
            if PageRoutes.wantsPage(request) {
                return await ErrorPage.rendering(provider.context, logger: context.logger) {
                    let parameters = try AuthorizationRequestParameters(form: HTTPSupport.query(request))
                    let session = try await provider.signIns.start(parameters)
                    let (options, clientID) = try await provider.signIns.options(session: session)
                    let client = try await ClientRegistry(context: provider.context).client(clientID)
                    return try SignInPage.page(
                        session: session, options: options, clientName: client?.displayName(redirectURI: parameters.redirectURI) ?? clientID, loginHint: parameters.loginHint, context: provider.context
                    )
                }
            }
            let session = try await provider.signIns.start(AuthorizationRequestParameters(form: HTTPSupport.query(request)))
            let authenticateURL = provider.context.urlText("\(ProtocolPath.authenticate)/\(session)")
            if request.headers[.accept]?.contains(ProtocolPath.jsonMediaType) == true {
                return HTTPSupport.json(data: SignInExchange.Started(authenticateURL: authenticateURL).encodedJSON)
            }
            return Response(status: .found, headers: [.location: authenticateURL])
        }
        router.get("v1/authenticate/:session") { _, context in
            let session = try context.parameters.require("session")
            let (options, clientID) = try await provider.signIns.options(session: session)
            let submit = provider.context.urlText("\(ProtocolPath.authenticate)/\(session)")
            return HTTPSupport.json(data: SignInExchange.Challenge(publicKey: options, submit: submit, application: clientID).encodedJSON)
        }
        router.post("v1/authenticate/:session") { request, context in
            let session = try context.parameters.require("session")
            try PageTicket.check(request, .signIn, binding: session, context: provider.context)
            let outcome: SignIns.Outcome
            let response: AuthenticationResponseJSON
            do {
                response = try await TransferRoutes.assertion(request)
                outcome = try await provider.signIns.complete(session: session, response: response)
            } catch let error as ProviderError {
                provider.context.metrics.signInFailed(error.code.rawValue)
                throw error
            }
            context.logger.info("authenticated", metadata: ["credential": .string(String(response.id.prefix(8)))])
            switch outcome {
            case .redirect(let redirect):
                provider.context.metrics.signedIn()
                return HTTPSupport.json(data: SignInExchange.Completed(redirectURL: redirect.absoluteString).encodedJSON)
            case .consent(let prompt):
                return HTTPSupport.json(prompt)
            }
        }
        // A third-party client's consent, after the passkey (docs/PROTOCOL.md, "Consent
        // for third-party clients"): from the sign-in page only, for its own session.
        router.post("v1/authenticate/:session/consent") { request, context in
            let session = try context.parameters.require("session")
            try PageTicket.check(request, .signIn, binding: session, context: provider.context)
            let decision = try await HTTPSupport.decode(SignInExchange.ConsentDecision.self, from: request, expected: "a JSON object with ticket and decision")
            let redirect = try await Consents(context: provider.context, grants: provider.grants).decide(session: session, decision: decision)
            if decision.decision == .approve { provider.context.metrics.signedIn() }
            return HTTPSupport.json(SignInExchange.Completed(redirectURL: redirect.absoluteString))
        }
        // The sign-in page's Cancel: back to the client with access_denied.
        router.post("v1/authenticate/:session/cancel") { request, context in
            let session = try context.parameters.require("session")
            try PageTicket.check(request, .signIn, binding: session, context: provider.context)
            let redirect = try await provider.signIns.cancel(session: session)
            return HTTPSupport.json(SignInExchange.Completed(redirectURL: redirect.absoluteString))
        }
    }
}
