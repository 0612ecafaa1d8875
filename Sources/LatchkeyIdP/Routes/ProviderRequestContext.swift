import Hummingbird
import NIOCore

/// The request context of the provider's routes: Hummingbird's basics plus the client's
/// address, which rate limiting keys on.
struct ProviderRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text (no port), for rate limiting and logs.
    var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
