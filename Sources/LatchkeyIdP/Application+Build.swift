public import Foundation
public import Hummingbird
import HummingbirdCore
import NIOCore
import NIOPosix
import LatchkeyWebAuthn
import Logging
import ServiceLifecycle

/// The reference identity provider as a Hummingbird application. Tests build it, run it on
/// 127.0.0.1 port 0 in-process and learn the port from `onServerRunning`.
///
/// The store is opened here (a SQLite file is checked and migrated now; PostgreSQL is
/// migrated before the server listens, or on the first request if it cannot be reached
/// yet: requests answer 503 until it can).
///
/// With ``ProviderConfiguration/adminListener``, the admin API, `/metrics` and the health
/// probes are served by a second application on that address, run as a service of the
/// public one, and the public listener answers 404 for them (docs/ARCHITECTURE.md,
/// "Operations"). Without it they share the public listener, and a warning is logged
/// when that listener is not on loopback.
///
/// - Parameters:
///   - configuration: the provider's settings.
///   - onServerRunning: called with the issuer URL once the server listens.
///   - onAdminServerRunning: called with the admin listener's URL once it listens.
public func buildApplication(
    configuration: ProviderConfiguration,
    onServerRunning: @escaping @Sendable (URL) async -> Void = { _ in },
    onAdminServerRunning: @escaping @Sendable (URL) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let logger = configuration.logger
    let store = try await configuration.clock.bound { try await ProviderStore.open(configuration, logger: logger) }
    let context = ProviderContext(configuration: configuration, database: store.database, storeKey: store.storeKey, logger: logger)
    if let path = configuration.auditJournalSocket {
        context.audit.attach(try AuditJournal(path: path))
    }
    let provider = Provider(context: context)
    let authorization = AdminAuthorization(token: configuration.adminToken, audit: context.audit, database: context.database)
    let router = ProviderRouters.router(provider)
    // The public routes, behind the rate limit, which sees the route the router matched.
    let routes = RateLimitMiddleware.group(on: router, provider: provider)
    DiscoveryRoutes.add(to: routes, provider: provider)
    RegistrationRoutes.add(to: routes, provider: provider)
    BindRoutes.add(to: routes, provider: provider)
    AuthorizationRoutes.add(to: routes, provider: provider)
    TokenRoutes.add(to: routes, provider: provider)
    DeviceRoutes.add(to: routes, provider: provider)
    AuthorizationChallengeRoutes.add(to: routes, provider: provider)
    TransferRoutes(provider: provider).add(to: routes)
    EnrollmentRoutes.add(to: routes, provider: provider)
    PageRoutes.add(to: routes, provider: provider)
    AttestationRoutes.add(to: routes, provider: provider)
    SSHRoutes.add(to: routes, provider: provider)
    HostRoutes.add(to: routes, provider: provider)
    // A service group stops its services in reverse order, each after the one behind it
    // has ended: the store's closer comes first so it closes the store last, once the
    // server, the mail delivery, the audit sealing and the housekeeping are done with it.
    var services: [any Service] = [
        StoreCloser(database: store.database), Housekeeping(provider: provider, interval: .seconds(60)), AuditSealing(context: context, interval: configuration.auditSealInterval),
    ]
    if let mail = configuration.mail {
        services.append(MailDelivery(context: context, transport: try mail.makeTransport(), from: mail.from))
    }
    if let listener = configuration.adminListener {
        let adminRouter = ProviderRouters.router(provider)
        ProviderRouters.addOperatorRoutes(to: adminRouter, provider: provider, authorization: authorization, metricsOpen: true)
        services.append(ProviderRouters.server(
            configuration, host: listener.host, port: listener.port, responder: adminRouter.buildResponder(), logger: logger,
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? listener.port
                let host = listener.host.contains(":") ? "[\(listener.host)]" : listener.host
                await onAdminServerRunning(URL(string: "http://\(host):\(port)") ?? URL(fileURLWithPath: "/"))
            }
        ))
    } else {
        ProviderRouters.addOperatorRoutes(to: router, provider: provider, authorization: authorization, metricsOpen: false)
        if !ProviderConfiguration.Listener(host: configuration.host, port: configuration.port).isLoopback {
            logger.warning("the admin API shares the public listener, which is not on loopback; give it its own with --admin-listen 127.0.0.1:PORT", metadata: [
                "host": .string(configuration.host),
            ])
        }
    }
    let startLogger = logger
    let responder = router.buildResponder()
    let listener = ProviderRouters.server(
        configuration, host: configuration.host, port: configuration.port, responder: responder, logger: logger,
        prelude: {
            do {
                try await context.prepare()
            } catch let error as StoreError where error.code == .unavailable {
                // Serve anyway: requests answer 503 until the database is back.
                startLogger.warning("the store is unreachable; answering 503 until it is back", metadata: ["error": .string(error.reason)])
            }
        },
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let issuer = configuration.issuer ?? URL(string: "http://\(configuration.host):\(port)") ?? URL(fileURLWithPath: "/")
            context.setIssuer(issuer)
            await onServerRunning(issuer)
        }
    )
    return ProviderApplication(responder: responder, logger: logger, backgroundServices: services, listener: listener)
}

