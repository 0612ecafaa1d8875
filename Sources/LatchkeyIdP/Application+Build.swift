public import Foundation
public import Hummingbird
import LatchkeyWebAuthn
import Logging

/// The reference identity provider as a Hummingbird application. Tests build it, run it on
/// 127.0.0.1 port 0 in-process and learn the port from `onServerRunning`.
///
/// - Parameters:
///   - configuration: the provider's settings.
///   - onServerRunning: called with the issuer URL once the server listens.
public func buildApplication(
    configuration: ProviderConfiguration,
    onServerRunning: @escaping @Sendable (URL) async -> Void = { _ in }
) throws -> some ApplicationProtocol {
    let state = try ProviderState(configuration: configuration)
    let limiter = RateLimiter(limit: configuration.rateLimitPerMinute)
    let router = Router(context: ProviderRequestContext.self)
    router.middlewares.add(ProviderErrorMiddleware())
    router.middlewares.add(RateLimitMiddleware(limiter: limiter))
    DiscoveryRoutes.add(to: router, state: state)
    AdminRoutes.add(to: router, state: state, adminToken: configuration.adminToken)
    BindRoutes.add(to: router, state: state)
    AuthorizationRoutes.add(to: router, state: state)
    TokenRoutes.add(to: router, state: state)
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Latchkey"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let issuer = configuration.issuer ?? URL(string: "http://\(configuration.host):\(port)") ?? URL(fileURLWithPath: "/")
            await state.setIssuer(issuer)
            await onServerRunning(issuer)
        },
        logger: {
            var logger = Logger(label: "latchkey-idp")
            logger.logLevel = configuration.logLevel
            return logger
        }()
    )
}
