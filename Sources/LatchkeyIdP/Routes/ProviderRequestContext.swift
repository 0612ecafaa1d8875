import Hummingbird
import NIOCore

/// The request context of the provider's routes: Hummingbird's basics plus the client's
/// address, which rate limiting keys on.
struct ProviderRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The connection's event loop: timers a request needs (the body deadline) are
    /// scheduled there rather than on the concurrency runtime's timer thread.
    let eventLoop: any EventLoop
    /// The client behind a trusted proxy, set by ``ClientAddressMiddleware``.
    var forwardedClient: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        eventLoop = source.channel.eventLoop
    }

    /// The client's IP address as text (no port), for rate limiting and logs: the peer's,
    /// or, behind a trusted proxy, the one it forwarded.
    var clientAddress: String {
        forwardedClient ?? peerAddress
    }

    /// What per-address limits count under: the client address, or its IPv6 /64.
    var limitKey: String {
        IPNetwork.limitKey(for: clientAddress)
    }

    /// The address of the connection's other end.
    var peerAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
