import Foundation
import Hummingbird
import LatchkeyProtocol

/// Dynamic client registration (RFC 7591 §3) and a registration's own URI (RFC 7592 §2:
/// read and delete with its registration access token); ``DynamicRegistrations``.
enum RegistrationRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        let registrations = DynamicRegistrations(
            context: provider.context, limiter: RateLimiter(limit: max(provider.context.configuration.clientRegistration.perAddressPerMinute, 1))
        )
        router.post(RouterPath(ProtocolPath.registration)) { request, context in
            let answer = try await registrations.register(
                try await HTTPSupport.body(request), token: HTTPSupport.bearerToken(request), requesterKey: context.limitKey
            )
            var response = HTTPSupport.json(data: answer)
            response.status = .created
            response.headers[.cacheControl] = "no-store"
            return response
        }
        router.get("\(ProtocolPath.registration)/:client") { request, context in
            var response = HTTPSupport.json(data: try await registrations.read(try context.parameters.require("client"), token: HTTPSupport.bearerToken(request)))
            response.headers[.cacheControl] = "no-store"
            return response
        }
        router.delete("\(ProtocolPath.registration)/:client") { request, context in
            try await registrations.delete(try context.parameters.require("client"), token: HTTPSupport.bearerToken(request))
            return Response(status: .noContent)
        }
    }
}
