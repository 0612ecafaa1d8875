import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// One HTTP/1.1 listener of the provider (the public one, or the admin one): SwiftNIO's
/// bootstrap with a pipeline set up per connection as it is accepted, ending in
/// ``HTTPConnectionHandler``, which hands each request to Hummingbird's router.
///
/// Hummingbird's own server takes each accepted connection through an async sequence to a
/// task on the cooperative pool, and every request and answer through an `NIOAsyncChannel`;
/// a connection opened for a single request (the command-line client's way) paid two
/// thread switches and that machinery before any work of its own. Measured beside a
/// provider written in Go, the same four bare requests cost Latchkey 3.3 to 4 times the
/// peer's CPU (docs/PERFORMANCE.md, "A Go peer"). Here an accepted connection is set up on
/// its event loop and each request runs on a task that prefers that loop.
///
/// What Hummingbird's server did that this one keeps: the header limits, the idle timeout,
/// the body deadline, pipelined requests answered in order,
/// half-closed connections, and a graceful shutdown that stops accepting, lets each
/// connection finish the answer it is writing, and returns once all are closed.
final class ProviderHTTPServer: Service {
    /// The `Server` field of every answer (RFC 9110 §10.2.4), and Hummingbird's name for
    /// the application.
    static let serverName = "Latchkey"

    struct Limits: Sendable {
        var idleTimeout: TimeAmount
        var bodyTimeout: TimeAmount
        var maximumHeaderBytes: Int
        var maximumHeaderFields: Int
        var maximumBodySize: Int
    }

    private let host: String
    private let port: Int
    private let limits: Limits
    private let eventLoopGroup: any EventLoopGroup
    private let respond: HTTPConnectionHandler.Respond
    private let prelude: @Sendable () async throws -> Void
    private let onServerRunning: @Sendable (any Channel) async -> Void
    private let logger: Logger

    init(
        host: String, port: Int, limits: Limits, eventLoopGroup: any EventLoopGroup, logger: Logger,
        prelude: @escaping @Sendable () async throws -> Void = {},
        onServerRunning: @escaping @Sendable (any Channel) async -> Void,
        respond: @escaping HTTPConnectionHandler.Respond
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.prelude = prelude
        self.onServerRunning = onServerRunning
        self.respond = respond
    }

    /// Hummingbird's router as the responder, with what Hummingbird's application adds to
    /// every answer: a request id in the logger's metadata (`context.id`, `X-Request-Id`),
    /// 500 for an error no middleware answered, `Date` and `Server`.
    static func respond<Responder: HTTPResponder>(with responder: Responder, logger: Logger, serverName: String) -> HTTPConnectionHandler.Respond
    where Responder.Context == ProviderRequestContext {
        { request, channel in
            var logger = logger
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            let context = ProviderRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch {
                logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = HTTPDate.now
            response.headers[.server] = serverName
            return response
        }
    }

    func run() async throws {
        try await prelude()
        let connections = Connections()
        let limits = limits, respond = respond
        let decoderLimits = Self.decoderLimits(limits)
        let server = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.setUp(channel, limits: limits, decoderLimits: decoderLimits, respond: respond)
                    connections.add(channel)
                }
            }
            .bind(host: host, port: port)
            .get()
        logger.info("Server started and listening on \(host):\(server.localAddress?.port ?? port)")
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await onServerRunning(server)
                try? await server.closeFuture.get()
            } onGracefulShutdown: {
                // Accept no more; each connection ends after the answer it is writing.
                server.close(promise: nil)
                connections.quiesce()
            }
        } onCancel: {
            server.close(promise: nil)
            connections.closeAll()
        }
        await connections.closed()
    }

    /// The parser's limits: the configured header size and count.
    private static func decoderLimits(_ limits: Limits) -> NIOHTTPDecoderLimitConfiguration {
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.maximumHeaderBytes
        decoderLimits.maxHeaderListSize = limits.maximumHeaderBytes
        decoderLimits.maxHeaderFieldCount = limits.maximumHeaderFields
        return decoderLimits
    }

    /// A connection's pipeline: NIO's HTTP/1.1 request parser (llhttp, under the header
    /// limits), then ``HTTPConnectionHandler`` for everything else.
    private static func setUp(
        _ channel: any Channel, limits: Limits, decoderLimits: NIOHTTPDecoderLimitConfiguration, respond: @escaping HTTPConnectionHandler.Respond
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: decoderLimits)))
        try pipeline.addHandler(HTTPConnectionHandler(limits: limits, respond: respond))
    }
}

/// The listener's open connections, for a graceful shutdown: each is told to quiesce (it
/// closes once its answer in progress is written, or at once when idle), and the server
/// returns when the last one has closed.
private final class Connections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var quiescing = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func add(_ channel: any Channel) {
        let quiescing = state.withLock { state in
            state.open[ObjectIdentifier(channel)] = channel
            return state.quiescing
        }
        channel.closeFuture.whenComplete { _ in self.remove(channel) }
        if quiescing { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }

    private func remove(_ channel: any Channel) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.open[ObjectIdentifier(channel)] = nil
            guard state.open.isEmpty, state.quiescing else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Tells each open connection, once, to quiesce: an idle one closes at once, a busy
    /// one after the answer it is making (``HTTPConnectionHandler``).
    func quiesce() {
        let open = state.withLock { state -> [any Channel] in
            guard !state.quiescing else { return [] }
            state.quiescing = true
            return Array(state.open.values)
        }
        for channel in open { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }

    func closeAll() {
        let open = state.withLock { state in
            state.quiescing = true
            return Array(state.open.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    /// Returns once every connection has closed, after ``quiesce()`` or ``closeAll()``.
    func closed() async {
        quiesce()
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                guard !state.open.isEmpty else { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
