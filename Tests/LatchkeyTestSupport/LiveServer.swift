public import Foundation
public import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird server on a free loopback port for the length of `body`, then stopped
/// gracefully: cancelling NIO's async server with a connection accepted but not yet
/// served traps (apple/swift-nio#2637), so it is shut down the way `withReferenceProvider`
/// shuts the provider down.
public enum LiveServer {
    public static func run<Result: Sendable>(
        _ router: Router<BasicRequestContext>,
        label: String = "test-server",
        _ body: @escaping @Sendable (URL) async throws -> Result
    ) async throws -> Result {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger
        )
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { continuation.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0, let url = URL(string: "http://127.0.0.1:\(port)") else {
                // The server ended before it listened: its own error says why.
                try await group.waitForAll()
                throw TestSupportError("\(label) did not start listening")
            }
            let outcome: Swift.Result<Result, any Error>
            do {
                outcome = .success(try await body(url))
            } catch {
                outcome = .failure(error)
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try outcome.get()
        }
    }
}