/// What both listeners share: middleware, the HTTP limits, the operator's routes.
enum ProviderRouters {
    /// A router with the provider's middleware: metrics outermost (so it sees the status
    /// errors become), the request id header, errors as JSON, the client address,
    /// readiness, body deadlines.
    static func router(_ provider: Provider) -> Router<ProviderRequestContext> {
        let configuration = provider.context.configuration
        let router = Router(context: ProviderRequestContext.self)
        if !configuration.clock.isSystem { router.middlewares.add(ProviderClockMiddleware(clock: configuration.clock)) }
        router.middlewares.add(MetricsMiddleware(metrics: provider.context.metrics))
        router.middlewares.add(RequestIDMiddleware())
        router.middlewares.add(ProviderErrorMiddleware())
        if !configuration.trustedProxies.isEmpty {
            router.middlewares.add(ClientAddressMiddleware(trusted: configuration.trustedProxies, header: configuration.forwardedHeader))
        }
        router.middlewares.add(AuditRequesterMiddleware())
        router.middlewares.add(ReadinessMiddleware(context: provider.context))
        router.middlewares.add(RequestBodyMiddleware(timeout: .milliseconds(Int64(configuration.bodyTimeout * 1000))))
        return router
    }

    /// The admin API, `/metrics` and the health probes.
    static func addOperatorRoutes(to router: Router<ProviderRequestContext>, provider: Provider, authorization: AdminAuthorization, metricsOpen: Bool) {
        HealthRoutes.add(to: router, provider: provider)
        AdminRoutes(provider: provider, authorization: authorization).add(to: router)
        MetricsRoutes.add(to: router, provider: provider, authorization: metricsOpen ? nil : authorization)
    }

    /// A listener (``ProviderHTTPServer``) answering with `responder`, under the
    /// configured idle timeout, body deadline and header limits.
    static func server(
        _ configuration: ProviderConfiguration, host: String, port: Int, responder: RouterResponder<ProviderRequestContext>, logger: Logger,
        prelude: @escaping @Sendable () async throws -> Void = {}, onServerRunning: @escaping @Sendable (any Channel) async -> Void
    ) -> ProviderHTTPServer {
        let limits = ProviderHTTPServer.Limits(
            idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)),
            bodyTimeout: .milliseconds(Int64(configuration.bodyTimeout * 1000)),
            maximumHeaderBytes: configuration.maximumHeaderBytes,
            maximumHeaderFields: configuration.maximumHeaderFields,
            maximumBodySize: HTTPSupport.maximumBodySize
        )
        return ProviderHTTPServer(
            host: host, port: port, limits: limits, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            prelude: prelude, onServerRunning: onServerRunning,
            respond: ProviderHTTPServer.respond(with: responder, logger: logger, serverName: ProviderHTTPServer.serverName)
        )
    }
}

/// Closes the store's connection when the provider stops.
private struct StoreCloser: Service {
    let database: any ProviderDatabase

    func run() async throws {
        try? await gracefulShutdown()
        await database.close()
    }
}

/// Runs a reference provider for as long as `body` runs, then stops it: the in-process
/// provider of the tests, the benchmark and `latchkey demo`. `body` gets the issuer URL
/// once the server listens (with port 0, on the port the system picked).
///
/// The server is stopped by a graceful shutdown, not by cancelling its task: cancelling
/// NIO's async server while a connection is accepted but not yet served traps
/// (apple/swift-nio#2637), and a client's last request may be in flight as `body` ends.
///
/// Throws the server's own error if it stops before listening (a port in use, say).
public func withReferenceProvider<Result: Sendable>(
    configuration: ProviderConfiguration,
    _ body: (URL) async throws -> Result
) async throws -> Result {
    let (issuers, continuation) = AsyncStream<URL>.makeStream()
    let app = try await buildApplication(configuration: configuration) { issuer in
        continuation.yield(issuer)
        continuation.finish()
    }
    let logger = configuration.logger
    let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { continuation.finish() }
            try await services.run()
        }
        var iterator = issuers.makeAsyncIterator()
        guard let issuer = await iterator.next() else {
            // The server ended before it listened: its error says why.
            try await group.waitForAll()
            throw ReferenceProviderError(.stoppedBeforeListening, "the provider stopped before it was listening on \(configuration.host):\(configuration.port)")
        }
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body(issuer))
        } catch {
            result = .failure(error)
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        return try result.get()
    }
}
