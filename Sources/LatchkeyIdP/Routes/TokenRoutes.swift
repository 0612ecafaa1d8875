import Foundation
import Hummingbird
import Logging

/// The token endpoint (RFC 6749 §3.2), userinfo (OIDC Core §5.3) and revocation (RFC 7009).
enum TokenRoutes {
    static func add(to router: Router<ProviderRequestContext>, state: ProviderState) {
        router.post("token") { request, context in
            let form = try await HTTPSupport.form(request)
            context.logger.info("token request", metadata: ["grant": .string(form["grant_type"] ?? "-"), "client": .string(form["client_id"] ?? "-")])
            return HTTPSupport.json(data: try await state.token(form, clientID: form["client_id"]))
        }
        router.get("userinfo") { request, _ in
            guard let token = HTTPSupport.bearerToken(request) else { throw ProviderError.unauthorized }
            return HTTPSupport.json(data: try await state.userInfo(accessToken: token))
        }
        router.post("revoke") { request, _ in
            if let token = try await HTTPSupport.form(request)["token"] { await state.revoke(token) }
            return Response(status: .ok)
        }
    }
}
