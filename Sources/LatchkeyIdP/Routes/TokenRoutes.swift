import Foundation
import Hummingbird
import LatchkeyProtocol
import Logging
import LatchkeyOAuth

/// The token endpoint (RFC 6749 §3.2), userinfo (OIDC Core §5.3) and revocation (RFC 7009).
enum TokenRoutes {
    /// The current `DPoP-Nonce` on a response, when nonces are required (RFC 9449 §8.2).
    static func withNonce(_ response: Response, _ provider: Provider) throws -> Response {
        var response = response
        if let nonce = try provider.tokens.dpop.nonceHeader(now: ProviderClock.now) { response.headers[.init(DPoPProof.nonceHeaderName)!] = nonce }
        return response
    }

    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.post(RouterPath(ProtocolPath.token)) { request, context in
            let form = try await HTTPSupport.form(request)
            let tokenRequest = TokenRequest(form: form)
            let authentication = ClientAuthenticationParameters(form: form)
            context.logger.info("token request", metadata: [
                "grant": .string(tokenRequest.grantType?.rawValue ?? "-"), "client": .string(authentication.clientID ?? "-"),
            ])
            let client = try await provider.clientAuthenticator.authenticate(authentication, endpoint: provider.context.url(ProtocolPath.token))
            let proofs = HTTPSupport.dpopProofs(request)
            let response = HTTPSupport.json(data: try await provider.tokens.token(tokenRequest, client: client, dpopProofs: proofs))
            return try withNonce(response, provider)
        }
        router.get(RouterPath(ProtocolPath.userInfo)) { request, _ in
            guard let presentation = HTTPSupport.accessToken(request) else { throw ProviderError.bearerRequired }
            return try withNonce(HTTPSupport.json(data: try await provider.tokens.userInfo(presentation)), provider)
        }
        router.post(RouterPath(ProtocolPath.introspection)) { request, _ in
            // The body first: an answer sent before it is read leaves the connection
            // waiting on it. Then RFC 7662 §2.1: only a resource server with its credential may ask.
            let introspection = TokenIntrospectionRequest(form: try await HTTPSupport.form(request))
            guard let caller = try await provider.resourceServers.authenticate(request.headers[.authorization]) else {
                // No `WWW-Authenticate: Basic` (RFC 7662 does not ask for one): Foundation's
                // URLSession on Linux stalls on a Basic challenge it has no credential for,
                // and resource servers written with it would hang instead of reading the 401.
                throw ProviderError.invalidClient("introspection needs a resource server's credential (HTTP Basic)")
            }
            return HTTPSupport.json(data: try await provider.introspection.introspect(introspection.token, for: caller))
        }
        router.post(RouterPath(ProtocolPath.revocation)) { request, _ in
            let form = try await HTTPSupport.form(request)
            let revocation = TokenRevocationRequest(form: form)
            // RFC 7009 §2.1: the client authenticates (a public client names itself by
            // client_id) and may revoke only its own tokens; an unknown client is refused,
            // and another client's token is left alone with the same 200.
            let client = try await provider.clientAuthenticator.authenticate(
                ClientAuthenticationParameters(form: form), endpoint: provider.context.url(ProtocolPath.revocation)
            )
            if let token = revocation.token { try await provider.tokens.revoke(token, clientID: client.id) }
            return Response(status: .ok)
        }
    }
}
